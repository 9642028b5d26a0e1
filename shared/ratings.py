"""Ratings: OpenSkill Plackett-Luce per game, leaderboard by the conservative ordinal mu - 3 sigma.

Rules:
* a bot's first rating in a game is the model default (mu 25, sigma 25/3, ordinal 0);
* a rated match updates every participant once, from the match result's ranks (0 is first; equal
  ranks are a draw); the runner calls `apply_match_result` inside the transaction that marks the
  match finished, so a match can never be counted twice;
* a new version of a bot (a hosted bot's new upload) keeps its mu but gets its uncertainty back
  (`on_new_version`): the new code is probably related to the old one, but it must prove itself,
  so its ordinal drops and the ladder, which favours high-sigma bots, schedules it sooner.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from openskill.models import PlackettLuce
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from shared.db.models import Rating

ORDINAL_SIGMAS = 3.0
"""The leaderboard ranks by mu - ORDINAL_SIGMAS * sigma: a bot is as good as we are sure it is."""


@cache
def model() -> PlackettLuce:
    return PlackettLuce()


def default_mu() -> float:
    return float(model().mu)


def default_sigma() -> float:
    return float(model().sigma)


def ordinal(mu: float, sigma: float) -> float:
    return mu - ORDINAL_SIGMAS * sigma


@dataclass(frozen=True, slots=True)
class Skill:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return ordinal(self.mu, self.sigma)


def default_skill() -> Skill:
    return Skill(default_mu(), default_sigma())


def rate(skills: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
    """New skills of one-bot teams after a match: lower rank is better, equal ranks drew."""
    if len(skills) != len(ranks):
        raise ValueError("one rank per player")
    if len(skills) < 2:
        return list(skills)
    pl = model()
    teams = [[pl.rating(mu=s.mu, sigma=s.sigma)] for s in skills]
    rated = pl.rate(teams, ranks=[float(r) for r in ranks])
    return [Skill(float(team[0].mu), float(team[0].sigma)) for team in rated]


def outcome(rank: int, ranks: Sequence[int]) -> str:
    """ "win" (alone in first place), "draw" (tied for first) or "loss"."""
    best = min(ranks)
    if rank != best:
        return "loss"
    return "win" if list(ranks).count(best) == 1 else "draw"


def new_rating(bot_id: uuid.UUID, game: str) -> Rating:
    """The Rating row of a bot that has not played yet (callers add it to their session)."""
    skill = default_skill()
    return Rating(
        bot_id=bot_id, game=game, mu=skill.mu, sigma=skill.sigma, ordinal=skill.ordinal, matches_played=0
    )


def ensure_ratings(session: Session, game: str, bot_ids: Sequence[uuid.UUID]) -> None:
    """Create missing Rating rows; safe when two transactions race (ON CONFLICT DO NOTHING)."""
    skill = default_skill()
    rows = [
        {
            "bot_id": bot_id,
            "game": game,
            "mu": skill.mu,
            "sigma": skill.sigma,
            "ordinal": skill.ordinal,
            "matches_played": 0,
            "wins": 0,
            "draws": 0,
            "losses": 0,
        }
        for bot_id in bot_ids
    ]
    if rows:
        session.execute(insert(Rating).values(rows).on_conflict_do_nothing(index_elements=["bot_id"]))


def lock_ratings(session: Session, game: str, bot_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, Rating]:
    """Rating rows for these bots, created if missing and locked FOR UPDATE.

    Rows are locked in bot-id order, so two finishing matches that share bots always lock in the
    same order and cannot deadlock.
    """
    ordered = sorted(set(bot_ids))
    ensure_ratings(session, game, ordered)
    stmt = (
        select(Rating)
        .where(Rating.bot_id.in_(ordered))
        .order_by(Rating.bot_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    return {rating.bot_id: rating for rating in session.scalars(stmt)}


@dataclass(frozen=True, slots=True)
class RatingChange:
    bot_id: uuid.UUID
    before: Skill
    after: Skill


def apply_match_result(
    session: Session, game: str, bot_ids: Sequence[uuid.UUID], ranks: Sequence[int]
) -> list[RatingChange]:
    """Update the ratings of a finished rated match, one entry per player in slot order.

    Call it inside the transaction that marks the match finished; that transaction is what makes
    the update happen exactly once.
    """
    if len(set(bot_ids)) != len(bot_ids):
        raise ValueError("a bot cannot appear twice in one match")
    rows = lock_ratings(session, game, bot_ids)
    before = [Skill(rows[b].mu, rows[b].sigma) for b in bot_ids]
    after = rate(before, ranks)
    changes = []
    for bot_id, rank, old, new in zip(bot_ids, ranks, before, after, strict=True):
        row = rows[bot_id]
        row.mu, row.sigma, row.ordinal = new.mu, new.sigma, new.ordinal
        row.matches_played += 1
        result = outcome(rank, ranks)
        if result == "win":
            row.wins += 1
        elif result == "draw":
            row.draws += 1
        else:
            row.losses += 1
        changes.append(RatingChange(bot_id, old, new))
    session.flush()
    return changes


def on_new_version(rating: Rating) -> Rating:
    """Reset a rating's uncertainty when its bot gets a new version: keep mu, sigma back up to at
    least half the default. Modifies the row in place (the caller commits) and returns it."""
    rating.sigma = max(rating.sigma, default_sigma() / 2)
    rating.ordinal = ordinal(rating.mu, rating.sigma)
    return rating
