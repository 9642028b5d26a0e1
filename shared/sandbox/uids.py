"""A host uid (and the gid of the same number) of its own for every running sandbox.

The kernel keeps some budgets per uid, whatever the namespace: the pipe buffer pages of
fs.pipe-user-pages-soft and RLIMIT_NPROC's count of tasks. Sandboxes that shared a uid shared
those budgets, so one bot could use up the others'. A worker started as root therefore
leases a uid from a configured range (`Settings.sandbox_uid_*`) for each sandbox's whole life.

A lease is an exclusive flock on the uid's lock file in a directory only the worker's user can
write. Every worker process on the host sees the same files, and the kernel drops a lock when its
holder dies, however it dies (kill -9, OOM), so a crashed worker's uids are free again at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from shared.config import Settings


class UidError(RuntimeError):
    """No uid could be leased (the range is in use, or the lock directory is unsafe)."""


class UidLease:
    """One uid, and the gid of the same number, held until `release()`."""

    def __init__(self, uid: int, lock_fd: int) -> None:
        self.uid = uid
        self.gid = uid
        self._lock_fd: int | None = lock_fd

    def release(self) -> None:
        """Unlock (for every copy of the descriptor a fork may hold) and close. Safe to call twice."""
        if self._lock_fd is None:
            return
        with contextlib.suppress(OSError):
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        os.close(self._lock_fd)
        self._lock_fd = None


@dataclass(frozen=True, slots=True)
class SandboxUids:
    """The range sandboxes' uids come from and the directory of its lock files."""

    base: int
    count: int
    lock_dir: Path

    @classmethod
    def from_settings(cls, settings: Settings) -> SandboxUids:
        return cls(settings.sandbox_uid_base, settings.sandbox_uid_count, settings.sandbox_uid_lock_dir)

    @classmethod
    def default(cls) -> SandboxUids:
        """The settings' defaults, without reading the environment (model_construct validates and
        reads nothing), for callers that pass no range."""
        return cls.from_settings(Settings.model_construct())

    def lease(self) -> UidLease:
        """The lowest uid of the range that no live sandbox holds."""
        directory = self._safe_lock_dir()
        for uid in range(self.base, self.base + self.count):
            fd = os.open(directory / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return UidLease(uid, fd)
        raise UidError(
            f"all {self.count} sandbox uids ({self.base}-{self.base + self.count - 1}) are in use; "
            "raise ARENA_SANDBOX_UID_COUNT or run fewer sandboxes at once"
        )

    def _safe_lock_dir(self) -> Path:
        """The lock directory, created if missing; refused if another user could plant or hold its
        files (a world-writable place like /tmp would let anyone block every uid)."""
        try:
            self.lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.lstat(self.lock_dir)
        except OSError as exc:
            raise UidError(f"cannot create the sandbox uid lock directory {self.lock_dir}: {exc}") from exc
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise UidError(
                f"{self.lock_dir} must be a directory (not a link) of uid {os.geteuid()} that no other "
                "user can write"
            )
        return self.lock_dir
