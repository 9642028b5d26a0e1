"""The ladder: keeps rated matches flowing between active bots without flooding the queue.

Each tick, per game:
1. count the game's ladder matches that are queued or running; only fill up to
   `settings.ladder_max_pending` (so the queue never outgrows what the workers play);
2. seed each new match with the bot that is least busy, then has waited longest (never played
   first), then is least certain (highest sigma): new and rarely seen bots get games first;
3. pick opponents among the few bots closest to the seed's ordinal (mu - 3 sigma), at random
   among those, so pairings are informative but not always the same;
4. shuffle the slots (start positions can matter) and queue the match.
A transaction-scoped advisory lock per game makes concurrent ticks (two beat processes) harmless.
"""

from __future__ import annotations

import logging
import random
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from shared import ratings
from shared.config import Settings
from shared.db.models import Bot, Match, MatchParticipant, Rating
from shared.db.session import session_scope
from shared.games.registry import game_names, get_game
from shared.matches import create_match, enqueue_match

log = logging.getLogger(__name__)

NEAREST_OPPONENTS = 3
"""Opponents are drawn from this many bots closest in ordinal to the seed."""
PENDING = ("queued", "running")


@dataclass
class Candidate:
    bot_id: uuid.UUID
    last_match_at: datetime | None
    sigma: float
    ordinal: float
    busy: int = 0
    """Pending ladder matches this bot is already in."""

    def seed_key(self) -> tuple[int, int, float, float]:
        waited = self.last_match_at.timestamp() if self.last_match_at else 0.0
        return (self.busy, 0 if self.last_match_at is None else 1, waited, -self.sigma)


def plan_pairings(
    candidates: list[Candidate], room: int, players: int, rng: random.Random
) -> list[list[uuid.UUID]]:
    """Up to `room` new matches of `players` bots each, in slot order (see the module docstring)."""
    pairings: list[list[uuid.UUID]] = []
    if players < 2 or len(candidates) < players:
        return pairings
    for _ in range(room):
        seed = min(candidates, key=Candidate.seed_key)
        others = [c for c in candidates if c.bot_id != seed.bot_id]
        others.sort(key=lambda c: (abs(c.ordinal - seed.ordinal), c.busy))
        window = others[: max(players - 1, NEAREST_OPPONENTS)]
        chosen = [seed, *rng.sample(window, players - 1)]
        rng.shuffle(chosen)
        for candidate in chosen:
            candidate.busy += 1
        pairings.append([c.bot_id for c in chosen])
    return pairings


def _pending_count(session: Session, game: str) -> int:
    stmt = select(func.count()).where(Match.game == game, Match.kind == "ladder", Match.status.in_(PENDING))
    return int(session.scalar(stmt) or 0)


def _candidates(session: Session, game: str) -> list[Candidate]:
    busy_rows = session.execute(
        select(MatchParticipant.bot_id, func.count())
        .join(Match, Match.id == MatchParticipant.match_id)
        .where(Match.game == game, Match.kind == "ladder", Match.status.in_(PENDING))
        .group_by(MatchParticipant.bot_id)
    )
    busy = {bot_id: int(count) for bot_id, count in busy_rows}
    default = ratings.default_skill()
    rows = session.execute(
        select(Bot.id, Bot.last_match_at, Rating.sigma, Rating.ordinal)
        .outerjoin(Rating, Rating.bot_id == Bot.id)
        .where(Bot.game == game, Bot.status == "active")
    )
    return [
        Candidate(
            bot_id=bot_id,
            last_match_at=last,
            sigma=sigma if sigma is not None else default.sigma,
            ordinal=ordinal if ordinal is not None else default.ordinal,
            busy=busy.get(bot_id, 0),
        )
        for bot_id, last, sigma, ordinal in rows
    ]


def schedule_game(game: str, settings: Settings, rng: random.Random) -> list[uuid.UUID]:
    """Create this tick's ladder matches for one game (committed); returns their ids."""
    impl = get_game(game)
    with session_scope() as session:
        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"arena-ladder:{game}"})
        room = settings.ladder_max_pending - _pending_count(session, game)
        if room <= 0:
            return []
        candidates = _candidates(session, game)
        players = impl.ladder_players
        created = [
            create_match(session, game=game, bot_ids=bots, kind="ladder", rated=True).id
            for bots in plan_pairings(candidates, room, players, rng)
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
