"""Rating rules: OpenSkill Plackett-Luce, ordinal = mu - 3 sigma, draws, new versions."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from shared import ratings
from shared.db.models import Rating


def test_winner_goes_up_and_loser_down() -> None:
    start = ratings.default_skill()
    winner, loser = ratings.rate([start, start], [0, 1])
    assert winner.mu > start.mu > loser.mu
    assert winner.sigma < start.sigma
    assert loser.sigma < start.sigma
    assert winner.ordinal > loser.ordinal
    assert winner.mu - start.mu == pytest.approx(start.mu - loser.mu)


def test_slot_order_does_not_matter_only_ranks() -> None:
    start = ratings.default_skill()
    a, b = ratings.rate([start, start], [1, 0])
    assert b.mu > a.mu


def test_draw_between_equals_keeps_mu_and_shrinks_sigma() -> None:
    start = ratings.default_skill()
    a, b = ratings.rate([start, start], [0, 0])
    assert a.mu == pytest.approx(start.mu)
    assert b.mu == pytest.approx(start.mu)
    assert a.sigma < start.sigma


def test_draw_against_a_stronger_bot_helps_the_weaker() -> None:
    strong, weak = ratings.Skill(35.0, 3.0), ratings.Skill(20.0, 3.0)
    new_strong, new_weak = ratings.rate([strong, weak], [0, 0])
    assert new_weak.mu > weak.mu
    assert new_strong.mu < strong.mu


def test_upset_moves_ratings_more_than_an_expected_result() -> None:
    strong, weak = ratings.Skill(35.0, 4.0), ratings.Skill(20.0, 4.0)
    expected = ratings.rate([strong, weak], [0, 1])
    upset = ratings.rate([strong, weak], [1, 0])
    assert (upset[1].mu - weak.mu) > (expected[0].mu - strong.mu) > 0


def test_ordinal_is_conservative() -> None:
    assert ratings.default_skill().ordinal == pytest.approx(0.0)
    sure, unsure = ratings.Skill(25.0, 1.0), ratings.Skill(27.0, 5.0)
    assert sure.ordinal == pytest.approx(22.0)
    assert sure.ordinal > unsure.ordinal  # a slightly lower mu we are sure of ranks higher


def test_outcome_for_wins_draws_and_losses() -> None:
    assert ratings.outcome(0, [0, 1]) == "win"
    assert ratings.outcome(1, [0, 1]) == "loss"
    assert ratings.outcome(0, [0, 0]) == "draw"
    assert ratings.outcome(0, [0, 0, 2]) == "draw"
    assert ratings.outcome(2, [0, 0, 2]) == "loss"


def test_new_version_keeps_mu_and_raises_sigma() -> None:
    row = ratings.new_rating(uuid.uuid4(), "podracing")
    row.mu, row.sigma = 31.0, 1.5
    ratings.on_new_version(row)
    assert row.mu == 31.0
    assert row.sigma == pytest.approx(ratings.default_sigma() / 2)
    assert row.ordinal == pytest.approx(31.0 - 3 * row.sigma)
    row.sigma = 7.0  # already uncertain: unchanged
    ratings.on_new_version(row)
    assert row.sigma == 7.0


def test_apply_match_result_creates_locks_and_counts(
    db_session: Session, register_bot: Callable[..., uuid.UUID]
) -> None:
    a, b, c = register_bot(), register_bot(), register_bot()
    first = ratings.apply_match_result(db_session, "podracing", [a, b], [1, 0])
    assert [ch.bot_id for ch in first] == [a, b]
    assert first[0].before == ratings.default_skill()
    assert first[0].after.mu < first[0].before.mu
    second = ratings.apply_match_result(db_session, "podracing", [b, c], [0, 0])
    assert second[0].before == first[1].after  # b's second match starts from its first result
    rows = {r.bot_id: r for r in db_session.scalars(select(Rating).where(Rating.bot_id.in_([a, b, c])))}
    assert (rows[a].matches_played, rows[a].wins, rows[a].losses) == (1, 0, 1)
    assert (rows[b].matches_played, rows[b].wins, rows[b].draws) == (2, 1, 1)
    assert (rows[c].matches_played, rows[c].draws) == (1, 1)
    assert rows[b].ordinal == pytest.approx(rows[b].mu - 3 * rows[b].sigma)
    with pytest.raises(ValueError, match="a bot cannot appear twice in one match"):
        ratings.apply_match_result(db_session, "podracing", [a, a], [0, 1])
