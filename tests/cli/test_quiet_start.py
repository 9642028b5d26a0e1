"""What the command line prints is its own: no library warning reaches the terminal."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.environment import ROOT
from tests.support.processes import PYTHON

pytestmark = pytest.mark.slow


def test_starting_the_embedded_database_prints_no_library_warning(tmp_path: Path) -> None:
    """`arena evolve` without a database server starts pgserver, whose import made platformdirs warn
    about XDG_RUNTIME_DIR on every machine without a login session (containers, ssh, cron)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_") and k != "XDG_RUNTIME_DIR"}
    script = (
        "import pathlib, sys\n"
        "from shared.db.embedded import start_embedded_postgres\n"
        "url, stop = start_embedded_postgres(pathlib.Path(sys.argv[1]), 'quiet')\n"
        "stop()\n"
    )
    started = subprocess.run(
        [PYTHON, "-W", "default", "-c", script, str(tmp_path / "data")],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    assert started.stderr == "", started.stderr
    assert started.stdout == "", started.stdout
