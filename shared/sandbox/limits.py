"""Resource limits for one hosted bot, in one place so the runner, the docs and the tests agree."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Caps applied to every process in a sandbox.

    memory_mb caps the address space per process (RLIMIT_AS), so it also bounds thread stacks;
    cpu_seconds is per process; processes counts every process and thread of the sandbox user in
    the sandbox (threads count, and the threaded server uses one per connection);
    wall_clock_s bounds the whole life of the sandbox, whatever the bot does.
    """

    memory_mb: int = 256
    cpu_seconds: int = 60
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
