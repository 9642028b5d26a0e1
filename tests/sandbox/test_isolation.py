"""The host never resolves a path the bot can change, limits hold for the whole sandbox (cgroups)
and nothing runs between turns, and a seccomp allow-list is loaded.

Bots go straight to the bwrap backend (no gate), as in test_attacks.py.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import os
import socket
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.botclient import HttpBotConnection
from shared.config import Settings
from shared.sandbox import SandboxError
from shared.sandbox.backends import BwrapBackend, SandboxedBot
from shared.sandbox.cgroups import detect
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.seccomp import REFUSED_EXAMPLES, host_table
from shared.sandbox.turns import FrozenBetweenTurns
from tests.support.sandbox import StartHosted, ask, requires_bwrap

pytestmark = requires_bwrap
requires_cgroups = pytest.mark.skipif(detect() is None, reason="no usable cgroup hierarchy here")


def bot(body: str, prelude: str = "") -> str:
    return (
        "import os, sys, time, json, socket, threading\n"
        + textwrap.dedent(prelude)
        + "\ndef decide(observation):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )


class TrapServer:
    """A Unix socket on the host that records every connection made to it."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="trap-")
        self.path = os.path.join(self.dir, "trap.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        os.chmod(self.dir, 0o700)
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 29\r\n\r\n{"action": "TRAPPED", "x": 1}')
            conn.close()

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self.sock.close()
        os.unlink(self.path)
        os.rmdir(self.dir)


@pytest.fixture
def trap() -> Iterator[TrapServer]:
    server = TrapServer()
    yield server
    server.close()


PLANT = """
def plant(target):
    done = []
    for path in ("/tmp/bot.sock", "/tmp/run/bot.sock", "/tmp/run", "/tmp/arena.sock"):
        try:
            if os.path.islink(path) or os.path.lexists(path) and not os.path.isdir(path):
                os.unlink(path)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(target, path)
            done.append(path)
        except OSError as exc:
            done.append(repr(exc))
    return done
"""


@pytest.mark.parametrize("when", ["during_a_turn", "before_the_server_starts"])
def test_socket_symlinks_planted_by_the_bot_are_never_followed(
    hosted: StartHosted, secret: str, trap: TrapServer, when: str
) -> None:
    if when == "during_a_turn":
        source = bot("return {'planted': plant(observation['target'])}", PLANT)
    else:
        source = bot("return {'planted': 'at import'}", PLANT + f"\nplant({trap.path!r})\n")
    attacker = hosted(source)
    assert attacker.start_error is None, attacker.start_error
    first = ask(attacker, secret, {"target": trap.path})
    assert isinstance(first, dict), first
    for _ in range(3):
        again = ask(attacker, secret, {"target": trap.path})
        assert again != "TRAPPED", again
        assert isinstance(again, dict), again
        assert attacker.health()
    assert trap.connections == 0, "the host's requests reached a socket the bot pointed them to"


def test_a_socket_bound_by_the_bot_gets_no_host_connection(hosted: StartHosted, secret: str) -> None:
    source = bot(
        """
        global OWN
        if observation.get("check"):
            OWN.setblocking(False)
            try:
                OWN.accept()
                return {"own": "CONNECTED"}
            except BlockingIOError:
                return {"own": "no connection"}
        for path in ("/tmp/bot.sock",):
            try:
                os.unlink(path)
            except OSError:
                pass
        OWN = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        OWN.bind("/tmp/bot.sock")
        OWN.listen(8)
        return {"own": "bound"}
        """,
        "OWN = None\n",
    )
    attacker = hosted(source)
    assert ask(attacker, secret) == {"own": "bound"}
    assert attacker.health()
    assert ask(attacker, secret, {"check": True}) == {"own": "no connection"}


def test_a_directory_swap_in_tmp_cannot_redirect_the_host(
    hosted: StartHosted, secret: str, trap: TrapServer
) -> None:
    source = bot(
        """
        out = list(os.listdir("/tmp"))
        if "target" not in observation:
            return {"tmp": out}
        os.makedirs("/tmp/swap", exist_ok=True)
        os.symlink(observation["target"], "/tmp/swap/bot.sock")
        for path in ("/tmp/bot.sock",):
            try:
                os.unlink(path)
            except OSError:
                pass
        try:
            os.rename("/tmp/swap", "/tmp/run")
        except OSError as exc:
            out.append(repr(exc))
        os.symlink("/tmp/run/bot.sock", "/tmp/bot.sock")
        return {"tmp": out}
        """
    )
    attacker = hosted(source)
    first = ask(attacker, secret, {"target": trap.path})
    assert isinstance(first, dict), first
    assert not any(name.endswith(".sock") for name in first["tmp"]), "the bot can see a socket path"
    assert isinstance(ask(attacker, secret), dict)
    assert trap.connections == 0


def test_the_host_socket_lives_where_only_the_host_can_write(hosted: StartHosted, secret: str) -> None:
    attacker = hosted(bot("return 1"))
    run_dir = Path(attacker.socket_path).parent
    assert not attacker.socket_path.startswith("/proc/"), attacker.socket_path
    assert run_dir.stat().st_uid == os.geteuid()
    assert run_dir.stat().st_mode & 0o077 == 0
    assert ask(attacker, secret) == 1


# -- cgroups ---------------------------------------------------------------------------------


@pytest.mark.slow
@requires_cgroups
def test_forked_children_together_cannot_exceed_the_memory_limit(hosted: StartHosted, secret: str) -> None:
    limits = SandboxLimits(memory_mb=256)
    source = bot(
        """
        children = []
        for _ in range(10):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                block = bytearray(100 * 1024 * 1024)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                os.write(w, b"1")
                time.sleep(60)
                os._exit(0)
            os.close(w)
            if os.read(r, 1) == b"1":
                children.append(pid)
        time.sleep(0.3)
        alive = [pid for pid in children if os.waitpid(pid, os.WNOHANG) == (0, 0)]
        return {"held_mb": len(alive) * 100}
        """
    )
    attacker = hosted(source, limits)
    outcome = ask(attacker, secret, timeout=30)
    if isinstance(outcome, dict):  # the OOM killer may also take the runner: then no answer
        assert outcome["held_mb"] <= limits.memory_mb, f"children held {outcome}"
    assert attacker.cgroup is not None
    assert attacker.cgroup.memory_peak_bytes() <= limits.memory_mb * 1024 * 1024


@requires_cgroups
def test_fork_bomb_is_capped_by_the_pids_cgroup(hosted: StartHosted, secret: str) -> None:
    limits = SandboxLimits(processes=16)
    source = bot(
        """
        n = 0
        try:
            for _ in range(200):
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                n += 1
        except OSError as exc:
            return {"forked": n, "error": repr(exc)}
        return {"forked": n, "error": None}
        """
    )
    attacker = hosted(source, limits)
    outcome = ask(attacker, secret, timeout=10)
    assert attacker.cgroup is not None
    assert len(attacker.cgroup.pids()) <= limits.processes
    if isinstance(outcome, dict):
        assert outcome["error"], outcome
        assert outcome["forked"] < limits.processes, outcome


def _tree_cpu_seconds(root: int) -> float:
    """CPU time (user + system) of `root` and all its descendants, from the host's /proc."""
    children: dict[int, list[int]] = {}
    stats: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        stats[pid] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, 0.0)
        todo += children.get(pid, [])
    return total


SPINNERS = """
if not STARTED:
    STARTED.append(1)
    def spin():
        while True:
            pass
    threading.Thread(target=spin, daemon=True).start()
    if os.fork() == 0:
        spin()
return {"spinning": True}
"""


@pytest.mark.slow
@requires_cgroups
def test_spinners_left_by_decide_get_no_cpu_between_turns(secret: str) -> None:
    sandbox = SandboxedBot(bot(SPINNERS, "STARTED = []\n"), secret=secret)
    sandbox.start()

    async def play() -> float:
        http = HttpBotConnection.over_unix_socket(sandbox.socket_path, secret, Settings())
        client = FrozenBetweenTurns(http, sandbox)
        try:
            await client.health(2.0)
            reply = await client.turn(
                match_id="m", game="test", player=0, turn=0, timeout_ms=2000, observation={}
            )
            assert reply.ok, reply
            await asyncio.sleep(0.2)
            before = _tree_cpu_seconds(sandbox.pid or 0)
            await asyncio.sleep(1.5)
            return _tree_cpu_seconds(sandbox.pid or 0) - before
        finally:
            await client.aclose()

    try:
        used = asyncio.run(play())
    finally:
        sandbox.close()
    assert used < 0.15, f"the bot's spinners used {used:.2f} s of CPU between turns"


@requires_cgroups
def test_freezing_also_stops_cgroup_cpu_accounting(hosted: StartHosted, secret: str) -> None:
    attacker = hosted(bot(SPINNERS, "STARTED = []\n"))
    assert ask(attacker, secret) == {"spinning": True}
    attacker.freeze()
    time.sleep(0.2)
    assert attacker.cgroup is not None
    before = attacker.cgroup.cpu_usage_s()
    time.sleep(1.0)
    assert attacker.cgroup.cpu_usage_s() - before < 0.05
    assert attacker.health(), "a health check thaws the sandbox for its duration"
    assert attacker.cgroup.frozen


@requires_cgroups
def test_the_cgroup_is_gone_after_close(secret: str) -> None:
    sandbox = SandboxedBot(bot("os.fork() and None\nreturn 1"), secret=secret)
    sandbox.start()
    assert sandbox.cgroup is not None
    assert sandbox.cgroup.exists()
    dirs = list(sandbox.cgroup.dirs.values())
    ask(sandbox, secret)
    sandbox.freeze()
    sandbox.close()
    assert not any(d.exists() for d in dirs), "a cgroup survived close()"
    support = detect()
    assert support is not None
    for parent in support.parents.values():
        leaked = [p.name for p in parent.iterdir() if p.name in {d.name for d in dirs}]
        assert not leaked, leaked


def test_without_cgroups_no_process_can_be_created(hosted: StartHosted, secret: str) -> None:
    backend = BwrapBackend(use_cgroups=False)
    source = bot(
        """
        out = {}
        try:
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            out["fork"] = "FORKED"
        except OSError as exc:
            out["fork"] = exc.errno
        box = []
        t = threading.Thread(target=lambda: box.append(1))
        t.start(); t.join()
        out["thread"] = box
        return out
        """
    )
    attacker = hosted(source, backend=backend)
    assert ask(attacker, secret) == {"fork": errno.EPERM, "thread": [1]}
    with pytest.raises(SandboxError, match="codingame"):
        SandboxedBot("print(1)", secret=secret, contract="codingame", game="podracing", backend=backend)


# -- seccomp ---------------------------------------------------------------------------------

REFUSED_ARGS = {
    "io_uring_setup": (16, 0),
    "userfaultfd": (0,),
    "keyctl": (0, 0),
    "add_key": (0, 0, 0, 0, 0),
    "request_key": (0, 0, 0, 0),
    "ptrace": (0, 0, 0, 0),
    "mount": (0, 0, 0, 0, 0),
    "umount2": (0, 0),
    "pivot_root": (0, 0),
    "bpf": (0, 0, 0),
    "perf_event_open": (0, 0, -1, -1, 0),
    "unshare": (0x10000000,),
    "setns": (0, 0),
    "kexec_load": (0, 0, 0, 0),
    "init_module": (0, 0, 0),
    "finit_module": (0, 0, 0),
    "delete_module": (0, 0),
    "process_vm_readv": (1, 0, 0, 0, 0, 0),
    "open_by_handle_at": (0, 0, 0),
    "chroot": (0,),
}
"""Arguments for some of seccomp.REFUSED_EXAMPLES; the others are called with none."""


def test_seccomp_filter_is_loaded_and_refuses_dangerous_calls(hosted: StartHosted, secret: str) -> None:
    table = host_table()
    calls = {name: [table[name], *REFUSED_ARGS.get(name, ())] for name in REFUSED_EXAMPLES if name in table}
    calls["clone(CLONE_NEWUSER)"] = [table["clone"], 0x10000000 | 17, 0, 0, 0, 0]
    calls["clone(CLONE_NEWNET)"] = [table["clone"], 0x40000000 | 17, 0, 0, 0, 0]
    calls["clone3"] = [table["clone3"], 0, 0]
    calls["personality(READ_IMPLIES_EXEC)"] = [table["personality"], 0x0400000]
    calls["socket(AF_NETLINK)"] = [table["socket"], 16, 3, 0]
    calls["socket(AF_PACKET)"] = [table["socket"], 17, 3, 0]
    source = bot(
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        out = {}
        with open("/proc/self/status") as handle:
            out["status"] = [l for l in handle.read().splitlines() if l.startswith("Seccomp")]
        for name, (nr, *args) in observation["calls"].items():
            ctypes.set_errno(0)
            result = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
            out[name] = [result, ctypes.get_errno()]
        out["personality(query)"] = libc.personality(0xFFFFFFFF)
        return out
        """
    )
    attacker = hosted(source)
    outcome = ask(attacker, secret, {"calls": calls})
    assert isinstance(outcome, dict), outcome
    assert "Seccomp:\t2" in outcome["status"], outcome["status"]
    for name in calls:
        expected = errno.ENOSYS if name == "clone3" else errno.EPERM
        assert outcome[name] == [-1, expected], f"{name}: {outcome[name]}"
    assert outcome["personality(query)"] >= 0
    assert attacker.health(), "the bot must keep answering after refused calls"


def test_socketpair_is_limited_to_unix_sockets(hosted: StartHosted, secret: str) -> None:
    """socketpair() takes an address family like socket() and reaches the same protocol code (and
    module autoloading), so the filter allows it for AF_UNIX only. Without that rule the kernel
    creates each socket and only then refuses to pair it (EOPNOTSUPP and the like)."""
    families = {
        "AF_INET": socket.AF_INET,
        "AF_INET6": socket.AF_INET6,
        "AF_NETLINK": socket.AF_NETLINK,
        "AF_PACKET": socket.AF_PACKET,
    }
    source = bot(
        """
        out = {}
        for name, family in observation["families"].items():
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW):
                try:
                    pair = socket.socketpair(family, kind)
                    out[f"{name}/{kind}"] = "CREATED"
                    for end in pair:
                        end.close()
                except OSError as exc:
                    out[f"{name}/{kind}"] = exc.errno
        left, right = socket.socketpair()
        left.sendall(b"ping")
        out["AF_UNIX"] = right.recv(4).decode()
        return out
        """
    )
    outcome = ask(hosted(source), secret, {"families": families})
    assert isinstance(outcome, dict), outcome
    assert outcome.pop("AF_UNIX") == "ping", "AF_UNIX socketpair (asyncio, multiprocessing) must work"
    refused = {name: result for name, result in outcome.items() if result != errno.EPERM}
    assert not refused, f"socketpair not refused by the filter: {refused}"


def test_host_can_run_the_ctypes_probe() -> None:
    """The probe above uses libc's syscall(); make sure it exists on this host."""
    assert ctypes.CDLL(None).syscall is not None
