"""Bridge between the JSON protocol and CodinGame's text protocol for Mad Pod Racing.

Standard library only and self-contained: this file is copied as-is next to hosted bots, so that an
unchanged CodinGame script (reads stdin with input(), prints its orders) can play on the platform.

Text protocol:
- once: laps, checkpoint count, then one ``x y`` line per checkpoint;
- each turn: 4 lines ``x y vx vy angle nextCheckPointId``, own pods first (angle -1 on the first turn);
- the bot answers 2 lines ``X Y thrust|BOOST|SHIELD [message]``.
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import subprocess
import sys
import threading
import time
from typing import Any

MAX_MESSAGE_LENGTH = 64
OUTPUT_FORM = "2 lines a turn, one per pod: 'X Y thrust [message]', thrust 0-100, BOOST or SHIELD"
"""What a script must print, in the words its owner reads next to an unusable line."""
MAX_STDERR_LINES = 200
SCRIPT_LAUNCHER = (
    "def _run(path, extra_path):\n"
    "    import sys\n"
    "    sys.path.extend(extra_path)\n"
    "    with open(path, 'rb') as file:\n"
    "        text = file.read().decode('utf-8')\n"
    "    code = compile(text, path, 'exec', dont_inherit=True)\n"
    "    namespace = sys.modules['__main__'].__dict__\n"
    "    del namespace['_run']\n"
    "    namespace['__file__'] = path\n"
    "    sys.argv[:] = [path]\n"
    "    exec(code, namespace)\n"
    "_run(__import__('sys').argv[1], __import__('sys').argv[2:])\n"
)
"""Runs the script as `__main__` from its text decoded as strict UTF-8, never `python script.py`:
compile() of a str ignores coding declarations, so the script runs exactly the text the static gate
checked (a `# coding: utf-7` line would otherwise turn a comment into code). -I keeps the working
directory and the environment out of the import path; the arguments after the script's path are
folders added to it (the packages a sandbox offers bots)."""
PASSED_ENVIRONMENT = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
"""Variables the script gets from the process that starts it (the sandbox sets them)."""


def init_lines(observation: dict[str, Any]) -> list[str]:
    """The lines a CodinGame bot reads once, before the first turn."""
    lines = [str(observation["laps"]), str(observation["checkpoint_count"])]
    lines.extend(f"{x} {y}" for x, y in observation["checkpoints"])
    return lines


def _pod_line(pod: dict[str, Any]) -> str:
    return f"{pod['x']} {pod['y']} {pod['vx']} {pod['vy']} {pod['angle']} {pod['next_checkpoint']}"


def turn_lines(observation: dict[str, Any]) -> list[str]:
    """The 4 lines of one turn: own pods, then the opponent's."""
    return [_pod_line(pod) for pod in [*observation["pods"], *observation["opponents"]]]


def _parse_number(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text!r} is not a finite number")
    return number


def parse_line(line: str) -> dict[str, Any]:
    """One ``X Y thrust|BOOST|SHIELD [message]`` line as a pod action; ValueError if unusable."""
    parts = line.strip().split(maxsplit=3)
    if len(parts) < 3:
        raise ValueError(f"expected 'X Y thrust', got {line.strip()!r}")
    x, y = _parse_number(parts[0]), _parse_number(parts[1])
    word = parts[2].upper()
    thrust: float | str = word if word in ("BOOST", "SHIELD") else _parse_number(parts[2])
    action: dict[str, Any] = {
        "x": int(x) if x.is_integer() else x,
        "y": int(y) if y.is_integer() else y,
        "thrust": int(thrust) if isinstance(thrust, float) and thrust.is_integer() else thrust,
    }
    if len(parts) == 4:
        action["message"] = parts[3][:MAX_MESSAGE_LENGTH]
    return action


def parse_output(lines: list[str]) -> dict[str, Any]:
    """The bot's 2 output lines as an action.

    Tolerant: an unusable or missing line becomes a ``None`` pod entry, which the game replaces with
    the default order (and counts as invalid); the reasons are listed under ``"errors"``.
    """
    pods: list[dict[str, Any] | None] = []
    errors: list[str] = []
    for index in range(2):
        if index >= len(lines):
            pods.append(None)
            errors.append(f"pod {index}: no line")
            continue
        try:
            pods.append(parse_line(lines[index]))
        except ValueError as error:
            pods.append(None)
            errors.append(f"pod {index}: {error}")
    action: dict[str, Any] = {"pods": pods}
    if errors:
        action["errors"] = errors
    return action


class CodinGameProcess:
    """An unchanged CodinGame script run as one persistent subprocess for a whole race.

    The first `decide` sends the init lines, every `decide` sends the turn's 4 lines and waits for 2
    lines (`first_timeout` on the first turn, `timeout` afterwards). A late, dead or silent bot gives
    ``None`` (no answer); the process keeps running unless it died.
    """

    def __init__(
        self,
        script: str,
        python: str = sys.executable,
        timeout: float = 1.0,
        first_timeout: float = 5.0,
        cwd: str | None = None,
        extra_path: list[str] | None = None,
    ) -> None:
        self.script = script
        self.extra_path = extra_path or []
        self.python = python
        self.timeout = timeout
        self.first_timeout = first_timeout
        self.cwd = cwd
        self.stderr: list[str] = []
        self.last_errors: list[str] = []
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._initialised = False
        self._stale_lines = 0
        """Lines still owed for turns that timed out: they arrive first and belong to no one."""

    def start(self) -> None:
        env = {"PYTHONUNBUFFERED": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        env |= {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
        self._process = subprocess.Popen(
            [self.python, "-I", "-u", "-c", SCRIPT_LAUNCHER, self.script, *self.extra_path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            cwd=self.cwd,
            env=env,
        )
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self._process is not None
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _read_stderr(self) -> None:
        assert self._process is not None
        assert self._process.stderr is not None
        for line in self._process.stderr:
            if len(self.stderr) < MAX_STDERR_LINES:
                self.stderr.append(line.rstrip("\n"))

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _send(self, lines: list[str]) -> bool:
        assert self._process is not None
        assert self._process.stdin is not None
        try:
            self._process.stdin.write("".join(line + "\n" for line in lines))
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def _receive(self, count: int, timeout: float) -> list[str] | None:
        """The next `count` answer lines within `timeout`, after skipping late answers to earlier
        turns (a script reads its input in order, so those come first). On a timeout the missing
        lines are remembered as stale, so a slow turn never shifts every later answer by one."""
        deadline = time.monotonic() + timeout
        lines: list[str] = []
        while len(lines) < count:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._stale_lines += count - len(lines)
                return None
            if line is None:
                self._lines.put(None)
                return None
            if self._stale_lines:
                self._stale_lines -= 1
                continue
            lines.append(line)
        return lines

    def decide(self, observation: dict[str, Any]) -> dict[str, Any] | None:
        """One turn: the action, or None if the bot did not answer in time."""
        if self._process is None:
            self.start()
        if not self.alive:
            return None
        outgoing = turn_lines(observation)
        first = not self._initialised
        if first:
            outgoing = init_lines(observation) + outgoing
            self._initialised = True
        if not self._send(outgoing):
            return None
        answer = self._receive(2, self.first_timeout if first else self.timeout)
        if answer is None:
            return None
        action = parse_output(answer)
        self.last_errors = action.pop("errors", [])
        return action

    __call__ = decide

    def close(self) -> None:
        if self._process is None:
            return
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait(timeout=5)

    def __enter__(self) -> CodinGameProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
