"""Running the `arena` command line as a real process, as a user would, with no platform settings."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.environment import ROOT
from tests.support.processes import PYTHON

BOTS = ROOT / "tests" / "cli" / "bots"
PODRACING_CONFIG = '{"laps": 1, "max_turns": 60}'
BATTLE_CONFIG = '{"units_per_player": 2, "time_limit_s": 5}'


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str


def start_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start `python -m services.cli.main ARGS` with no ARENA_ variable at all, except those in
    `env`: local play must need no configuration, database or Redis."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("ARENA_")}
    return subprocess.Popen(
        [PYTHON, "-m", "services.cli.main", *args],
        cwd=cwd,
        env={**clean, **(env or {}), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_cli(process: subprocess.Popen[str], timeout: float = 120) -> CliRun:
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return CliRun(process.returncode, stdout, stderr)


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> CliRun:
    return finish_cli(start_cli(*args, cwd=cwd, env=env), timeout)


def assert_one_line_error(run: CliRun, *expected: str) -> str:
    """A failed command: non-zero status, exactly one line on stderr, no traceback."""
    assert run.returncode != 0, run.stdout
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert "Traceback" not in run.stdout
    assert lines[0].startswith("arena"), lines[0]
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]
