"""The lost-message check for long jobs (shared/jobs/lost.py) against a real Redis of this module's
own and the messages Celery and kombu really write: a queued job whose chunk message is neither
waiting in its queue nor taken by a worker is sent again, once, within seconds instead of after
the reaper's `job_resend_after_s` (900 s); a message waiting, on its way to a worker, or counting
down is left alone; a broker it cannot read makes it send nothing.

The check reads every queued job of the database, so these tests backdate their own jobs by days
and check with a grace of days: jobs of other test modules are never touched.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import select, update

from services.match_runner import tasks as runner_tasks
from shared.broker_contents import UNACKED_INDEX_KEY, UNACKED_KEY
from shared.config import Settings, get_settings
from shared.db.models import Job
from shared.db.session import get_engine, session_scope
from shared.jobs import ChunkMessage, create_job
from shared.jobs import lost as lost_chunks
from shared.jobs.lost import resend_lost_chunks
from shared.logging_throttle import LogThrottle
from shared.ports import free_port
from shared.queue import QUEUE_TRAINING, create_celery
from shared.states import JobStatus
from tests.support.broker import hash_values, list_items, remove_from_list
from tests.support.owned_services import OwnedRedis, owned_redis
from tests.support.processes import PYTHON, ManagedProcess
from tests.support.sample_jobs import SAMPLE, TASK_SAMPLE_CHUNK, create_tables, results

GRACE_S = timedelta(days=5).total_seconds()
"""Only jobs sent longer ago than this are looked for: only this module's backdated jobs."""
RUN_LIMIT_S = 20.0
"""A resent job of two short chunks has finished within this long (a worker's start excluded)."""


@pytest.fixture(scope="module")
def broker(database_url: str) -> Iterator[OwnedRedis]:  # noqa: ARG001 (requested for its side effect)
    create_tables()
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
def send(settings: Settings) -> Iterator[Callable[..., None]]:
    """Sends a chunk message to this module's Redis, as ChunkMessage.send does."""
    app = create_celery(settings)

    def _send(job_id: uuid.UUID, chunk: int, **options: Any) -> None:
        app.send_task(TASK_SAMPLE_CHUNK, args=[str(job_id), chunk], queue=QUEUE_TRAINING, **options)

    yield _send
    app.close()


@pytest.fixture
def new_job() -> Iterator[Callable[..., uuid.UUID]]:
    """A queued sample job at `chunk`, its message not sent, sent ten days ago; stopped afterwards."""
    created: list[uuid.UUID] = []

    def _new(chunk: int = 0, chunks: int = 2) -> uuid.UUID:
        with session_scope() as session:
            job = create_job(session, SAMPLE, {"chunks": chunks, "sleep_s": 0.1})
            job.chunk = chunk
            job.enqueued_at = datetime.now(UTC) - timedelta(days=10)
            created.append(job.id)
            return job.id

    yield _new
    with session_scope() as session:
        session.execute(
            update(Job)
            .where(Job.id.in_(created), Job.status == JobStatus.QUEUED)
            .values(status=JobStatus.STOPPED)
        )


def _copies(client: redis.Redis, job_id: uuid.UUID) -> tuple[int, int]:
    """(waiting in the queue, taken by a worker) chunk messages of the job, found by its id in their
    text (the `argsrepr` header), independently of the code under test."""
    needle = str(job_id).encode()
    waiting = sum(needle in raw for raw in list_items(client, QUEUE_TRAINING))
    taken = sum(needle in raw for raw in hash_values(client, UNACKED_KEY))
    return waiting, taken


def _take_from_queue(client: redis.Redis, job_id: uuid.UUID) -> bytes:
    """Remove the job's message from the queue (as a lost write, or a worker's pop); its text."""
    (raw,) = [raw for raw in list_items(client, QUEUE_TRAINING) if str(job_id).encode() in raw]
    assert remove_from_list(client, QUEUE_TRAINING, raw) == 1
    return raw


def _record_taken(client: redis.Redis, raw: bytes, taken_at: float) -> None:
    """Record a message as taken by a worker at `taken_at`, as kombu's Redis transport does."""
    tag = uuid.uuid4().hex
    client.zadd(UNACKED_INDEX_KEY, {tag: taken_at})
    client.hset(UNACKED_KEY, tag, json.dumps([json.loads(raw), QUEUE_TRAINING, QUEUE_TRAINING]))


def _sender(send: Callable[..., None], sent: list[tuple[uuid.UUID, int]]) -> Callable[[ChunkMessage], None]:
    def _send(message: ChunkMessage) -> None:
        sent.append((message.job_id, message.chunk))
        send(message.job_id, message.chunk)

    return _send


def test_only_jobs_whose_chunk_message_is_gone_are_sent_again_and_once(
    client: redis.Redis, settings: Settings, send: Callable[..., None], new_job: Callable[..., uuid.UUID]
) -> None:
    waiting, lost, old_chunk_only, just_taken, counting_down, let_go = (
        new_job(),
        new_job(),
        new_job(chunk=1),
        new_job(),
        new_job(),
        new_job(),
    )
    long_ago = time.time() - 10 * settings.lost_message_reserved_s
    send(waiting, 0)
    send(old_chunk_only, 0)  # a duplicate of the chunk it already ran: nothing for chunk 1
    send(just_taken, 0)
    send(counting_down, 0, countdown=3600)
    send(let_go, 0)
    _record_taken(client, _take_from_queue(client, just_taken), time.time())
    _record_taken(client, _take_from_queue(client, counting_down), long_ago)
    _record_taken(client, _take_from_queue(client, let_go), long_ago)  # the worker let go of it

    sent: list[tuple[uuid.UUID, int]] = []
    resent = resend_lost_chunks(settings, client, send=_sender(send, sent))

    assert sorted(resent) == sorted([lost, old_chunk_only, let_go])
    assert sorted(sent) == sorted([(lost, 0), (old_chunk_only, 1), (let_go, 0)])
    assert [_copies(client, job) for job in (waiting, lost, just_taken, counting_down, let_go)] == [
        (1, 0),
        (1, 0),
        (0, 1),
        (0, 1),
        (1, 1),  # sent again; the stale record is Redis's to expire
    ]
    assert resend_lost_chunks(settings, client, send=_sender(send, sent)) == []  # sent just now


def test_a_message_on_its_way_to_a_worker_is_not_taken_for_lost(
    client: redis.Redis, settings: Settings, send: Callable[..., None], new_job: Callable[..., uuid.UUID]
) -> None:
    """kombu pops a message from the queue, then records it as taken: the second look finds it."""
    moving, gone = new_job(), new_job()
    send(moving, 0)
    send(gone, 0)
    moving_raw = _take_from_queue(client, moving)
    _take_from_queue(client, gone)

    def worker_records_it(_: float) -> None:
        _record_taken(client, moving_raw, time.time())

    assert resend_lost_chunks(settings, client, send=_sender(send, []), sleep=worker_records_it) == [gone]
    assert _copies(client, moving) == (0, 1)


@pytest.mark.parametrize("broken", ["unreadable message", "redis down"])
def test_a_broker_it_cannot_read_makes_it_send_nothing(
    broken: str,
    client: redis.Redis,
    settings: Settings,
    send: Callable[..., None],
    new_job: Callable[..., uuid.UUID],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        lost_chunks, "_KIND", dataclasses.replace(lost_chunks._KIND, unreadable_log=LogThrottle())
    )  # said once per test
    new_job()  # no message anywhere: lost, if only the check could tell
    if broken == "unreadable message":
        client.lpush(QUEUE_TRAINING, b"not a celery message")
    else:
        client = redis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=1)
    sent: list[tuple[uuid.UUID, int]] = []
    with caplog.at_level(logging.WARNING, logger="shared.jobs.lost"):
        for _ in range(3):
            assert resend_lost_chunks(settings, client, send=_sender(send, sent)) == []
    assert sent == []
    said = [r for r in caplog.records if "cannot tell which chunk messages" in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in caplog.records]


@pytest.mark.filterwarnings(r"ignore:\s*The 'queue' task attribute is deprecated")  # as test_task_wiring
def test_the_beats_lost_message_check_looks_for_chunks_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """`arena.matches.resend_lost` (beat, every `lost_message_check_s`) runs both checks."""
    checked: list[str] = []

    def check(what: str) -> Callable[[Settings], list[uuid.UUID]]:
        def _check(_: Settings) -> list[uuid.UUID]:
            checked.append(what)
            return [uuid.uuid4()]

        return _check

    monkeypatch.setattr(runner_tasks, "resend_lost_messages", check("matches"))
    monkeypatch.setattr(runner_tasks, "resend_lost_chunks", check("chunks"))
    assert runner_tasks.resend_lost.run() == 2
    assert checked == ["matches", "chunks"]


@pytest.mark.slow
def test_a_job_whose_message_redis_lost_runs_within_seconds(
    broker: OwnedRedis, settings: Settings, send: Callable[..., None], new_job: Callable[..., uuid.UUID]
) -> None:
    """Redis restarted empty under a queued job: a real worker runs it as soon as the check has
    looked, where before the job waited for the reaper's `job_resend_after_s`."""
    job_id = new_job()
    send(job_id, 0)
    broker.kill()
    broker.start()  # empty: the chunk message is gone
    command = [PYTHON, "-m", "celery", "-A", "tests.support.sample_jobs", "worker", "-Q", QUEUE_TRAINING]
    command += ["-c", "1", "-n", f"lost-chunks-{uuid.uuid4().hex[:6]}@%h", "--loglevel", "INFO"]
    command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    worker = ManagedProcess(command, "lost-chunks-worker", env={"ARENA_REDIS_URL": broker.url})
    try:
        worker.wait_log("ready.", timeout=60)
        checked = time.monotonic()
        assert resend_lost_chunks(settings, send=_sender(send, [])) == [job_id]
        status = None
        while time.monotonic() - checked < RUN_LIMIT_S and status != JobStatus.FINISHED:
            time.sleep(0.1)
            with session_scope() as session:
                status = session.scalars(select(Job.status).where(Job.id == job_id)).one()
        print(f"\nthe job lost with Redis finished {time.monotonic() - checked:.1f} s after the check")
        assert status == JobStatus.FINISHED, worker.log()[-3000:]
        with get_engine().connect() as conn:
            chunks = sorted(conn.execute(select(results.c.chunk).where(results.c.job_id == job_id)).scalars())
        assert chunks == [0, 1]  # each chunk committed once
    finally:
        worker.stop()
