"""The match runner's live events, end to end: a real worker plays a real match between two HTTP bots
on loopback while the test listens on the `matches` topic; and a match still finishes, rated, when
the events Redis is down or stalled.

Pub/sub channels are shared by every database of a Redis server, so the tests keep only the events
of their own matches.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select, update

from services.match_runner.tasks import TASK_REAP_STALE
from shared.config import get_settings
from shared.db.models import Bot, Match, MatchParticipant, Rating
from shared.db.session import session_scope
from shared.events import (
    TOPIC_MATCHES,
    EventStream,
    MatchEvent,
    MatchFinished,
    MatchStarted,
    RatingSnapshot,
)
from shared.ports import free_port
from shared.queue import QUEUE_MATCHES, send_task
from shared.states import MatchKind, MatchStatus
from tests.support.bot_processes import RunningBot
from tests.support.match_runner import participants_and_ratings, queue_match, start_worker, wait_for_match
from tests.support.processes import ManagedProcess


def _published(metrics_url: str, outcome: str) -> float:
    text = httpx.get(metrics_url, timeout=5).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "arena_events_published_total" and sample.labels == {
                "topic": "matches",
                "outcome": outcome,
            }:
                return sample.value
    return 0.0


def _metrics_worker(name: str, env: dict[str, str] | None = None) -> ManagedProcess:
    port = free_port()
    worker = start_worker(name, {"ARENA_WORKER_METRICS_PORT": str(port), **(env or {})})
    worker.metrics_url = f"http://127.0.0.1:{port}/metrics"  # type: ignore[attr-defined]
    return worker


@pytest.fixture
def worker(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    """A worker of this test's own (a worker left from another test would take our matches)."""
    process = _metrics_worker("events-worker")
    yield process
    process.stop()


@pytest.fixture
def two_bots(
    bot_factory: Callable[..., RunningBot], register_bot: Callable[..., uuid.UUID]
) -> list[uuid.UUID]:
    return [register_bot(bot_factory("ok")) for _ in range(2)]


def play_and_listen(bot_ids: list[uuid.UUID], timeout_s: float = 90) -> tuple[uuid.UUID, list[MatchEvent]]:
    """Subscribe, queue a match, and return its events up to and including MatchFinished."""

    async def scenario() -> tuple[uuid.UUID, list[MatchEvent]]:
        async with EventStream([TOPIC_MATCHES]) as stream:
            assert stream.ready.is_set(), "not subscribed"
            match_id = await asyncio.to_thread(queue_match, bot_ids)
            events: list[MatchEvent] = []
            async with asyncio.timeout(timeout_s):
                async for event in stream:
                    if isinstance(event, MatchEvent) and event.match_id == match_id:
                        events.append(event)
                        if isinstance(event, MatchFinished):
                            break
            return match_id, events

    return asyncio.run(scenario())


def _stored(
    match_id: uuid.UUID,
) -> tuple[Match, list[MatchParticipant], dict[uuid.UUID, Rating], dict[uuid.UUID, str]]:
    with session_scope() as session:
        match = session.get(Match, match_id)
        assert match is not None
        participants, rating_rows = participants_and_ratings(session, match_id)
        bot_ids = [p.bot_id for p in participants]
        names = {b.id: b.name for b in session.scalars(select(Bot).where(Bot.id.in_(bot_ids)))}
        session.expunge_all()
        return match, participants, rating_rows, names


@pytest.mark.slow
def test_a_real_match_announces_its_start_and_its_rated_result(
    worker: ManagedProcess, two_bots: list[uuid.UUID]
) -> None:
    match_id, events = play_and_listen(two_bots)
    assert [type(e) for e in events] == [MatchStarted, MatchFinished], events
    started, finished = events
    assert isinstance(started, MatchStarted)
    assert isinstance(finished, MatchFinished)
    match, participants, rating_rows, names = _stored(match_id)

    assert (started.game, started.kind, started.rated, started.attempt) == (
        "podracing",
        MatchKind.CHALLENGE,
        True,
        1,
    )
    assert [(s.slot, s.bot_id, s.name) for s in started.participants] == [
        (slot, bot_id, names[bot_id]) for slot, bot_id in enumerate(two_bots)
    ]
    assert started.timestamp <= finished.timestamp

    assert match.status == MatchStatus.FINISHED
    assert match.rated
    assert finished.status == MatchStatus.FINISHED
    assert finished.rated
    assert finished.error is None
    assert (finished.turns, finished.end_reason) == (match.turns, match.end_reason)
    assert len(finished.participants) == len(participants) == 2
    for seat, stored in zip(finished.participants, participants, strict=True):
        assert (seat.slot, seat.bot_id, seat.name) == (stored.slot, stored.bot_id, names[stored.bot_id])
        assert (seat.rank, seat.score) == (stored.rank, stored.score)
        assert seat.rating_before is not None
        assert seat.rating_after is not None
        assert (seat.rating_before.mu, seat.rating_before.sigma) == (stored.mu_before, stored.sigma_before)
        assert (seat.rating_after.mu, seat.rating_after.sigma) == (stored.mu_after, stored.sigma_after)
        row = rating_rows[stored.bot_id]
        assert seat.rating_after == RatingSnapshot(mu=row.mu, sigma=row.sigma, ordinal=row.ordinal)
        assert seat.rating_before.ordinal == pytest.approx(
            seat.rating_before.mu - 3 * seat.rating_before.sigma
        )
    assert sorted(seat.rank for seat in finished.participants if seat.rank is not None) in ([0, 1], [0, 0])
    assert _published(worker.metrics_url, "sent") >= 2  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.usefixtures("worker")
def test_a_failed_match_announces_its_failure(register_bot: Callable[..., uuid.UUID]) -> None:
    nowhere = [register_bot(endpoint=f"http://127.0.0.1:{free_port()}") for _ in range(2)]
    match_id, events = play_and_listen(nowhere)
    assert [type(e) for e in events] == [MatchStarted, MatchFinished], events
    finished = events[-1]
    assert isinstance(finished, MatchFinished)
    match, _, _, _ = _stored(match_id)
    assert match.status == MatchStatus.FAILED
    assert finished.status == MatchStatus.FAILED
    assert not finished.rated
    assert finished.error == match.error
    assert finished.error
    assert "no bot could be reached" in finished.error
    assert [(s.bot_id, s.rank, s.rating_after) for s in finished.participants] == [
        (b, None, None) for b in nowhere
    ]


@pytest.mark.slow
@pytest.mark.usefixtures("worker")
def test_a_match_the_reaper_gives_up_on_announces_its_failure(two_bots: list[uuid.UUID]) -> None:
    """A match whose workers kept dying is failed by the reaper's SQL, not by a worker: the reaper
    task announces it after its transaction commits."""
    match_id = queue_match(two_bots, send=False)
    with session_scope() as session:  # as a worker that died on its last attempt leaves it
        session.execute(
            update(Match)
            .where(Match.id == match_id)
            .values(
                status=MatchStatus.RUNNING,
                attempts=get_settings().max_match_attempts,
                heartbeat_at=datetime.now(UTC) - timedelta(hours=1),
            )
        )

    async def scenario() -> MatchFinished:
        async with EventStream([TOPIC_MATCHES]) as stream:
            await asyncio.to_thread(send_task, TASK_REAP_STALE, QUEUE_MATCHES)
            async with asyncio.timeout(60):
                async for event in stream:
                    if isinstance(event, MatchFinished) and event.match_id == match_id:
                        return event
        raise AssertionError("the stream ended")

    finished = asyncio.run(scenario())
    match, _, _, _ = _stored(match_id)
    assert match.status == MatchStatus.FAILED
    assert match.error
    assert match.error.startswith("abandoned")
    assert finished.status == MatchStatus.FAILED
    assert not finished.rated
    assert finished.error == match.error
    assert [s.bot_id for s in finished.participants] == two_bots


def _silent_port(sock: socket.socket) -> int:
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return int(sock.getsockname()[1])


@pytest.mark.slow
@pytest.mark.parametrize("events_redis", ["down", "stalled"])
@pytest.mark.usefixtures("database_url", "redis_url")
def test_a_match_finishes_and_is_rated_when_the_events_redis_is_unusable(
    two_bots: list[uuid.UUID], events_redis: str
) -> None:
    with socket.socket() as silent:
        port = _silent_port(silent) if events_redis == "stalled" else free_port()
        worker = _metrics_worker(
            f"events-{events_redis}", {"ARENA_EVENTS_REDIS_URL": f"redis://127.0.0.1:{port}/0"}
        )
        try:
            match_id = queue_match(two_bots)
            match = wait_for_match(match_id, worker, timeout=90)
            failed = _published(worker.metrics_url, "failed")  # type: ignore[attr-defined]
            sent = _published(worker.metrics_url, "sent") + _published(worker.metrics_url, "unheard")  # type: ignore[attr-defined]
        finally:
            worker.stop()
    assert match.status == MatchStatus.FINISHED
    assert match.rated
    assert match.error is None
    _, participants, rating_rows, _ = _stored(match_id)
    for stored in participants:
        assert stored.rank is not None
        assert stored.mu_after is not None
        assert stored.sigma_after is not None
        row = rating_rows[stored.bot_id]
        assert (row.mu, row.sigma, row.matches_played) == (stored.mu_after, stored.sigma_after, 1)
    assert sent == 0
    if events_redis == "down":  # refused at once; a stalled Redis may still hold the batch when we look
        assert failed >= 1
