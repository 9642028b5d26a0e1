"""What the benchmarks that start processes share: stopping them all whatever happens, the CPU a
process tree used, a free loopback port. Standard library only, and no side effects on import."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class LoggedProcess:
    """A child in its own process group with its output in a log file, stopped with its children
    (SIGTERM, then SIGKILL). With `stdin`, its stdin and stdout are pipes (stderr still logs)."""

    def __init__(
        self,
        args: list[str],
        log_path: Path,
        *,
        cwd: Path,
        env: dict[str, str] | None = None,
        stdin: bool = False,
        stop_timeout: float = 5.0,
    ) -> None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        self.stop_timeout = stop_timeout
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            args,
            cwd=cwd,
            env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdin else self._log,
            stderr=self._log if stdin else subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, needle: str, timeout: float) -> None:
        """Until `needle` is in the log; raises if the process exits first or time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.output():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.proc.args!r} exited early:\n{self.output()[-3000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"{needle!r} not seen in {timeout}s:\n{self.output()[-3000:]}")

    def cpu(self) -> float:
        """CPU seconds used so far by the process and its live children."""
        return process_tree_cpu(self.proc.pid)

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=self.stop_timeout)
                break
        self._log.close()


@contextlib.contextmanager
def processes() -> Iterator[list[Any]]:
    """A list to append started processes (anything with `stop()`) to; on leaving, each is stopped,
    the last one first."""
    started: list[Any] = []
    try:
        yield started
    finally:
        for proc in reversed(started):
            proc.stop()


def process_tree_cpu(pid: int, reaped: bool = False) -> float:
    """CPU seconds (user + system) used so far by a process and its live children (Linux /proc);
    with `reaped`, also by the children they already waited for (short-lived sandboxes)."""
    total = 0.0
    pending = [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            if reaped:
                total += (int(fields[13]) + int(fields[14])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError, IndexError):
            continue
    return total
