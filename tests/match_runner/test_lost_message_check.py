"""The lost-message check (services/match_runner/lost.py) against a real Redis of this module's own
and the messages Celery and kombu really write: only a queued match whose play message is neither
waiting in the queue nor taken by a worker is sent again, once; a message on its way from the queue
to a worker is not mistaken for a lost one; a broker it cannot read makes it send nothing.

The check reads every queued match of the database, so these tests backdate their own matches by
days and check with a grace of days: leftovers of other test modules are never touched.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Unpack

import pytest
import redis
from sqlalchemy import update

from services.match_runner import lost as lost_check
from services.match_runner.lost import resend_lost_messages
from services.match_runner.tasks import TASK_RESEND_LOST
from services.match_runner.worker import beat_schedule
from shared.broker_contents import UNACKED_INDEX_KEY, UNACKED_KEY
from shared.config import Settings, get_settings
from shared.db.models import Match
from shared.db.session import session_scope
from shared.logging_throttle import LogThrottle
from shared.matches import TASK_PLAY_MATCH
from shared.ports import free_port
from shared.queue import QUEUE_MATCHES, create_celery
from shared.states import MatchStatus
from tests.support.broker import hash_values, list_items, remove_from_list
from tests.support.match_runner import SendOptions, queue_match, start_worker
from tests.support.owned_services import OwnedRedis, owned_redis

GRACE_S = timedelta(days=5).total_seconds()
"""Only matches sent longer ago than this are looked for: only this module's backdated matches."""


@pytest.fixture(scope="module")
def broker() -> Iterator[OwnedRedis]:
    with owned_redis() as server:
        yield server


@pytest.fixture
def client(broker: OwnedRedis) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(broker.url)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture
def settings(broker: OwnedRedis) -> Settings:
    return get_settings().model_copy(update={"redis_url": broker.url, "lost_message_grace_s": GRACE_S})


@pytest.fixture
def send(broker: OwnedRedis, settings: Settings) -> Iterator[Callable[..., None]]:  # noqa: ARG001 (requested for its side effect)
    """Sends a match's play message to this module's Redis, as enqueue_match does."""
    app = create_celery(settings)

    def _send(match_id: uuid.UUID, **options: Unpack[SendOptions]) -> None:
        app.send_task(TASK_PLAY_MATCH, args=[str(match_id)], queue=QUEUE_MATCHES, **options)

    yield _send
    app.close()


@pytest.fixture
def new_match(register_bot: Callable[..., uuid.UUID]) -> Iterator[Callable[[], uuid.UUID]]:
    """A queued match, its message not sent, sent_at ten days ago; cancelled after the test."""
    created: list[uuid.UUID] = []

    def _new() -> uuid.UUID:
        match_id = queue_match([register_bot(), register_bot()], send=False)
        with session_scope() as session:
            session.execute(
                update(Match)
                .where(Match.id == match_id)
                .values(sent_at=datetime.now(UTC) - timedelta(days=10))
            )
        created.append(match_id)
        return match_id

    yield _new
    with session_scope() as session:
        session.execute(update(Match).where(Match.id.in_(created)).values(status=MatchStatus.CANCELLED))


def _copies(client: redis.Redis, match_id: uuid.UUID) -> tuple[int, int]:
    """(waiting in the queue, taken by a worker) play messages of the match, found by the id in
    their text (the `argsrepr` header), independently of the code under test."""
    needle = str(match_id).encode()
    waiting = sum(needle in raw for raw in list_items(client, QUEUE_MATCHES))
    taken = sum(needle in raw for raw in hash_values(client, UNACKED_KEY))
    return waiting, taken


def _record_taken(client: redis.Redis, raw: bytes, taken_at: float) -> None:
    """Record a message as taken by a worker at `taken_at`, as kombu's Redis transport does."""
    tag = uuid.uuid4().hex
    client.zadd(UNACKED_INDEX_KEY, {tag: taken_at})
    client.hset(UNACKED_KEY, tag, json.dumps([json.loads(raw), QUEUE_MATCHES, QUEUE_MATCHES]))


def _take_from_queue(client: redis.Redis, match_id: uuid.UUID) -> bytes:
    """Remove the match's message from the queue (as a lost write, or a worker's pop); its text."""
    (raw,) = [raw for raw in list_items(client, QUEUE_MATCHES) if str(match_id).encode() in raw]
    assert remove_from_list(client, QUEUE_MATCHES, raw) == 1
    return raw


@pytest.mark.slow
def test_only_the_match_whose_message_is_gone_is_sent_again_and_once(
    client: redis.Redis, settings: Settings, send: Callable[..., None], new_match: Callable[[], uuid.UUID]
) -> None:
    waiting, taken, lost = new_match(), new_match(), new_match()
    # A worker takes `taken` (its countdown keeps it unacknowledged) and dies holding it.
    worker = start_worker("lost-check-holder", {"ARENA_REDIS_URL": settings.redis_url})
    try:
        send(taken, countdown=3600)
        worker.wait_until(lambda: _copies(client, taken) == (0, 1), 30, "the message taken by the worker")
        worker.kill(signal.SIGKILL)
    finally:
        worker.stop()
    send(waiting)
    send(lost)
    _take_from_queue(client, lost)
    assert (_copies(client, waiting), _copies(client, taken), _copies(client, lost)) == (
        (1, 0),
        (0, 1),
        (0, 0),
    )

    sent: list[uuid.UUID] = []

    def send_and_note(match_id: uuid.UUID) -> None:
        sent.append(match_id)
        send(match_id)

    resent = resend_lost_messages(settings, client, send=send_and_note)

    assert resent == sent == [lost]
    assert (_copies(client, waiting), _copies(client, taken), _copies(client, lost)) == (
        (1, 0),
        (0, 1),
        (1, 0),
    )
    assert resend_lost_messages(settings, client, send=send) == []  # held now, and just sent anyway


def test_a_message_on_its_way_to_a_worker_is_not_taken_for_lost(
    client: redis.Redis, settings: Settings, send: Callable[..., None], new_match: Callable[[], uuid.UUID]
) -> None:
    """kombu pops a message from the queue, then records it as unacknowledged: for an instant it is
    in neither place. The second look finds it; a message really gone is still gone then."""
    moving, gone = new_match(), new_match()
    send(moving)
    send(gone)
    moving_raw = _take_from_queue(client, moving)
    _take_from_queue(client, gone)

    def worker_records_it(_: float) -> None:
        _record_taken(client, moving_raw, time.time())

    resent = resend_lost_messages(settings, client, send=send, sleep=worker_records_it)

    assert resent == [gone]
    assert _copies(client, moving) == (0, 1)


def test_a_message_of_any_priority_is_seen(
    client: redis.Redis, settings: Settings, send: Callable[..., None], new_match: Callable[[], uuid.UUID]
) -> None:
    """kombu keeps each priority step in a list of its own: the check reads them all."""
    urgent = new_match()
    send(urgent, priority=9)
    assert client.llen(QUEUE_MATCHES) == 0, "the message went to a priority list"
    assert resend_lost_messages(settings, client, send=send) == []


def test_the_beat_runs_the_check_every_few_seconds_unless_switched_off() -> None:
    entry = beat_schedule(Settings(dev_mode=True))["lost-messages"]
    assert (entry["task"], entry["schedule"].total_seconds(), entry["options"]["expires"]) == (
        TASK_RESEND_LOST,
        3.0,
        3.0,
    )
    assert "lost-messages" not in beat_schedule(Settings(dev_mode=True, lost_message_check_s=0))


def test_a_message_a_worker_took_long_ago_without_starting_it_counts_as_lost(
    client: redis.Redis, settings: Settings, send: Callable[..., None], new_match: Callable[[], uuid.UUID]
) -> None:
    """A worker starts what it takes at once; one that has held a play message for longer than
    `lost_message_reserved_s` while the match is still queued let go of it (it lost Redis, it died).
    A message waiting out its countdown is held until the countdown ends."""
    let_go, just_taken, counting_down = new_match(), new_match(), new_match()
    long_ago = time.time() - 10 * settings.lost_message_reserved_s
    send(let_go)
    send(just_taken)
    send(counting_down, countdown=3600)
    _record_taken(client, _take_from_queue(client, let_go), long_ago)
    _record_taken(client, _take_from_queue(client, just_taken), time.time())
    _record_taken(client, _take_from_queue(client, counting_down), long_ago)

    assert resend_lost_messages(settings, client, send=send) == [let_go]
    assert _copies(client, let_go) == (1, 1)  # sent again; the stale record is Redis's to expire


@pytest.mark.parametrize("broken", ["unreadable message", "too many messages", "redis down"])
def test_a_broker_it_cannot_read_makes_it_send_nothing(
    broken: str,
    client: redis.Redis,
    settings: Settings,
    send: Callable[..., None],
    new_match: Callable[[], uuid.UUID],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        lost_check, "_KIND", dataclasses.replace(lost_check._KIND, unreadable_log=LogThrottle())
    )  # said once per test, not per module
    new_match()  # no message anywhere: lost, if only the check could tell
    send(new_match())
    if broken == "unreadable message":
        client.lpush(QUEUE_MATCHES, b"not a celery message")
    elif broken == "too many messages":
        settings = settings.model_copy(update={"lost_message_scan_limit": 1})
        send(new_match())
    else:
        client = redis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=1)
    with caplog.at_level(logging.WARNING, logger="services.match_runner.lost"):
        for _ in range(3):
            assert resend_lost_messages(settings, client, send=send) == []
    said = [r for r in caplog.records if "cannot tell which play messages" in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in caplog.records]
