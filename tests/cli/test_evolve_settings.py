"""`arena evolve` run in this process: it builds its settings from its options and hands them to the
platform's code, leaving the process environment exactly as it found it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from services.cli.main import main
from shared.config import get_settings


@pytest.mark.slow
def test_a_local_run_leaves_the_environment_alone(
    tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    data_dir = tmp_path / "data"
    with monkeypatch.context() as env:
        # Neither is needed: the data folder's key and the `process` sandbox's development mode
        # reach the platform's code through the settings the command builds.
        env.delenv("ARENA_SECRET_KEY")
        env.delenv("ARENA_DEV_MODE")
        before = dict(os.environ)
        status = main(
            [
                "evolve", "battle", "--generations", "1", "--children", "1", "--quick", "1",
                "--tournament", "1", "--match-config", '{"time_limit_s": 4}', "--sandbox", "process",
                "--data-dir", str(data_dir), "--out", str(out),
            ]
        )  # fmt: skip
        after = dict(os.environ)
    printed = capsys.readouterr()
    assert status == 0, printed.err + printed.out
    assert after == before
    assert json.loads((out / "summary.json").read_text())["status"] == "finished"
    assert (data_dir / "secret-key").exists()
    # Once the command is done, this process's settings are the environment's again.
    assert get_settings().database_url == database_url
    assert get_settings().sandbox_backend == "bwrap"
