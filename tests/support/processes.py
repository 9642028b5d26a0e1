"""Real child processes for tests: started in their own process group, logged to a file, and
always killed with their children."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.support.environment import ROOT

PYTHON = sys.executable


class ManagedProcess:
    """A real child process in its own process group; always killed (with its children) on exit."""

    def __init__(
        self, args: list[str], name: str, env: dict[str, str] | None = None, cwd: Path = ROOT
    ) -> None:
        self.name = name
        self.log_path = Path(os.environ["ARENA_DATA_DIR"]) / "logs" / f"{name}-{secrets.token_hex(3)}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            args,
            cwd=cwd,
            env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_until(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode} before {what}:\n{self.log()}"
                )
            try:
                if check():
                    return
            except Exception:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"{self.name}: {what} not reached in {timeout}s:\n{self.log()[-4000:]}")

    def wait_http(self, url: str, timeout: float = 30.0) -> None:
        self.wait_until(lambda: httpx.get(url, timeout=2).status_code < 500, timeout, f"{url} answering")

    def wait_log(self, needle: str, timeout: float = 30.0) -> None:
        self.wait_until(lambda: needle in self.log(), timeout, f"log line {needle!r}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def stop(self) -> None:
        if self.alive():
            self.kill(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.kill(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._log.close()
