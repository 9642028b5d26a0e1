"""The evaluation table's races (services/trainer/reference_eval.py) and the handler's guard around
them: counts add up, the same races give the same results, a deadline or an abandoned chunk cuts
them short, and a bot that does not run costs the evaluation only."""

from __future__ import annotations

import logging
import time
import uuid

import pytest

from services.trainer.handler import evaluate_checkpoint
from services.trainer.reference_eval import (
    BLOCKER,
    RUNNER,
    SEARCH,
    evaluate_source,
    is_due,
)
from services.trainer.store import NewCheckpoint
from shared.states import TrainingStage
from shared.training.config import TrainingEvaluationConfig

RUNNER_SOURCE = "from shared.games.podracing.bots import runner as decide\n"
"""The built-in runner as an exported bot would define it (the evaluation runs it in process)."""
FAILING_SOURCE = "def decide(observation):\n    raise RuntimeError('every turn fails')\n"
SMALL = TrainingEvaluationConfig(every_chunks=1, races=2, search_races=2, search_iterations=2)


def checkpoint(source: str | None) -> NewCheckpoint:
    return NewCheckpoint(
        id=uuid.uuid4(),
        path="run/ckpt-000003.pt",
        iteration=3,
        global_step=768,
        stage=TrainingStage.RUNNER,
        bot_source=source,
        bot_contract=None,
        summary={},
    )


@pytest.mark.slow
def test_every_opponent_plays_its_races_and_the_counts_add_up() -> None:
    results = evaluate_source(RUNNER_SOURCE, SMALL)
    assert [r.opponent for r in results] == [RUNNER, BLOCKER, SEARCH]
    for result in results:
        assert result.races == 2 == result.wins + result.draws + result.losses
        low, high = result.interval
        assert low <= result.win_rate <= high
        assert result.seconds > 0
    again = evaluate_source(RUNNER_SOURCE, SMALL)
    outcomes = [(r.opponent, r.wins, r.draws, r.losses) for r in results]
    assert outcomes == [(r.opponent, r.wins, r.draws, r.losses) for r in again], "same tracks, same races"


def test_a_bot_whose_every_turn_fails_loses_every_race() -> None:
    results = evaluate_source(FAILING_SOURCE, SMALL)
    assert [(r.wins, r.draws, r.losses) for r in results] == [(0, 0, 2)] * 3


def test_a_passed_deadline_or_an_abandoned_chunk_plays_nothing_more() -> None:
    assert evaluate_source(RUNNER_SOURCE, SMALL, deadline=time.monotonic() - 1) == []
    calls = []

    def abandon_after_three_races() -> bool:
        calls.append(1)
        return len(calls) > 3

    results = evaluate_source(RUNNER_SOURCE, SMALL, abandon=abandon_after_three_races)
    assert [(r.opponent, r.races) for r in results] == [(RUNNER, 2), (BLOCKER, 1)], "the races played stay"


@pytest.mark.parametrize(
    ("args", "chunk", "last", "due"),
    [
        (TrainingEvaluationConfig(every_chunks=5), 4, False, True),
        (TrainingEvaluationConfig(every_chunks=5), 5, False, False),
        (TrainingEvaluationConfig(every_chunks=5), 6, True, True),
        (TrainingEvaluationConfig(every_chunks=1), 0, False, True),
        (TrainingEvaluationConfig(every_chunks=0), 4, True, False),
        (TrainingEvaluationConfig(every_chunks=1, races=0, search_races=0), 0, True, False),
    ],
)
def test_an_evaluation_comes_every_n_chunks_and_after_the_last(
    args: TrainingEvaluationConfig, chunk: int, last: bool, due: bool
) -> None:
    assert is_due(args, chunk, last) is due


def test_a_failing_evaluation_is_logged_and_the_chunk_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="services.trainer")
    rows = evaluate_checkpoint(
        uuid.uuid4(), checkpoint("def decide(:\n"), SMALL, deadline=float("inf"), abandon=lambda: False
    )
    assert rows == []
    assert "evaluation of iteration 3 failed: ShowcaseError" in caplog.text
    assert evaluate_checkpoint(uuid.uuid4(), checkpoint(None), SMALL, deadline=0, abandon=lambda: False) == []


@pytest.mark.slow
def test_the_handler_stores_what_the_races_gave() -> None:
    rows = evaluate_checkpoint(
        uuid.uuid4(), checkpoint(RUNNER_SOURCE), SMALL, deadline=float("inf"), abandon=lambda: False
    )
    assert [row.opponent for row in rows] == [RUNNER, BLOCKER, SEARCH]
    assert [row.opponent_config for row in rows] == [{}, {}, {"max_iterations": 2}]
    for row in rows:
        assert row.races == row.wins + row.draws + row.losses == 2
        assert row.win_rate == row.wins / row.races
        assert row.win_rate_low <= row.win_rate <= row.win_rate_high
