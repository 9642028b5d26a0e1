"""The match runner for real: celery workers started as compose starts them, matches queued in the
test database, and what a finished match left behind.

Importing this module builds the Celery app (through shared.matches), which reads the settings:
tests/conftest.py must have set the test environment first, as it does for every test module.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any, TypedDict

import pytest
import redis
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from services.match_runner.commands import worker_command
from shared import ratings
from shared.config import get_settings
from shared.crypto import encrypt_secret
from shared.db.models import Bot, Match, MatchParticipant, Rating, User
from shared.db.session import session_scope
from shared.matches import create_match, enqueue_match
from shared.queue import QUEUE_MATCHES
from shared.states import MatchStatus
from tests.support.bot_processes import RunningBot
from tests.support.processes import PYTHON, ManagedProcess

SMALL_RACE = {"laps": 1, "max_turns": 60}
"""Small podracing matches: at most 60 turns."""

WORKER_ENV = {
    "ARENA_TURN_TIMEOUT_MS": "400",
    "ARENA_FIRST_TURN_TIMEOUT_MS": "1500",
    "ARENA_MAX_CONSECUTIVE_FAILURES": "4",
    "ARENA_HEALTH_TIMEOUT_S": "2",
    "ARENA_HEARTBEAT_INTERVAL_S": "0.3",
    "ARENA_STALE_MATCH_AFTER_S": "2",
}
"""Settings of the test workers: short timeouts so misbehaving bots forfeit quickly."""


class SendOptions(TypedDict, total=False):
    """Options of Celery's send_task that tests give a play message (Celery's defaults otherwise)."""

    countdown: float
    priority: int


def start_worker(name: str, env: dict[str, str] | None = None) -> ManagedProcess:
    worker = ManagedProcess(
        [*worker_command(name=f"{name}-{uuid.uuid4().hex[:6]}@%h", python=PYTHON), "--without-heartbeat"],
        name,
        env={**WORKER_ENV, **(env or {})},
    )
    worker.wait_log("ready.", timeout=60)
    return worker


def cancel_earlier_matches() -> None:
    """Cancel the matches that earlier tests of this session left queued or running, and empty the
    matches queue: a worker started next plays only what its own tests queue then. (The gateway's
    tests queue matches that no worker takes, hosted bots' among them; a worker started later would
    play them first, and keep their sandboxes beside its own tests'.)"""
    with session_scope() as session:
        session.execute(
            update(Match)
            .where(Match.status.in_([MatchStatus.QUEUED, MatchStatus.RUNNING]))
            .values(status=MatchStatus.CANCELLED)
        )
    with redis.Redis.from_url(get_settings().redis_url) as client:
        client.delete(QUEUE_MATCHES)


def queue_match(
    bot_ids: list[uuid.UUID], *, seed: int = 7, config: dict[str, Any] | None = None, send: bool = True
) -> uuid.UUID:
    with session_scope() as session:
        match = create_match(
            session, game="podracing", bot_ids=bot_ids, seed=seed, config=config or dict(SMALL_RACE)
        )
        match_id = match.id
    if send:
        enqueue_match(match_id)
    return match_id


def match_between_new_bots(
    database_url: str, bots: list[RunningBot], prefix: str, *, seed: int | None = None
) -> uuid.UUID:
    """A queued small race (message not sent) between `bots`, registered afresh under a new user
    in the database at `database_url`: their only match, so nothing else of theirs interferes."""
    settings = get_settings()
    with session_scope(database_url) as session:
        user = User(name=f"{prefix}-{uuid.uuid4().hex[:8]}")
        session.add(user)
        session.flush()
        bot_ids = []
        for bot in bots:
            row = Bot(
                owner_id=user.id,
                name=f"{prefix}-{uuid.uuid4().hex[:8]}",
                game="podracing",
                kind="http",
                endpoint=bot.endpoint,
                secret_encrypted=encrypt_secret(settings, bot.secret),
            )
            session.add(row)
            session.flush()
            bot_ids.append(row.id)
        return create_match(session, game="podracing", bot_ids=bot_ids, seed=seed, config=dict(SMALL_RACE)).id


def wait_for_match(match_id: uuid.UUID, worker: ManagedProcess | None = None, timeout: float = 60) -> Match:
    """Poll until the match leaves queued/running; return it with participants loaded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with session_scope() as session:
            match = session.scalars(select(Match).where(Match.id == match_id)).one()
            if match.status not in ("queued", "running"):
                _ = list(match.participants), match.replay
                return match
        if worker is not None and not worker.alive():
            raise AssertionError(f"worker died:\n{worker.log()[-3000:]}")
        time.sleep(0.1)
    tail = worker.log()[-3000:] if worker is not None else ""
    raise AssertionError(f"match {match_id} did not end within {timeout}s\n{tail}")


def participants_and_ratings(
    session: Session, match_id: uuid.UUID
) -> tuple[list[MatchParticipant], dict[uuid.UUID, Rating]]:
    """A match's participants in slot order and their bots' rating rows, by bot id."""
    participants = list(
        session.scalars(
            select(MatchParticipant)
            .where(MatchParticipant.match_id == match_id)
            .order_by(MatchParticipant.slot)
        )
    )
    bot_ids = [p.bot_id for p in participants]
    rows = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.bot_id.in_(bot_ids)))}
    return participants, rows


def finished_ranks(participants: Sequence[MatchParticipant]) -> list[int]:
    """The ranks of a finished match's participants, in their order: every one has a rank."""
    ranks: list[int] = []
    for participant in participants:
        assert participant.rank is not None, f"slot {participant.slot} has no rank"
        ranks.append(participant.rank)
    return ranks


def assert_rated_exactly_once(match_id: uuid.UUID) -> list[MatchParticipant]:
    """Each of the two bots' ratings is exactly one update away from the default, the update this
    match made (the bots are registered fresh for the match, so it is their only one); returns the
    participants in slot order."""
    default = ratings.default_skill()
    with session_scope() as session:
        participants, rows = participants_and_ratings(session, match_id)
    assert len(participants) == 2
    for participant in participants:
        rating = rows[participant.bot_id]
        assert rating.matches_played == 1
        assert rating.wins + rating.draws + rating.losses == 1
        assert participant.mu_before == pytest.approx(default.mu)
        assert participant.sigma_before == pytest.approx(default.sigma)
        assert rating.mu == pytest.approx(participant.mu_after)
        assert rating.sigma == pytest.approx(participant.sigma_after)
    expected = ratings.rate([default, default], finished_ranks(participants))
    assert [p.mu_after for p in participants] == pytest.approx([s.mu for s in expected])
    return participants
