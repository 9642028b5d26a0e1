"""Attack suite: hostile hosted bots, each trying one thing inside decide().

The static gate is bypassed on purpose (code goes straight to the sandbox backend), because the
sandbox is the boundary. Every attempt must fail while the bot keeps answering or dies harmlessly,
and the host (this test process) must be unharmed. Network attempts are connection attempts only,
to loopback or to an address that cannot be reached from inside the sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from shared.sandbox.limits import SandboxLimits
from tests.support.sandbox import StartHosted, ask, requires_bwrap

pytestmark = requires_bwrap
ROOT = Path(__file__).resolve().parents[2]


def bot(body: str) -> str:
    """Wrap an attack's statements in a decide(observation) that reports what happened."""
    return "import os, sys, time, json\n\ndef decide(observation):\n" + textwrap.indent(
        textwrap.dedent(body), "    "
    )


def test_network_is_unreachable(hosted: StartHosted, secret: str) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    host_port = listener.getsockname()[1]
    source = bot(
        """
        import socket
        out = {}
        for host, port in observation["targets"]:
            s = socket.socket()
            s.settimeout(3)
            started = time.monotonic()
            try:
                s.connect((host, port))
                out[f"{host}:{port}"] = ["CONNECTED", time.monotonic() - started]
            except OSError as exc:
                out[f"{host}:{port}"] = [repr(exc), time.monotonic() - started]
            finally:
                s.close()
        return out
        """
    )
    targets = [["127.0.0.1", 5432], ["127.0.0.1", 6379], ["127.0.0.1", host_port], ["1.1.1.1", 53]]
    attacker = hosted(source)
    outcome = ask(attacker, secret, {"targets": targets})
    try:
        assert isinstance(outcome, dict), f"the attack bot did not answer: {outcome}"
        for target, (result, elapsed) in outcome.items():
            assert result != "CONNECTED", f"{target}: the sandbox reached it"
            assert elapsed < 0.5, f"{target}: failed only after {elapsed:.2f}s ({result})"
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    print("network outcomes:", json.dumps(outcome))


def test_project_settings_and_host_files_are_invisible(hosted: StartHosted, secret: str) -> None:
    paths = [
        str(ROOT / "pyproject.toml"),
        str(ROOT / "shared" / "config.py"),
        str(ROOT / ".env"),
        str(ROOT / "shared" / "sandbox" / "backends.py"),
        "/etc/passwd",
        "/etc/shadow",
        "/root/.bashrc",
        "/work/shared/DESIGN.md",
        "/proc/1/root/etc/passwd",
    ]
    source = bot(
        """
        out = {"root": sorted(os.listdir("/")), "packages": sorted(os.listdir("/packages"))}
        for path in observation["paths"]:
            try:
                with open(path, "rb") as handle:
                    out[path] = "READ %d bytes" % len(handle.read())
            except OSError as exc:
                out[path] = repr(exc)
        return out
        """
    )
    outcome = ask(hosted(source), secret, {"paths": paths})
    assert isinstance(outcome, dict), outcome
    for path in paths:
        assert not outcome[path].startswith("READ"), f"{path}: {outcome[path]}"
    expected_root = {"arena", "bot", "dev", "etc", "lib", "lib64", "packages", "proc", "tmp", "usr", "opt"}
    assert set(outcome["root"]) <= expected_root, f"unexpected top-level entries: {outcome['root']}"
    # The packages bots may import, each bound by its own folder: not the site-packages around them.
    assert set(outcome["packages"]) <= {"numpy", "numpy.libs"}, outcome["packages"]


def test_environment_of_the_worker_is_not_inherited(
    hosted: StartHosted, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_FAKE_SECRET", "fake-s3cr3t-do-not-leak")
    source = bot(
        """
        out = {"environ": dict(os.environ)}
        for path in ("/proc/self/environ", "/proc/1/environ"):
            try:
                with open(path, "rb") as handle:
                    out[path] = handle.read().decode("latin-1")
            except OSError as exc:
                out[path] = repr(exc)
        return out
        """
    )
    outcome = ask(hosted(source), secret)
    assert isinstance(outcome, dict), outcome
    assert "fake-s3cr3t-do-not-leak" not in json.dumps(outcome), f"secret leaked: {outcome}"
    allowed = {
        "PATH",
        "LANG",
        "HOME",
        "PYTHONDONTWRITEBYTECODE",
        "PWD",
        "OPENBLAS_NUM_THREADS",
        "OMP_NUM_THREADS",
    }
    assert set(outcome["environ"]) <= allowed, outcome


def test_host_processes_are_invisible(hosted: StartHosted, secret: str) -> None:
    source = bot(
        """
        out = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/cmdline", "rb") as handle:
                        out[name] = handle.read().replace(b"\\0", b" ").decode()
                except OSError as exc:
                    out[name] = repr(exc)
        return out
        """
    )
    outcome = ask(hosted(source), secret)
    assert isinstance(outcome, dict), outcome
    assert len(outcome) <= 3, f"sees {len(outcome)} processes: {outcome}"
    assert str(os.getpid()) not in outcome or "pytest" not in outcome[str(os.getpid())]
    assert not any("pytest" in cmd for cmd in outcome.values()), outcome


def test_writes_outside_tmp_fail(hosted: StartHosted, secret: str) -> None:
    source = bot(
        """
        out = {}
        for path in observation["paths"]:
            try:
                with open(path, "w") as handle:
                    handle.write("x")
                out[path] = "WROTE"
            except OSError as exc:
                out[path] = repr(exc)
        return out
        """
    )
    paths = ["/x", "/usr/x", "/bot/x", "/bot/bot.py", "/arena/x", "/arena/hosted_runner.py", "/etc/x"]
    paths += ["/dev/x", "/dev/shm/x", "/proc/x", "/lib/x", "/run/x"]
    paths.append(str(ROOT / "pwned.txt"))
    outcome = ask(hosted(source), secret, {"paths": paths})
    assert isinstance(outcome, dict), outcome
    for path, result in outcome.items():
        assert result != "WROTE", f"{path} was writable"
    assert not (ROOT / "pwned.txt").exists()


def test_tmp_is_size_capped(hosted: StartHosted, secret: str) -> None:
    source = bot(
        """
        written, error, index = 0, None, 0
        chunk = b"x" * (256 * 1024)
        try:
            while written < 200 * 1024 * 1024:
                with open(f"/tmp/fill{index}", "wb") as handle:
                    for _ in range(3):
                        handle.write(chunk)
                        handle.flush()
                        written += len(chunk)
                index += 1
        except OSError as exc:
            error = repr(exc)
        return {"written": written, "error": error}
        """
    )
    attacker = hosted(source, SandboxLimits(tmp_size_mb=8))
    outcome = ask(attacker, secret, timeout=20)
    assert isinstance(outcome, dict), outcome
    assert outcome["error"], f"filled /tmp: {outcome}"
    assert outcome["written"] <= 9 * 1024 * 1024, f"filled /tmp: {outcome}"
    assert attacker.health(), "the bot stopped answering after filling /tmp"


def test_file_size_is_capped(hosted: StartHosted, secret: str) -> None:
    source = bot(
        """
        written = 0
        try:
            with open("/tmp/big", "wb") as handle:
                while written < 8 * 1024 * 1024:
                    handle.write(b"y" * 65536)
                    handle.flush()
                    written += 65536
        except OSError as exc:
            return {"written": written, "error": repr(exc)}
        return {"written": written, "error": None}
        """
    )
    outcome = ask(hosted(source), secret, timeout=20)
    assert isinstance(outcome, dict), f"wrote a file past the 1 MB cap: {outcome}"
    assert outcome["error"], f"wrote a file past the 1 MB cap: {outcome}"
    assert outcome["written"] <= 1024 * 1024, outcome


def test_fork_bomb_is_capped(hosted: StartHosted, secret: str) -> None:
    limits = SandboxLimits(processes=16)
    source = bot(
        """
        children, error = [], None
        try:
            for _ in range(1000):
                pid = os.fork()
                if pid == 0:
                    while True:
                        try:
                            os.fork()
                        except OSError:
                            time.sleep(0.05)
                children.append(pid)
        except OSError as exc:
            error = repr(exc)
        return {"forked": len(children), "error": error}
        """
    )
    attacker = hosted(source, limits)
    outcome = ask(attacker, secret, timeout=10)
    assert isinstance(outcome, dict), f"bomb outcome: {outcome}"
    assert outcome["error"], f"fork bomb not capped: {outcome}"
    assert outcome["forked"] < limits.processes, f"fork bomb not capped: {outcome}"
    started = time.monotonic()
    assert subprocess.run(["true"], timeout=5).returncode == 0, "the host can no longer fork"
    assert time.monotonic() - started < 2
    uid = attacker.uid  # the sandbox's own (None when the tests do not run as root)
    running = _processes_of(uid) if uid is not None else 0
    attacker.close()
    assert running == 0 or _processes_of(uid) == 0, "processes of the bomb survived close()"


def _processes_of(uid: int | None) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        zombie = fields.get("State", "").strip().startswith("Z")
        if fields.get("Uid", "").split()[:1] == [str(uid)] and not zombie:
            count += 1
    return count


def test_huge_allocation_fails(hosted: StartHosted, secret: str) -> None:
    source = bot(
        """
        out = {}
        try:
            block = bytearray(10 * 1024 * 1024 * 1024)
            out["10GB"] = "ALLOCATED %d" % len(block)
        except MemoryError as exc:
            out["10GB"] = repr(exc)
        try:
            blocks = [bytearray(64 * 1024 * 1024) for _ in range(16)]
            out["1GB"] = "ALLOCATED %d" % len(blocks)
        except MemoryError as exc:
            out["1GB"] = repr(exc)
        return out
        """
    )
    attacker = hosted(source)
    outcome = ask(attacker, secret, timeout=10)
    assert isinstance(outcome, dict), outcome
    assert not any(v.startswith("ALLOCATED") for v in outcome.values()), outcome
    assert isinstance(ask(attacker, secret, timeout=10), dict), "the bot died after MemoryError"


@pytest.mark.slow
def test_cpu_spin_is_killed(hosted: StartHosted, secret: str) -> None:
    attacker = hosted(bot("while True:\n    pass\n"), SandboxLimits(cpu_seconds=1))
    outcome = ask(attacker, secret, timeout=0.5)
    assert "Timeout" in outcome, f"spinning turn: {outcome}"
    deadline = time.monotonic() + 5
    while attacker.alive and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not attacker.alive, "the CPU limit did not stop a spinning bot"
    assert ask(attacker, secret).startswith("<"), "a dead bot must look like a failing HTTP bot"


def test_sleeping_past_the_turn_timeout_every_turn(hosted: StartHosted, secret: str) -> None:
    attacker = hosted(bot("time.sleep(2)\nreturn 'late'\n"))
    for _ in range(3):
        started = time.monotonic()
        outcome = ask(attacker, secret, timeout=0.3)
        assert "Timeout" in outcome, outcome
        assert time.monotonic() - started < 1.0, outcome
    assert attacker.health(), "health must still answer while decide() sleeps"


def test_subprocess_and_shell_are_unavailable(hosted: StartHosted, secret: str) -> None:
    source = bot(
        """
        import subprocess
        out = {}
        for cmd in (["/bin/sh", "-c", "echo pwned"], ["sh", "-c", "echo pwned"], ["/usr/bin/env"], ["bash"]):
            try:
                result = subprocess.run(cmd, capture_output=True, timeout=2)
                out[" ".join(cmd)] = "RAN " + result.stdout.decode()
            except Exception as exc:
                out[" ".join(cmd)] = repr(exc)
        try:
            os.execv("/bin/sh", ["sh"])
        except OSError as exc:
            out["execv /bin/sh"] = repr(exc)
        return out
        """
    )
    outcome = ask(hosted(source), secret)
    assert isinstance(outcome, dict), outcome
    assert not any(v.startswith("RAN") for v in outcome.values()), outcome


def test_signals_and_ctypes_cannot_reach_the_runner(hosted: StartHosted, secret: str) -> None:
    source = bot(
        """
        import ctypes, signal
        out = {"ppid": os.getppid(), "pid": os.getpid()}
        for name, target in (("parent", os.getppid()), ("host pid", observation["host_pid"]), ("init", 1)):
            try:
                os.kill(target, signal.SIGKILL)
                out[name] = "SENT"
            except OSError as exc:
                out[name] = repr(exc)
        libc = ctypes.CDLL(None, use_errno=True)
        out["ctypes unshare(NEWUSER)"] = [libc.unshare(0x10000000), ctypes.get_errno()]
        out["ctypes ptrace attach 1"] = [libc.ptrace(16, 1, 0, 0), ctypes.get_errno()]
        try:
            os.kill(-1, signal.SIGKILL)
            out["kill(-1)"] = "SENT"
        except OSError as exc:
            out["kill(-1)"] = repr(exc)
        return out
        """
    )
    attacker = hosted(source)
    outcome = ask(attacker, secret, {"host_pid": os.getpid()})
    # kill(-1) may take the bot itself down; either way the runner (this process) is unharmed.
    assert isinstance(outcome, dict | str), outcome
    assert isinstance(outcome, dict), outcome
    if isinstance(outcome, dict):
        assert "ProcessLookupError" in outcome["host pid"], outcome
        assert outcome["ctypes unshare(NEWUSER)"][0] == -1, outcome
    assert Path(f"/proc/{os.getpid()}").exists()
    assert subprocess.run(["true"]).returncode == 0
    print("signal outcomes:", outcome, "bot alive:", attacker.alive)
