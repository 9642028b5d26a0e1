"""CodinGame scripts play unchanged: bots written the way published Mad Pod Racing bots are
(classes with __slots__ and operators, import aliases, numpy arrays, dataclasses, stderr debugging,
a time budget per turn with time.time()) pass the static gate as they are and race through the real
hosted runner, `arena play podracing codingame:FILE ...`, without an error, a timeout or an invalid
action."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shared.sandbox.gate import check_source
from tests.support.cli import finish_cli, start_cli

CORPUS = sorted((Path(__file__).resolve().parent / "codingame_corpus").glob("*.py"))
RACE = '{"laps": 1, "max_turns": 50}'
"""Short races: enough turns for every bot to reach a checkpoint, a few seconds each."""


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.stem)
def test_the_corpus_passes_the_gate_unchanged(path: Path) -> None:
    assert [str(p) for p in check_source(path.read_text(encoding="utf-8"), contract="codingame")] == []


@pytest.mark.slow
def test_the_corpus_races_through_the_hosted_runner(tmp_path: Path) -> None:
    """The bots two by two (the odd one out against the built-in runner), the races played at once."""
    seats = [f"codingame:{path}" for path in CORPUS]
    seats += ["builtin:runner"] * (len(seats) % 2)
    races = [
        start_cli(
            "play",
            "podracing",
            *seats[i : i + 2],
            "--seed",
            str(i),
            "--config",
            RACE,
            "--replay",
            f"race-{i}.json",
            "--json",
            cwd=tmp_path,
        )
        for i in range(0, len(seats), 2)
    ]
    played: list[dict[str, Any]] = []
    for race in races:
        run = finish_cli(race, timeout=180)
        assert run.returncode == 0, run.stderr
        assert run.stderr == "", run.stderr  # no sandbox warning, no library noise
        played += json.loads(run.stdout)["players"]
    corpus = {p["bot"]: p for p in played if p["bot"].startswith("codingame:")}
    assert sorted(corpus) == sorted(f"codingame:{path.name}" for path in CORPUS)
    for bot, player in corpus.items():
        figures = {key: player[key] for key in ("errors", "timeouts", "forfeited", "error_samples")}
        assert figures == {"errors": 0, "timeouts": 0, "forfeited": False, "error_samples": []}, bot
        assert player["invalid_samples"] == [], bot
        assert player["metrics"]["invalid_actions"] == 0, bot
        assert player["metrics"]["checkpoints"] >= 1, (bot, player["metrics"])  # it raced
