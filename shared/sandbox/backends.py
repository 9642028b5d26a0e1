"""Starting, watching and killing hosted bots.

`SandboxedBot` is what the match runner holds: it starts the in-sandbox runner under a backend,
waits (bounded) until the bot's Unix socket is served, and always tears the whole process tree
down.

The host creates and binds the bot's listening socket itself, in a directory only the host can
write (the work dir's run/, mode 0700), and passes the listening descriptor into the sandbox; the
runner serves on that descriptor. No path the bot can change is ever resolved by the host.

Backends:
  bwrap    bubblewrap: user, PID, network, mount, IPC and UTS namespaces; only the interpreter,
           its stdlib, the runner's files and the bot's code are visible, all read-only; a private
           size-capped /tmp; an empty environment; a uid of its own (uids.py); host-wide /proc
           files covered; a seccomp allow-list
           (seccomp.py); cgroups for memory, tasks, CPU and freezing (cgroups.py), or, without
           cgroups, no process creation at all; rlimits. The boundary.
  process  a plain subprocess with rlimits and an empty environment, for development machines
           without bubblewrap. INSECURE: refused unless development mode is on.
A bot that fails to start or dies later is never an exception for the caller: its socket just
stops answering, exactly like a failing HTTP bot.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from shared.sandbox import seccomp
from shared.sandbox.cgroups import CgroupError, SandboxCgroup, detect
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.runtime import (
    PACKAGES_INSIDE,
    SINGLE_THREADED,
    game_adapter_exists,
    resolve_runtime,
    staged_code_dir,
    staged_packages_dir,
)
from shared.sandbox.uids import SandboxUids, UidError, UidLease
from shared.states import HostedContract

log = logging.getLogger(__name__)

CONTRACTS = tuple(HostedContract)
_LOG_TAIL_BYTES = 4000
NOBODY = 65534
"""The uid and gid inside a sandbox of a worker that is not root: bubblewrap maps it to the
worker's own (the sandbox then has no uid of its own to run as)."""
MASKED_PROC_FILES = (
    "/proc/stat", "/proc/loadavg", "/proc/uptime", "/proc/meminfo", "/proc/vmstat", "/proc/zoneinfo",
    "/proc/buddyinfo", "/proc/slabinfo", "/proc/pagetypeinfo", "/proc/vmallocinfo", "/proc/swaps",
    "/proc/interrupts", "/proc/softirqs", "/proc/schedstat", "/proc/sched_debug", "/proc/timer_list",
    "/proc/diskstats", "/proc/locks", "/proc/cpuinfo", "/proc/cmdline", "/proc/config.gz",
    "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr", "/proc/sys/fs/inode-state",
    "/proc/sys/fs/dentry-state", "/proc/sys/fs/aio-nr", "/proc/sys/kernel/pty/nr",
)  # fmt: skip
"""Host-wide /proc files, covered by /dev/null in every sandbox: CPU, memory, I/O, interrupt and
lock counters move with the other matches on the host (a timing side channel), and the rest
describe the host (its boot line, kernel config, CPU model). The sandbox's own /proc/self stays."""
MASKED_PROC_DIRS = ("/proc/pressure",)
"""Host-wide /proc directories (pressure stall information), covered by an empty tmpfs."""


class SandboxError(RuntimeError):
    """The platform cannot start sandboxes as asked (missing bubblewrap, refused backend...)."""


class Backend:
    """How to launch the in-sandbox runner. Subclasses give the command and where paths live."""

    name = "abstract"
    secure = False
    uses_info_fd = False
    uses_seccomp = False
    uses_cgroups = False

    def __init__(self) -> None:
        self.drops_privileges = os.geteuid() == 0
        """Root starts each sandbox as a uid of its own (leased from SandboxUids)."""

    def command(
        self, work: Path, limits: SandboxLimits, fds: dict[str, int], *, uid: int, gid: int
    ) -> tuple[list[str], dict[str, str], str]:
        """argv, the in-sandbox paths of the code ({"code"}) and of the bots' packages
        ({"packages"}, when there are any), and the cwd. `fds` holds the descriptors the launcher
        inherits: "info" (bubblewrap's --info-fd), "seccomp"; `uid` and `gid` are the sandbox's
        inside."""
        raise NotImplementedError


def host_socket_path(work: Path) -> str:
    """Where the host binds and reaches a bot's socket: the work dir's run/ (host-only, 0700)."""
    return str(work / "run" / "bot.sock")


class BwrapBackend(Backend):
    name = "bwrap"
    secure = True
    uses_info_fd = True
    uses_seccomp = True

    def __init__(self, *, use_cgroups: bool | None = None) -> None:
        """`use_cgroups`: None uses them when the host has them; False forces the fallback (no
        process creation in the sandbox), as on a host without cgroups."""
        super().__init__()
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxError("bubblewrap (bwrap) is not installed; hosted bots cannot run securely")
        self.bwrap = found
        # Without usable cgroups, detect() logs once that sandboxes may not create processes.
        self.uses_cgroups = detect() is not None if use_cgroups is None else use_cgroups

    def command(
        self, work: Path, limits: SandboxLimits, fds: dict[str, int], *, uid: int, gid: int
    ) -> tuple[list[str], dict[str, str], str]:
        runtime = resolve_runtime(drops_privileges=self.drops_privileges)
        argv = [
            self.bwrap,
            "--info-fd",
            str(fds["info"]),
            "--seccomp",
            str(fds["seccomp"]),
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--clearenv",
            "--setenv",
            "PATH",
            "/usr/bin:/bin",
            "--setenv",
            "LANG",
            "C.UTF-8",
            "--setenv",
            "HOME",
            "/tmp",
            "--setenv",
            "PYTHONDONTWRITEBYTECODE",
            "1",
            *[arg for name, value in SINGLE_THREADED.items() for arg in ("--setenv", name, value)],
            "--uid",
            str(uid),
            "--gid",
            str(gid),
            "--hostname",
            "sandbox",
        ]
        for path in runtime.binds:
            argv += ["--ro-bind", path, path]
        for path in runtime.hidden:
            argv += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]
        for path in runtime.packages:
            argv += ["--ro-bind", path, f"{PACKAGES_INSIDE}/{os.path.basename(path)}"]
        for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64")):
            if os.path.islink(link):
                argv += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                argv += ["--ro-bind", link, link]
            else:
                argv += ["--symlink", target, link]
        argv += ["--proc", "/proc", *_proc_masks()]
        argv += [
            "--dev",
            "/dev",
            "--remount-ro",
            "/dev",
            "--perms",
            "1777",
            "--size",
            str(limits.tmp_size_mb * 1024 * 1024),
            "--tmpfs",
            "/tmp",
            "--ro-bind",
            staged_code_dir(),
            "/arena",
            "--ro-bind",
            str(work / "code" / "bot.py"),
            "/bot/bot.py",
            "--remount-ro",
            "/",
            "--chdir",
            "/tmp",
            "--",
            runtime.executable,
            "-I",
            "-S",
            "-B",
            "/arena/hosted_runner.py",
        ]
        inside = {"code": "/bot/bot.py"} | ({"packages": PACKAGES_INSIDE} if runtime.packages else {})
        return argv, inside, "/"


class ProcessBackend(Backend):
    name = "process"
    secure = False

    def __init__(self, *, dev_mode: bool) -> None:
        if not dev_mode:
            raise SandboxError(
                "the 'process' backend has no isolation and is refused outside development mode"
            )
        super().__init__()
        log.warning(
            "INSECURE: hosted bots run as plain processes (no namespaces, no filesystem isolation); "
            "use only for development with code you trust"
        )

    def command(
        self,
        work: Path,
        limits: SandboxLimits,  # noqa: ARG002 (the backend interface; this backend confines nothing)
        fds: dict[str, int],  # noqa: ARG002
        *,
        uid: int,  # noqa: ARG002
        gid: int,  # noqa: ARG002
    ) -> tuple[list[str], dict[str, str], str]:
        runtime = resolve_runtime(drops_privileges=self.drops_privileges)
        runner = os.path.join(staged_code_dir(), "hosted_runner.py")
        argv = [runtime.executable, "-I", "-S", "-B", runner]
        inside = {"code": str(work / "code" / "bot.py")}
        if runtime.packages:
            inside["packages"] = staged_packages_dir(runtime.packages)
        return argv, inside, str(work)


def _proc_masks() -> list[str]:
    """bubblewrap options covering the host-wide /proc files that exist here (a mount over a path
    that does not exist would fail). /dev/null bound read-only (bubblewrap adds nodev) cannot be
    opened at all; glibc then counts CPUs with sched_getaffinity, as os.cpu_count() needs."""
    masks: list[str] = []
    for path in MASKED_PROC_FILES:
        if os.path.isfile(path):
            masks += ["--ro-bind", "/dev/null", path]
    for path in MASKED_PROC_DIRS:
        if os.path.isdir(path):
            masks += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]  # 4096: one page, empty
    return masks


def make_backend(name: str, *, dev_mode: bool = False) -> Backend:
    if name == "bwrap":
        return BwrapBackend()
    if name == "process":
        return ProcessBackend(dev_mode=dev_mode)
    raise SandboxError(f"unknown sandbox backend {name!r} (use 'bwrap' or 'process')")


class _Resources:
    """Everything that must be released, kept apart from the bot so a finalizer can release it."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.timer: threading.Timer | None = None
        self.work: Path | None = None
        self.log_file: Any = None
        self.init_pidfd: int | None = None
        """A pidfd on the sandbox's own init (PID 1 inside): killing it takes down the namespace."""
        self.cgroup: SandboxCgroup | None = None
        self.lease: UidLease | None = None
        """The sandbox's own uid, released last, once none of its processes is left."""

    def kill(self) -> None:
        """Kill the sandbox's init first (the kernel then kills every process in its PID namespace,
        forked or not), let bubblewrap reap it and exit, and SIGKILL bubblewrap's group if it lingers."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        had_init = self.init_pidfd is not None
        if self.cgroup is not None:
            self.cgroup.kill()
        if self.init_pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.init_pidfd, signal.SIGKILL)
                select.select([self.init_pidfd], [], [], 5.0)
            os.close(self.init_pidfd)
            self.init_pidfd = None
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        if had_init:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.5)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log.error("sandbox process %s did not exit after SIGKILL", proc.pid)

    def release(self) -> None:
        self.kill()
        if self.cgroup is not None:
            self.cgroup.destroy()
            self.cgroup = None
        if self.log_file is not None:
            self.log_file.close()
            self.log_file = None
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None
        if self.lease is not None:
            self.lease.release()
            self.lease = None


class SandboxedBot:
    """One hosted bot. Use as a context manager, or call start() and close() yourself.

    After start() the runner talks to `socket_path` (httpx.AsyncHTTPTransport(uds=socket_path))
    exactly as it would to an HTTP bot; if the bot failed to start or died, requests fail with
    connection errors and `start_error` / `log_tail()` say why.
    """

    def __init__(
        self,
        source: str,
        *,
        secret: str,
        contract: str = HostedContract.DECIDE,
        game: str | None = None,
        limits: SandboxLimits | None = None,
        backend: str | Backend = "bwrap",
        dev_mode: bool = False,
        uids: SandboxUids | None = None,
    ) -> None:
        """`uids`: the range a root worker's sandboxes run as (SandboxUids.from_settings); None
        takes the settings' defaults."""
        if contract not in CONTRACTS:
            raise SandboxError(f"unknown contract {contract!r}; expected one of {CONTRACTS}")
        if contract == HostedContract.CODINGAME and (game is None or not game_adapter_exists(game)):
            raise SandboxError(f"no CodinGame text adapter for game {game!r}")
        self.backend = backend if isinstance(backend, Backend) else make_backend(backend, dev_mode=dev_mode)
        if (
            contract == HostedContract.CODINGAME
            and self.backend.uses_seccomp
            and not self.backend.uses_cgroups
        ):
            raise SandboxError(
                "codingame bots need a process of their own, which sandboxes allow only on hosts "
                "with cgroups; this host has none usable (see docs/hosted-bots.md)"
            )
        self.source = source
        self.secret = secret
        self.contract = contract
        self.game = game
        self.limits = limits or SandboxLimits()
        self.uids = uids or SandboxUids.default()
        self.start_error: str | None = None
        self.started_at: float | None = None
        self.tasks_when_ready: int | None = None
        """The sandbox's task count once it served (with cgroups): what a clean sandbox has."""
        self.matches = 0
        """Matches handed this sandbox (shared.sandbox.reuse)."""
        self._res = _Resources()
        self._finalizer = weakref.finalize(self, self._res.release)
        self._socket_path: str | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> bool:  # noqa: C901 - one launch sequence; a failing step unwinds the steps before it
        """Start the sandbox and wait until it serves; True if ready. Never raises for bot faults."""
        if self._res.proc is not None:
            raise SandboxError("already started; use restart()")
        self._socket_path = None
        work = Path(tempfile.mkdtemp(prefix="arena-bot-"))
        self._res.work = work
        (work / "code").mkdir()
        (work / "run").mkdir(mode=0o700)
        (work / "code" / "bot.py").write_text(self.source, encoding="utf-8")
        os.chmod(work / "code", 0o755)
        os.chmod(work / "code" / "bot.py", 0o444)
        if self.backend.drops_privileges:
            os.chmod(work, 0o711)
        if self.contract == HostedContract.CODINGAME and self.game:
            staged_code_dir((self.game,))
        if self.backend.drops_privileges:
            try:
                self._res.lease = self.uids.lease()
            except UidError as exc:
                raise SandboxError(str(exc)) from exc
        if self.backend.uses_cgroups:
            support = detect()
            if support is None:
                raise SandboxError("cgroups were asked for but this host has none usable")
            try:
                self._res.cgroup = SandboxCgroup(support, self.limits)
            except CgroupError as exc:
                raise SandboxError(str(exc)) from exc
        listener = _listen(host_socket_path(work))
        fds: dict[str, int] = {}
        info_r: int | None = None
        ready_r, ready_w = os.pipe()
        if self.backend.uses_info_fd:
            info_r, fds["info"] = os.pipe()
        if self.backend.uses_seccomp:
            fds["seccomp"] = _pipe_with(seccomp.compiled_filter(processes=self.backend.uses_cgroups))
        child_ends = [ready_w, *fds.values()]  # the launcher's; the host keeps ready_r and info_r
        lease = self._res.lease
        uid, gid = (lease.uid, lease.gid) if lease is not None else (NOBODY, NOBODY)
        argv, inside, cwd = self.backend.command(work, self.limits, fds, uid=uid, gid=gid)
        self._res.log_file = open(work / "bot.log", "wb")  # noqa: SIM115 - closed by _Resources
        config = {
            "secret": self.secret,
            "contract": self.contract,
            "game": self.game,
            "code_path": inside["code"],
            "packages_path": inside.get("packages"),
            "listen_fd": listener.fileno(),
            "ready_fd": ready_w,
            "limits": self.limits.rlimits(),
        }
        self.started_at = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=self._res.log_file,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **SINGLE_THREADED},
                pass_fds=(listener.fileno(), *child_ends),
                start_new_session=True,
                preexec_fn=_launcher_setup(self.limits, self._res.cgroup, lease),
            )
        except OSError as exc:
            listener.close()
            for fd in [ready_r, *child_ends] + ([] if info_r is None else [info_r]):
                os.close(fd)
            raise SandboxError(f"cannot launch the sandbox: {exc}") from exc
        listener.close()  # the sandbox holds it now; the host only connects to the path
        for fd in child_ends:
            os.close(fd)
        self._res.proc = proc
        self.arm_wall_clock()
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(config).encode())
            proc.stdin.close()
        except OSError:
            pass
        ok = _wait_ready(ready_r, self.limits.start_timeout_s)
        os.close(ready_r)
        info: dict[str, Any] = {}
        if info_r is not None:
            info = _read_info(info_r) if ok else {}
            os.close(info_r)
        self._socket_path = host_socket_path(work)
        if "child-pid" in info:
            with contextlib.suppress(OSError, ValueError):
                self._res.init_pidfd = os.pidfd_open(int(info["child-pid"]))
        if not ok:
            self._res.kill()
            self.start_error = "the bot did not start: " + (self.log_tail() or "no output")
        elif self._res.cgroup is not None:
            with contextlib.suppress(OSError, ValueError):
                self.tasks_when_ready = self._res.cgroup.task_count()
            # Between turns only the runner is frozen; bubblewrap's monitor and init run no bot code.
            launchers = {proc.pid} | ({int(info["child-pid"])} if "child-pid" in info else set())
            self._res.cgroup.confine_runner(launchers)
        return ok

    def arm_wall_clock(self) -> None:
        """(Re)start the wall-clock budget; a warm pool calls it when it hands a sandbox out."""
        if self._res.timer is not None:
            self._res.timer.cancel()
        self._res.timer = threading.Timer(self.limits.wall_clock_s, self._res.kill)
        self._res.timer.daemon = True
        self._res.timer.start()

    def kill(self) -> None:
        """Kill the whole sandbox now (the runner's hook for a bot it gives up on)."""
        self._res.kill()

    def restart(self) -> bool:
        """Kill and start a fresh sandbox with the same code; True if it serves again."""
        self._res.release()
        self._res = _Resources()
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, self._res.release)
        self.start_error = None
        self.tasks_when_ready = None
        return self.start()

    def close(self) -> None:
        """Kill everything the bot started and delete its files. Safe to call twice."""
        self._finalizer()

    def __enter__(self) -> SandboxedBot:
        if self._res.proc is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state -----------------------------------------------------------------------------

    @property
    def socket_path(self) -> str:
        if self._socket_path is None:
            raise SandboxError("not started")
        return self._socket_path

    @property
    def uid(self) -> int | None:
        """The host uid (and gid) the sandbox runs as; None when the worker is not root (then it
        runs as the worker's own)."""
        return self._res.lease.uid if self._res.lease is not None else None

    @property
    def cgroup(self) -> SandboxCgroup | None:
        """The sandbox's cgroups (None for the process backend and on hosts without cgroups)."""
        return self._res.cgroup

    def freeze(self) -> None:
        """Stop every process and thread of the sandbox until thaw() (between turns)."""
        if self._res.cgroup is not None and self.alive:
            with contextlib.suppress(OSError):
                self._res.cgroup.freeze()

    def thaw(self) -> None:
        if self._res.cgroup is not None and self._res.cgroup.frozen:
            with contextlib.suppress(OSError):
                self._res.cgroup.thaw()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Thawed for the duration of a request, frozen again after if it was frozen before."""
        was_frozen = self._res.cgroup is not None and self._res.cgroup.frozen
        self.thaw()
        try:
            yield
        finally:
            if was_frozen:
                self.freeze()

    @property
    def secure(self) -> bool:
        return self.backend.secure

    @property
    def alive(self) -> bool:
        return self._res.proc is not None and self._res.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._res.proc.pid if self._res.proc is not None else None

    def transport(self) -> Any:
        """A sync httpx transport to this bot. No TLS over a local socket, so verify=False: building
        the default certificate context costs ~100 ms per transport, most of a cold start."""
        import httpx

        return httpx.HTTPTransport(uds=self.socket_path, verify=False, retries=0)

    def health(self, timeout_s: float = 1.0) -> bool:
        """A signed GET /health over the socket: True if the bot answers {"status": "ok"}."""
        if not self.alive:
            return False
        import httpx

        from shared.protocol.signing import Signer

        headers = Signer(self.secret).headers(f"health-{uuid.uuid4().hex}", b"", method="GET", path="/health")
        try:
            with self.running(), httpx.Client(transport=self.transport(), timeout=timeout_s) as c:
                response = c.get("http://bot/health", headers=headers)
            return response.status_code == 200 and response.json().get("status") == "ok"
        except (httpx.HTTPError, OSError, ValueError):
            return False

    def status(self) -> dict[str, Any]:
        return {
            "backend": self.backend.name,
            "secure": self.secure,
            "alive": self.alive,
            "pid": self.pid,
            "start_error": self.start_error,
        }

    def log_tail(self, limit: int = _LOG_TAIL_BYTES) -> str:
        """The end of what the bot printed (stdout and stderr), for the author's error page."""
        work = self._res.work
        if work is None or not (work / "bot.log").exists():
            return ""
        data = (work / "bot.log").read_bytes()[-limit:]
        return data.decode("utf-8", "replace").strip()


def start_bot(
    source: str,
    *,
    secret: str,
    contract: str = HostedContract.DECIDE,
    game: str | None = None,
    limits: SandboxLimits | None = None,
    backend: str = "bwrap",
    dev_mode: bool = False,
    uids: SandboxUids | None = None,
) -> SandboxedBot:
    """Create and start a hosted bot; check `.start_error` (or just let its turns fail)."""
    bot = SandboxedBot(
        source,
        secret=secret,
        contract=contract,
        game=game,
        limits=limits,
        backend=backend,
        dev_mode=dev_mode,
        uids=uids,
    )
    bot.start()
    return bot


def _wait_ready(fd: int, timeout_s: float) -> bool:
    """Wait for the runner's readiness byte; EOF first means it died while starting."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        readable, _, _ = select.select([fd], [], [], left)
        if readable:
            return os.read(fd, 1) == b"1"


def _read_info(fd: int) -> dict[str, Any]:
    """bubblewrap's --info-fd document (it holds the sandbox's init pid); {} when there is none."""
    data = b""
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        readable, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not readable:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
        try:
            return dict(json.loads(data))
        except ValueError:
            continue
    return {}


def _listen(path: str) -> socket.socket:
    """The bot's listening socket, bound by the host in its own run/ directory."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    return listener


def _pipe_with(data: bytes) -> int:
    """A pipe's read end holding `data` then EOF (bwrap reads its seccomp program from it)."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, data)  # a few KB: well under a pipe's buffer
    finally:
        os.close(write_end)
    return read_end


def _launcher_setup(
    limits: SandboxLimits, cgroup: SandboxCgroup | None, lease: UidLease | None
) -> Callable[[], None]:
    """Runs in the launcher between fork and exec: join the sandbox's cgroups (still root, so
    before any bot code exists every process of the sandbox is counted), drop to the sandbox's
    own uid, then set per-process caps so they hold from the first instruction. The process
    count is left to the cgroup's pids.max and the in-sandbox runner's RLIMIT_NPROC: set here it
    would also count bubblewrap's own forks and any task of the uid not yet reaped by the kernel,
    and bubblewrap then failed to start ("Can't fork for pid 1")."""
    values = limits.rlimits()
    # bwrap itself maps a little more than the runner, so give the launcher some headroom.
    pairs = [
        (resource.RLIMIT_AS, values["as_bytes"] + 64 * 1024 * 1024),
        (resource.RLIMIT_CPU, values["cpu_seconds"]),
        (resource.RLIMIT_FSIZE, values["file_size_bytes"]),
        (resource.RLIMIT_NOFILE, max(values["open_files"], 16)),
        (resource.RLIMIT_CORE, 0),
    ]
    ids = (lease.uid, lease.gid) if lease is not None else None

    def apply() -> None:
        if cgroup is not None:
            cgroup.enter()
        if ids is not None:
            os.setgroups([])
            os.setgid(ids[1])
            os.setuid(ids[0])
        for which, value in pairs:
            resource.setrlimit(which, (value, value))

    return apply
