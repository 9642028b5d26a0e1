"""Pairing spread of the real ladder scheduler: over time every active bot meets every other bot
within reach (services/match_runner/ladder.py defines reach), not only its two or three nearest.

Nine bots of spread strength play simulated matches; the scheduler is the real one (schedule_game
on the test database), the ratings are updated with the real shared.ratings code from each
simulated result, and the pair counts it reads are those of the matches it scheduled.
"""

from __future__ import annotations

import itertools
import math
import random
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from services.match_runner.ladder import Candidate, in_reach, schedule_game
from shared import ratings
from shared.config import Settings
from shared.db.models import Bot, Match, MatchParticipant, Rating
from shared.db.session import session_scope

BOTS = 9
WARM_UP = 150
MATCHES = 300
"""M: within this many ladder matches every pair within reach must have met."""
STRENGTH_STEP = 0.25
"""True strength difference between neighbours; win chance is logistic in the difference."""


def _simulate_results(
    game: str,
    match_ids: list[uuid.UUID],
    strength: dict[uuid.UUID, float],
    rng: random.Random,
    clock: datetime,
) -> None:
    """Play each match by coin flip weighted by true strength; rate it with the real rating code."""
    with session_scope() as session:
        for match_id in match_ids:
            bots = list(
                session.scalars(
                    select(MatchParticipant.bot_id)
                    .where(MatchParticipant.match_id == match_id)
                    .order_by(MatchParticipant.slot)
                )
            )
            a, b = bots
            p_a = 1.0 / (1.0 + math.exp(-(strength[a] - strength[b])))
            ranks = [0, 1] if rng.random() < p_a else [1, 0]
            ratings.apply_match_result(session, game, bots, ranks)
            session.execute(update(Match).where(Match.id == match_id).values(status="finished"))
            session.execute(update(Bot).where(Bot.id.in_(bots)).values(last_match_at=clock))


def _rated_candidates(bot_ids: list[uuid.UUID]) -> list[Candidate]:
    with session_scope() as session:
        rows = session.scalars(select(Rating).where(Rating.bot_id.in_(bot_ids))).all()
        return [Candidate(r.bot_id, None, r.sigma, r.ordinal, mu=r.mu) for r in rows]


def _run_ladder(
    matches: int, settings: Settings, strength: dict[uuid.UUID, float], rng: random.Random, clock: datetime
) -> Counter[frozenset[uuid.UUID]]:
    """Tick the real scheduler until `matches` matches were played; their pair counts."""
    met: Counter[frozenset[uuid.UUID]] = Counter()
    played = 0
    while played < matches:
        created = schedule_game("podracing", settings, rng)[: matches - played]
        assert created, "the ladder scheduled nothing"
        with session_scope() as session:
            for match_id in created:
                pair = session.scalars(
                    select(MatchParticipant.bot_id).where(MatchParticipant.match_id == match_id)
                ).all()
                met[frozenset(pair)] += 1
        clock += timedelta(minutes=1)
        _simulate_results("podracing", created, strength, rng, clock)
        played += len(created)
    return met


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.usefixtures("ladder_world")
def test_every_pair_within_reach_meets_including_a_newcomer(
    seed: int,
    register_bot: Callable[..., uuid.UUID],
) -> None:
    """Eight bots play WARM_UP matches; then a ninth, strong one joins, as in the report (a new bot
    never met two of the eight others in 286 matches). Within MATCHES more, every pair within
    reach at the end must have met at least once, the newcomer with every bot included."""
    rng = random.Random(seed)
    settings = Settings(dev_mode=True, ladder_max_pending=3)
    clock = datetime(2026, 1, 1, tzinfo=UTC)
    bot_ids = [register_bot() for _ in range(BOTS)]
    strength = {bot_id: i * STRENGTH_STEP for i, bot_id in enumerate(bot_ids)}
    newcomer = bot_ids[-2]  # the second strongest
    with session_scope() as session:
        session.execute(update(Bot).where(Bot.id == newcomer).values(status="inactive"))
    _run_ladder(WARM_UP, settings, strength, rng, clock)
    with session_scope() as session:
        session.execute(update(Bot).where(Bot.id == newcomer).values(status="active"))
    met = _run_ladder(MATCHES, settings, strength, rng, clock + timedelta(days=1))

    final = _rated_candidates(bot_ids)
    reach = {
        frozenset((bot.bot_id, other.bot_id))
        for bot in final
        for other in in_reach(bot, final, settings.ladder_rating_window)
    }
    counts = [met[frozenset(pair)] for pair in itertools.combinations(bot_ids, 2)]
    newcomer_counts = sorted(met[frozenset((newcomer, other))] for other in bot_ids if other != newcomer)
    spread = (
        f"pairs met {min(counts)}..{max(counts)} times, {sum(c == 0 for c in counts)} of 36 never; "
        f"the newcomer met the others {newcomer_counts} times"
    )
    mus = sorted(round(c.skill, 1) for c in final)
    print(f"\n{spread}; {len(reach)} pairs within reach; final mu {mus}")
    assert len(reach) >= 15, f"the test's ratings are too spread to mean anything: {mus}"
    never = [pair for pair in reach if met[pair] == 0]
    assert not never, f"{len(never)} pairs within reach never met in {MATCHES} matches ({spread})"
