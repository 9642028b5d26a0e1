"""Resource limits for one hosted bot, in one place so the runner, the docs and the tests agree."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Caps applied to every process in a sandbox.

    With cgroups (see cgroups.py) memory_mb caps all processes of the sandbox together (swap
    off), processes caps its tasks together (threads count: the server uses one per connection)
    and cpu_quota caps its CPU share in cores. The same values are also per-process rlimits
    (defence in depth): memory_mb as the address space (RLIMIT_AS), processes as RLIMIT_NPROC;
    cpu_seconds is per process; wall_clock_s bounds the whole life of the sandbox.
    """

    memory_mb: int = 256
    cpu_seconds: int = 60
    cpu_quota: float = 1.0
    processes: int = 32
    open_files: int = 64
    file_size_mb: int = 1
    tmp_size_mb: int = 16
    wall_clock_s: float = 1800.0
    start_timeout_s: float = 5.0

    def rlimits(self) -> dict[str, int]:
        """The limits in the form the in-sandbox runner applies to itself."""
        return {
            "as_bytes": self.memory_mb * 1024 * 1024,
            "cpu_seconds": self.cpu_seconds,
            "processes": self.processes,
            "open_files": self.open_files,
            "file_size_bytes": self.file_size_mb * 1024 * 1024,
        }
