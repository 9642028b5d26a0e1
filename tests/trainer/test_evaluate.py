"""Evaluation: seats swap on each track, processes change nothing, and the interval is Wilson's."""

from __future__ import annotations

import pytest

from services.trainer.evaluate import Outcome, evaluate, wilson_interval
from shared.play.errors import PlayError

ONE_LAP = {"laps": 1}


def test_wilson_interval_matches_hand_computed_values() -> None:
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.236593, abs=1e-6)
    assert high == pytest.approx(0.763407, abs=1e-6)
    low, high = wilson_interval(0, 20)
    assert low == 0.0
    assert high == pytest.approx(0.161125, abs=1e-6)
    assert wilson_interval(20, 20)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.slow
def test_seats_swap_on_each_track_and_jobs_change_nothing() -> None:
    # The runner against itself: swapping seats replays the very same race, so on each track the
    # evaluated side wins once and loses once (or draws twice).
    result = evaluate("builtin:runner", "builtin:runner", 4, seed=7, config=ONE_LAP)
    assert [(race.seed, race.seat) for race in result.outcomes] == [(7, 0), (7, 1), (8, 0), (8, 1)]
    for first, second in zip(result.outcomes[::2], result.outcomes[1::2], strict=True):
        pair = {first.outcome, second.outcome}
        assert pair in ({Outcome.WIN, Outcome.LOSS}, {Outcome.DRAW}), (first, second)
        assert first.turns == second.turns
    assert result.wins == result.losses
    assert result.races == 4
    assert result.bot_ms_per_decide is not None
    assert result.bot_failed_turns == 0

    against_blocker = evaluate("builtin:runner", "builtin:blocker", 4, seed=7, config=ONE_LAP)
    in_two = evaluate("builtin:runner", "builtin:blocker", 4, seed=7, config=ONE_LAP, jobs=2)
    assert [r.outcome for r in in_two.outcomes] == [r.outcome for r in against_blocker.outcomes]
    assert [r.turns for r in in_two.outcomes] == [r.turns for r in against_blocker.outcomes]
    low, high = against_blocker.interval
    assert low <= against_blocker.win_rate <= high


def test_unusable_arguments_are_refused_before_any_race() -> None:
    with pytest.raises(PlayError, match="at least 1"):
        evaluate("builtin:runner", "builtin:blocker", 0)
    with pytest.raises(PlayError, match="unknown built-in bot 'nobody'"):
        evaluate("builtin:nobody", "builtin:blocker", 2)
    with pytest.raises(PlayError, match="invalid --config"):
        evaluate("builtin:runner", "builtin:blocker", 2, config={"laps": 0})
