"""The ladder: keeps rated matches flowing between active bots without flooding the queue.

Each tick, per game:
1. count the game's ladder matches that are queued or running; only fill up to
   `settings.ladder_max_pending` (so the queue never outgrows what the workers play);
2. seed each new match with the bot that is least busy, then has waited longest (never played
   first), then is least certain (highest sigma): new and rarely seen bots get games first;
3. pick opponents within the seed's reach (below), preferring those it has met least lately;
4. shuffle the slots (start positions can matter) and queue the match.
A transaction-scoped advisory lock per game makes concurrent ticks (two beat processes) harmless.

Reach ("a reasonable rating distance"): bot B is within A's reach when
    |mu_A - mu_B| <= settings.ladder_rating_window + REACH_SIGMAS * sqrt(sigma_A^2 + sigma_B^2),
that is, when their skills are close or not yet told apart (the window is in mu points, 5 by
default; a new bot, sigma 8.3, reaches every bot within about 22 points of its mu, so it meets the
whole field early). A's NEAREST_OPPONENTS closest bots in mu are always within reach, so an outlier
still plays. Reach uses mu, not the ordinal: the ordinal of an uncertain bot is far below its
likely skill, which once kept a new bot away from the stronger half of the field. Among
the seed's reachable opponents the ladder draws at random with weight 1 / (1 + meetings)^2, where
meetings counts the pair's ladder matches among the game's last PAIR_MEMORY ladder matches
(pending ones included): a pair that has not met is strongly preferred, so over time every pair
within reach meets, and pairs meet about equally often. With probability EXPLORATION the draw is
uniform over the reachable opponents, so the schedule never settles into a fixed rotation.

Health: a bot whose last pre-match health check failed is skipped for
`settings.health_backoff_s` x 2^(failures - 1); after `settings.health_suspend_after` failures it
is suspended (services/match_runner/health.py) and leaves the ladder until its owner reactivates it.
"""

from __future__ import annotations

import logging
import math
import random
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, aliased

from shared import ratings
from shared.config import Settings
from shared.db.models import Bot, Match, MatchParticipant, Rating
from shared.db.session import session_scope
from shared.games.registry import game_names, get_game
from shared.matches import create_match, enqueue_match
from shared.states import BotStatus, MatchKind, MatchStatus

log = logging.getLogger(__name__)

NEAREST_OPPONENTS = 3
"""A bot's this many closest bots in mu are always within its reach."""
DEFAULT_RATING_WINDOW = 5.0
"""The mu distance within reach, beyond the sigmas, when no settings are given (module docstring)."""
REACH_SIGMAS = 2.0
EXPLORATION = 0.1
"""The chance that an opponent is drawn uniformly among those in reach, ignoring past meetings."""
PAIR_MEMORY = 1000
"""How many of a game's latest ladder matches count as "lately" for pair meetings."""

PairCounts = Counter[frozenset[uuid.UUID]]
"""Ladder matches per pair of bots (lately, pending included)."""


@dataclass
class Candidate:
    bot_id: uuid.UUID
    last_match_at: datetime | None
    sigma: float
    ordinal: float
    busy: int = 0
    """Pending ladder matches this bot is already in."""
    mu: float | None = None
    """The rating's mu; derived from the ordinal and sigma when not given."""

    @property
    def skill(self) -> float:
        return self.mu if self.mu is not None else self.ordinal + ratings.ORDINAL_SIGMAS * self.sigma

    def seed_key(self) -> tuple[int, int, float, float]:
        waited = self.last_match_at.timestamp() if self.last_match_at else 0.0
        return (self.busy, 0 if self.last_match_at is None else 1, waited, -self.sigma)


def within_reach(a: Candidate, b: Candidate, window: float) -> bool:
    """Close enough in skill, allowing for how unsure both ratings still are (module docstring)."""
    return abs(a.skill - b.skill) <= window + REACH_SIGMAS * math.hypot(a.sigma, b.sigma)


def in_reach(bot: Candidate, others: Sequence[Candidate], window: float) -> list[Candidate]:
    """The bots within `bot`'s reach, nearest first; its NEAREST_OPPONENTS nearest always are."""
    ranked = sorted((c for c in others if c.bot_id != bot.bot_id), key=lambda c: abs(c.skill - bot.skill))
    return [c for i, c in enumerate(ranked) if i < NEAREST_OPPONENTS or within_reach(bot, c, window)]


def _draw_opponent(seed: Candidate, pool: list[Candidate], met: PairCounts, rng: random.Random) -> Candidate:
    if rng.random() < EXPLORATION:
        return rng.choice(pool)
    weights = [1.0 / (1 + met[frozenset((seed.bot_id, c.bot_id))] + c.busy) ** 2 for c in pool]
    return rng.choices(pool, weights=weights)[0]


def plan_pairings(
    candidates: list[Candidate],
    room: int,
    players: int,
    rng: random.Random,
    met: PairCounts | None = None,
    window: float = DEFAULT_RATING_WINDOW,
) -> list[list[uuid.UUID]]:
    """Up to `room` new matches of `players` bots each, in slot order (see the module docstring).

    `met` (updated in place with the planned matches) counts recent meetings per pair.
    """
    met = met if met is not None else Counter()
    pairings: list[list[uuid.UUID]] = []
    if players < 2 or len(candidates) < players:
        return pairings
    for _ in range(room):
        seed = min(candidates, key=Candidate.seed_key)
        pool = in_reach(seed, candidates, window)
        chosen = [seed]
        while len(chosen) < players:
            if not pool:  # fewer bots in reach than seats: fill from the nearest of the rest
                pool = [c for c in in_reach(seed, candidates, float("inf")) if c not in chosen]
            opponent = _draw_opponent(seed, pool, met, rng)
            pool.remove(opponent)
            chosen.append(opponent)
        for i, a in enumerate(chosen):
            for b in chosen[i + 1 :]:
                met[frozenset((a.bot_id, b.bot_id))] += 1
        rng.shuffle(chosen)
        for candidate in chosen:
            candidate.busy += 1
        pairings.append([c.bot_id for c in chosen])
    return pairings


def _pending_count(session: Session, game: str) -> int:
    stmt = select(func.count()).where(
        Match.game == game, Match.kind == MatchKind.LADDER, Match.status.in_(MatchStatus.pending())
    )
    return int(session.scalar(stmt) or 0)


def _pair_counts(session: Session, game: str) -> PairCounts:
    """Meetings per pair among the game's latest PAIR_MEMORY ladder matches (pending included)."""
    recent = (
        select(Match.id)
        .where(
            Match.game == game,
            Match.kind == MatchKind.LADDER,
            Match.status.in_([*MatchStatus.pending(), MatchStatus.FINISHED]),
        )
        .order_by(Match.created_at.desc())
        .limit(PAIR_MEMORY)
        .subquery()
    )
    a, b = aliased(MatchParticipant), aliased(MatchParticipant)
    rows = session.execute(
        select(a.bot_id, b.bot_id, func.count())
        .join(b, (b.match_id == a.match_id) & (a.bot_id < b.bot_id))
        .where(a.match_id.in_(select(recent.c.id)))
        .group_by(a.bot_id, b.bot_id)
    )
    return Counter({frozenset((x, y)): int(count) for x, y, count in rows})


def _resting(bot_failures: int, last_check: datetime | None, settings: Settings, now: datetime) -> bool:
    """Whether a bot whose last health check failed is still in its back-off."""
    if bot_failures <= 0 or last_check is None:
        return False
    backoff = settings.health_backoff_s * 2 ** min(bot_failures - 1, 16)
    return now - last_check < timedelta(seconds=backoff)


def ladder_candidates(session: Session, game: str, settings: Settings) -> list[Candidate]:
    busy_rows = session.execute(
        select(MatchParticipant.bot_id, func.count())
        .join(Match, Match.id == MatchParticipant.match_id)
        .where(Match.game == game, Match.kind == MatchKind.LADDER, Match.status.in_(MatchStatus.pending()))
        .group_by(MatchParticipant.bot_id)
    )
    busy = {bot_id: int(count) for bot_id, count in busy_rows}
    default = ratings.default_skill()
    rows = session.execute(
        select(
            Bot.id,
            Bot.last_match_at,
            Rating.mu,
            Rating.sigma,
            Rating.ordinal,
            Bot.health_failures,
            Bot.last_health_check_at,
        )
        .outerjoin(Rating, Rating.bot_id == Bot.id)
        .where(Bot.game == game, Bot.status == BotStatus.ACTIVE)
    )
    now = datetime.now(UTC)
    return [
        Candidate(
            bot_id=bot_id,
            last_match_at=last,
            sigma=sigma if sigma is not None else default.sigma,
            ordinal=ordinal if ordinal is not None else default.ordinal,
            busy=busy.get(bot_id, 0),
            mu=mu if mu is not None else default.mu,
        )
        for bot_id, last, mu, sigma, ordinal, failures, checked in rows
        if not _resting(failures, checked, settings, now)
    ]


def schedule_game(game: str, settings: Settings, rng: random.Random) -> list[uuid.UUID]:
    """Create this tick's ladder matches for one game (committed); returns their ids."""
    impl = get_game(game)
    with session_scope() as session:
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"arena-ladder:{game}"})
        room = settings.ladder_max_pending - _pending_count(session, game)
        if room <= 0:
            return []
        candidates = ladder_candidates(session, game, settings)
        players = impl.ladder_players
        met = _pair_counts(session, game)
        created = [
            create_match(session, game=game, bot_ids=bots, kind=MatchKind.LADDER, rated=True).id
            for bots in plan_pairings(candidates, room, players, rng, met, settings.ladder_rating_window)
        ]
    return created


def ladder_tick(settings: Settings, rng: random.Random | None = None) -> list[uuid.UUID]:
    """One ladder tick over every game; queues and returns the created matches."""
    rng = rng or random.SystemRandom()
    created: list[uuid.UUID] = []
    for game in game_names():
        try:
            ids = schedule_game(game, settings, rng)
        except Exception:
            log.exception("ladder tick failed for %s", game)
            continue
        for match_id in ids:
            enqueue_match(match_id)
        created.extend(ids)
    if created:
        log.info("ladder queued %d matches", len(created))
    return created
