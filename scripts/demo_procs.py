"""Child processes of the demo: each in its own process group with its own log file, all stopped
together (SIGTERM, then SIGKILL to the whole group) on exit, on Ctrl-C, on SIGTERM and on errors."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx


class ChildFailed(RuntimeError):
    pass


def _die_with_parent() -> None:
    """Linux: the child gets SIGTERM if the demo itself is killed outright (SIGKILL leaves no
    chance for clean-up code), so even then nothing is left running."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Child:
    def __init__(self, name: str, args: list[str], env: dict[str, str], log_dir: Path, cwd: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, chars: int = 3000) -> str:
        self._log.flush()
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def check(self) -> None:
        if not self.alive():
            raise ChildFailed(
                f"{self.name} exited with code {self.proc.returncode}; last log lines ({self.log_path}):\n"
                f"{self.tail()}"
            )

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def close_log(self) -> None:
        with contextlib.suppress(OSError):
            self._log.close()


class Supervisor:
    """Owns every child; `stop_all` is idempotent and also runs from atexit and signal handlers."""

    def __init__(self, log_dir: Path, cwd: Path) -> None:
        self.log_dir = log_dir
        self.cwd = cwd
        self.children: list[Child] = []
        self._cleanups: list[Callable[[], None]] = []
        self._stopped = False
        log_dir.mkdir(parents=True, exist_ok=True)
        atexit.register(self.stop_all)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    def start(self, name: str, args: list[str], env: dict[str, str]) -> Child:
        child = Child(name, args, env, self.log_dir, self.cwd)
        self.children.append(child)
        return child

    def on_stop(self, cleanup: Callable[[], None]) -> None:
        """Run `cleanup` after the children are gone (embedded PostgreSQL/Redis go last)."""
        self._cleanups.append(cleanup)

    def check_all(self) -> None:
        for child in self.children:
            child.check()

    def stop_all(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        for child in reversed(self.children):
            child.signal_group(signal.SIGTERM)
        deadline = time.monotonic() + 6
        for child in reversed(self.children):
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        for child in reversed(self.children):
            child.signal_group(signal.SIGKILL)  # stragglers in the group (pool processes, sandboxes)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.proc.wait(timeout=5)
            child.close_log()
        for cleanup in reversed(self._cleanups):
            with contextlib.suppress(Exception):
                cleanup()


def wait_until(check: Callable[[], bool], timeout: float, what: str, supervisor: Supervisor) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        supervisor.check_all()
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.2)
    raise TimeoutError(f"{what} not reached within {timeout:.0f} s")


def http_ok(url: str) -> Callable[[], bool]:
    return lambda: httpx.get(url, timeout=2).status_code == 200
