"""Control groups for one sandbox: limits that hold for all its processes together, a freezer so
nothing of the bot runs between its turns, and a kill that misses no process.

Works with cgroup v1 (one hierarchy per controller: memory, pids, cpu/cpuacct, freezer) and v2
(one unified hierarchy with memory, pids and cpu enabled for our subtree). A sandbox's groups are
created below the current process's own groups (as /proc/self/cgroup names them), so a worker in a
container stays inside its container's limits. When no usable hierarchy exists (not root, read-only
cgroupfs, controllers missing), `detect()` returns None and the caller falls back to a sandbox
that cannot create processes at all.

A group's name says which process owns it (host, pid and that pid's start time). A frozen v1 task
ignores even SIGKILL until it is thawed, so the sandbox of an owner killed outright (kill -9, OOM)
while its bot was frozen between turns would sleep forever; the first sandbox a process creates
therefore sweeps the groups whose owner on this host is gone: thaw, kill, remove.

Freezing is on every hosted turn's path (thaw before the request, freeze after), so it is kept
cheap. Each group writes its freezer state through one descriptor opened at creation, not an
open/write/close per write. On v1, the kernel guards its freezer checks with a static key that is
on while any v1 group is freezing: freezing the first group and thawing the last rewrites kernel
code (text patching, with an interrupt to every CPU), the bulk of a write's cost even for an empty
group. `hold_freezer_key()` keeps one empty group of this process frozen for its whole life, so the
key stays on (figures, and the command that measures them, in docs/hosted-bots.md). The guarantee
is the freezer's own, unchanged: nothing of the sandbox runs while it is frozen.
"""

from __future__ import annotations

import atexit
import contextlib
import enum
import functools
import hashlib
import logging
import os
import re
import signal
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from shared.sandbox.limits import SandboxLimits

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
V2_CONTROLLERS = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000


class CgroupVersion(enum.Enum):
    V1 = "v1"
    V2 = "v2"


class CgroupError(RuntimeError):
    """A sandbox's cgroup could not be created or configured."""


@dataclass(frozen=True, slots=True)
class CgroupSupport:
    version: CgroupVersion
    parents: dict[str, Path]
    """Where sandboxes' groups are created: per v1 controller, or {"unified": ...} for v2."""


def _own_paths() -> dict[str, str]:
    """Our cgroup path per hierarchy: {"memory": "/a/b", ..., "": "/x"} ("" is the v2 one)."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _id, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _mounts() -> dict[str, Path]:
    """Mount points from /proc/self/mountinfo: v1 controller name -> mount, "unified" -> v2 mount."""
    mounts: dict[str, Path] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        if tail[0] == "cgroup2":
            mounts.setdefault("unified", Path(fields[4]))
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                if option in V1_CONTROLLERS:
                    mounts.setdefault(option, Path(fields[4]))
    return mounts


def _v1_support(mounts: dict[str, Path], own: dict[str, str]) -> CgroupSupport | None:
    parents: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        if controller not in mounts or controller not in own:
            return None
        parents[controller] = mounts[controller] / own[controller].lstrip("/")
    if not all(os.access(p, os.W_OK) for p in parents.values()):
        return None
    return CgroupSupport(CgroupVersion.V1, parents)


def _v2_support(mounts: dict[str, Path], own: dict[str, str]) -> CgroupSupport | None:
    if "unified" not in mounts or "" not in own:
        return None
    parent = mounts["unified"] / own[""].lstrip("/")
    try:
        available = (parent / "cgroup.controllers").read_text().split()
        if not set(V2_CONTROLLERS) <= set(available):
            return None
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        missing = [c for c in V2_CONTROLLERS if c not in enabled]
        if missing:
            (parent / "cgroup.subtree_control").write_text(" ".join("+" + c for c in missing))
    except OSError:
        return None
    return CgroupSupport(CgroupVersion.V2, {"unified": parent})


@functools.cache
def detect() -> CgroupSupport | None:
    """The hierarchy sandboxes can use here, or None (then: no process creation in sandboxes)."""
    try:
        mounts, own = _mounts(), _own_paths()
    except OSError:
        return None
    support = _v1_support(mounts, own) or _v2_support(mounts, own)
    if support is None:
        log.warning(
            "no writable cgroup hierarchy with memory, pids, cpu and freezer: hosted bots run "
            "without cgroups, so their sandboxes may not create processes (threads only) and "
            "codingame bots, which need one, are refused"
        )
    return support


GROUP_PREFIX = "arena-sandbox-"
OWNED_GROUP = re.compile(r"arena-sandbox-h([0-9a-f]{6})-p([0-9]+)-s([0-9]+)-[0-9a-f]{12}")


def host_tag() -> str:
    """Six hex digits of the host name: groups of another container sharing the hierarchy (whose
    pids this process cannot see) are never swept."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), which tells
    a live owner from a later process that got the same pid; None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def group_name() -> str:
    pid = os.getpid()
    return f"{GROUP_PREFIX}h{host_tag()}-p{pid}-s{_start_time(pid) or 0}-{uuid.uuid4().hex[:12]}"


def orphaned(name: str) -> bool:
    """Whether a group of ours (this host) belongs to an owner process that is gone."""
    found = OWNED_GROUP.fullmatch(name)
    if found is None or found.group(1) != host_tag():
        return False
    return _start_time(int(found.group(2))) != int(found.group(3))


def sweep_orphans(support: CgroupSupport) -> int:
    """Thaw, kill and remove the sandbox groups whose owner died; returns how many were swept."""
    names = {
        child.name
        for parent in support.parents.values()
        if parent.is_dir()
        for child in parent.iterdir()
        if child.is_dir() and child.name.startswith(GROUP_PREFIX)
    }
    swept = 0
    for name in sorted(names):
        if not orphaned(name):
            continue
        group = SandboxCgroup.existing(support, name)
        group.destroy()
        swept += 1
        log.warning("swept the sandbox cgroup %s: its owner process is gone", name)
    return swept


_swept = threading.Event()

_key_lock = threading.Lock()
_key_group: tuple[int, Path] | None = None
"""(owner pid, directory) of the empty v1 freezer group this process keeps frozen."""


def hold_freezer_key(support: CgroupSupport) -> None:
    """Keep an empty v1 freezer group of this process frozen until it exits (module docstring):
    the kernel's freezer key then stays on and freezing a sandbox no longer patches kernel code.
    Named like a sandbox's groups, so `sweep_orphans` removes it once its owner is gone. No-op on
    v2 (its freezer has no such key) and when already held by this process (not a parent it was
    forked from). A failure costs only speed, so it is logged, never raised."""
    global _key_group
    if support.version is not CgroupVersion.V1:
        return
    with _key_lock:
        if _key_group is not None and _key_group[0] == os.getpid():
            return
        directory = support.parents["freezer"] / group_name()
        try:
            directory.mkdir(mode=0o755)
            (directory / "freezer.state").write_text("FROZEN")
        except OSError as exc:
            with contextlib.suppress(OSError):
                directory.rmdir()
            log.warning("cannot keep the freezer key on (freezing sandboxes stays slower): %s", exc)
            return
        _key_group = (os.getpid(), directory)
        atexit.register(release_freezer_key)


def freezer_key_group() -> Path | None:
    """The empty group `hold_freezer_key` keeps frozen for this process, or None."""
    with _key_lock:
        return _key_group[1] if _key_group is not None and _key_group[0] == os.getpid() else None


def release_freezer_key() -> None:
    """Thaw and remove the group `hold_freezer_key` made (at exit; the benchmark's baseline)."""
    global _key_group
    with _key_lock:
        if _key_group is None or _key_group[0] != os.getpid():
            return
        directory = _key_group[1]
        _key_group = None
        with contextlib.suppress(OSError):
            (directory / "freezer.state").write_text("THAWED")
            directory.rmdir()


class SandboxCgroup:
    """The groups of one sandbox. Create, let the launcher `enter()` them, and `destroy()`."""

    @classmethod
    def existing(cls, support: CgroupSupport, name: str) -> SandboxCgroup:
        """A handle on groups that already exist (to sweep them), without creating anything."""
        group = cls.__new__(cls)
        group.support = support
        group.dirs = {key: parent / name for key, parent in support.parents.items()}
        group._groups = list(dict.fromkeys(group.dirs.values()))
        group.frozen = False
        group._procs_files = [str(d / "cgroup.procs") for d in group._groups]
        group._freezer_lock = threading.Lock()
        group._freezer_fd = None
        group.runner_group = None
        return group

    def __init__(self, support: CgroupSupport, limits: SandboxLimits) -> None:
        if not _swept.is_set():
            _swept.set()
            try:
                sweep_orphans(support)
            except OSError as exc:
                log.warning("could not sweep orphaned sandbox cgroups: %s", exc)
        self.support = support
        name = group_name()
        self.dirs = {key: parent / name for key, parent in support.parents.items()}
        self._groups = list(dict.fromkeys(self.dirs.values()))
        """Each group once (v1 may mount cpu and cpuacct together, so two keys share one)."""
        self.frozen = False
        self._freezer_lock = threading.Lock()
        self._freezer_fd: int | None = None
        """The freezer state file, open for writing while the group exists (module docstring).
        Non-inheritable, and the launcher closes every descriptor it was not given: it never
        reaches the sandbox."""
        self.runner_group: Path | None = None
        """The freezer group of the sandbox's runner (`confine_runner`), frozen between turns in
        place of the whole sandbox's; None: the whole sandbox's group is."""
        created: list[Path] = []
        try:
            for directory in self._groups:
                directory.mkdir(mode=0o755)
                created.append(directory)
            self._configure(limits)
            self._freezer_fd = os.open(self._freezer_file(), os.O_WRONLY | os.O_CLOEXEC)
        except OSError as exc:
            for directory in created:
                with contextlib.suppress(OSError):
                    directory.rmdir()
            raise CgroupError(f"cannot create the sandbox's cgroup: {exc}") from exc
        self._procs_files = [str(d / "cgroup.procs") for d in self._groups]
        hold_freezer_key(support)

    # -- set-up ------------------------------------------------------------------------------

    def _configure(self, limits: SandboxLimits) -> None:
        memory = limits.memory_mb * 1024 * 1024
        quota = max(1000, int(limits.cpu_quota * CPU_PERIOD_US))
        if self.support.version is CgroupVersion.V1:
            mem = self.dirs["memory"]
            (mem / "memory.limit_in_bytes").write_text(str(memory))
            if (mem / "memory.memsw.limit_in_bytes").exists():  # swap off: memory+swap = memory
                (mem / "memory.memsw.limit_in_bytes").write_text(str(memory))
            with contextlib.suppress(OSError):
                (mem / "memory.swappiness").write_text("0")
            (self.dirs["pids"] / "pids.max").write_text(str(limits.processes))
            (self.dirs["cpu"] / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
            (self.dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(quota))
        else:
            unified = self.dirs["unified"]
            (unified / "memory.max").write_text(str(memory))
            if (unified / "memory.swap.max").exists():
                (unified / "memory.swap.max").write_text("0")
            (unified / "pids.max").write_text(str(limits.processes))
            (unified / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")

    def enter(self) -> None:
        """Move the calling process into every group (the launcher, before it runs the sandbox)."""
        pid = str(os.getpid())
        for path in self._procs_files:
            with open(path, "w") as handle:
                handle.write(pid)

    # -- freezing ----------------------------------------------------------------------------

    def freeze(self) -> None:
        self._set_frozen(True)

    def thaw(self) -> None:
        self._set_frozen(False)

    def _freezer_file(self) -> Path:
        if self.runner_group is not None:
            return self.runner_group / "freezer.state"
        if self.support.version is CgroupVersion.V1:
            return self.dirs["freezer"] / "freezer.state"
        return self.dirs["unified"] / "cgroup.freeze"

    def confine_runner(self, launchers: set[int]) -> bool:
        """Move the sandbox's runner (its one process besides `launchers`) into a freezer group of
        its own and freeze only that group from now on (cgroup v1, while thawed; True when done).

        A freeze and a thaw wake every task of the group; bubblewrap's two processes (`launchers`:
        its monitor outside the sandbox and its init inside) run no code of the bot but were woken
        twice a turn, about half of what freezing cost. Whatever the runner starts from now on,
        threads and children alike, is born in its group and frozen with it. Done only when the
        sandbox holds nothing but the launchers and the runner, and checked again after the move:
        a child forked before it would stay outside the runner's group, so the whole sandbox is
        then frozen as before."""
        if self.support.version is not CgroupVersion.V1 or self.frozen or self.runner_group is not None:
            return False
        parent = self.dirs["freezer"]

        def outside() -> set[int]:
            return {int(p) for p in (parent / "cgroup.procs").read_text().split()} - launchers

        group = parent / "runner"
        try:
            processes = outside()
            if len(processes) != 1:
                return False
            (runner,) = processes
            group.mkdir(mode=0o755)
            (group / "cgroup.procs").write_text(str(runner))
            fd = os.open(group / "freezer.state", os.O_WRONLY | os.O_CLOEXEC)
        except (OSError, ValueError):
            return False
        with self._freezer_lock:
            previous, self._freezer_fd, self.runner_group = self._freezer_fd, fd, group
        if previous is not None:
            os.close(previous)
        try:
            stray = outside()
        except (OSError, ValueError):
            stray = {-1}
        if stray:  # forked before the move: freeze the whole sandbox (its runner's group with it)
            with self._freezer_lock:
                self.runner_group = None
                self._freezer_fd = os.open(self._freezer_file(), os.O_WRONLY | os.O_CLOEXEC)
            os.close(fd)
            return False
        return True

    def _freezer_groups(self) -> list[Path]:
        """Every freezer state file of the sandbox, the runner's group (if any) first."""
        if self.support.version is not CgroupVersion.V1:
            return [self.dirs["unified"] / "cgroup.freeze"]
        parent = self.dirs["freezer"]
        children = [d / "freezer.state" for d in parent.iterdir() if d.is_dir()] if parent.is_dir() else []
        return [*children, parent / "freezer.state"]

    def _set_frozen(self, frozen: bool) -> None:
        v1 = self.support.version is CgroupVersion.V1
        value = (b"FROZEN" if frozen else b"THAWED") if v1 else (b"1" if frozen else b"0")
        with self._freezer_lock:  # never a write to a descriptor another thread just closed
            if self._freezer_fd is None:  # a handle from existing(), or after destroy()
                self._freezer_fd = os.open(self._freezer_file(), os.O_WRONLY | os.O_CLOEXEC)
            os.pwrite(self._freezer_fd, value, 0)
            self.frozen = frozen

    def _close_freezer(self) -> None:
        with self._freezer_lock:
            if self._freezer_fd is not None:
                os.close(self._freezer_fd)
                self._freezer_fd = None

    # -- accounting --------------------------------------------------------------------------

    def cpu_usage_s(self) -> float:
        """CPU time used by all processes of the sandbox so far."""
        if self.support.version is CgroupVersion.V1:
            return int((self.dirs["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        for line in (self.dirs["unified"] / "cpu.stat").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        return 0.0

    def task_count(self) -> int:
        """Tasks (processes and threads) in the sandbox now."""
        key = "pids" if self.support.version is CgroupVersion.V1 else "unified"
        return int((self.dirs[key] / "pids.current").read_text())

    def pids(self) -> list[int]:
        key = "pids" if self.support.version is CgroupVersion.V1 else "unified"
        try:
            return [int(p) for p in (self.dirs[key] / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def memory_peak_bytes(self) -> int:
        if self.support.version is CgroupVersion.V1:
            return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text())
        peak = self.dirs["unified"] / "memory.peak"
        return int(peak.read_text()) if peak.exists() else 0

    # -- teardown ----------------------------------------------------------------------------

    def _thaw_all(self) -> None:
        """Thaw the sandbox's groups, its runner's included (a sweep knows no handle's state)."""
        with contextlib.suppress(OSError):
            self.thaw()
        thawed = b"THAWED" if self.support.version is CgroupVersion.V1 else b"0"
        for state in self._freezer_groups():
            with contextlib.suppress(OSError):
                state.write_bytes(thawed)

    def kill(self, timeout_s: float = 5.0) -> None:
        """SIGKILL every process in the sandbox's groups (thawed first: a frozen v1 task would
        not die until thawed; thawed again if a turn ending on another thread froze it meanwhile)
        and wait until they are gone."""
        self._thaw_all()
        kill_file = self.dirs.get("unified", Path("/nonexistent")) / "cgroup.kill"
        deadline = time.monotonic() + timeout_s
        while (pids := self.pids()) and time.monotonic() < deadline:
            if self.frozen:
                self._thaw_all()
            if kill_file.exists():
                with contextlib.suppress(OSError):
                    kill_file.write_text("1")
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def destroy(self) -> None:
        """Kill what is left and remove the groups (retried briefly while the kernel reaps)."""
        self.kill()
        self._close_freezer()
        for directory in self._groups:
            deadline = time.monotonic() + 5.0
            while directory.exists():
                try:
                    for child in directory.iterdir():  # the runner's freezer group goes first
                        if child.is_dir():
                            child.rmdir()
                    directory.rmdir()
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if time.monotonic() > deadline:
                        log.error("cannot remove cgroup %s: %s", directory, exc)
                        break
                    time.sleep(0.01)

    def exists(self) -> bool:
        return any(d.exists() for d in self.dirs.values())
