"""Long jobs with real workers: a worker killed mid-chunk, duplicate chunk messages, stop and resume,
a failing handler, a slow but live worker, a lost chunk message. Whatever happens, every chunk's
result is committed exactly once and the job finishes once."""

from __future__ import annotations

import os
import re
import signal
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis
from sqlalchemy import select, update

from services.match_runner.tasks import TASK_REAP_STALE
from shared.db.models import Job
from shared.db.session import get_engine, session_scope
from shared.jobs import (
    ChunkMessage,
    ChunkOutcome,
    JobStateError,
    create_job,
    reap_stale_jobs,
    resume_job,
    run_chunk,
    start_job,
    stop_job,
)
from shared.queue import QUEUE_MATCHES, QUEUE_TRAINING, send_task
from shared.states import JobStatus
from tests.support.match_runner import start_worker
from tests.support.processes import PYTHON, ManagedProcess
from tests.support.sample_jobs import FINISHED, HANDLER, SAMPLE, STARTED, create_tables, events, results

STALE_AFTER_S = 3.0
MAX_ATTEMPTS = 3
JOB_ENV = {
    "ARENA_JOB_HEARTBEAT_INTERVAL_S": "0.3",
    "ARENA_STALE_JOB_AFTER_S": str(STALE_AFTER_S),
    "ARENA_MAX_JOB_CHUNK_ATTEMPTS": str(MAX_ATTEMPTS),
}
"""Settings of every worker here (sample workers and the match runner that reaps): a chunk whose
heartbeat is 3 s old lost its worker."""


@pytest.fixture(scope="module")
def tables(database_url: str) -> None:  # noqa: ARG001 (requested for its side effect)
    create_tables()


@pytest.fixture(autouse=True)
def _empty_queue(redis_url: str, tables: None) -> None:  # noqa: ARG001 (requested for its side effect)
    """Chunk messages a previous test left behind (duplicates, stopped jobs) must not leak in."""
    redis.Redis.from_url(redis_url).delete(QUEUE_TRAINING)


@pytest.fixture(scope="module")
def reaper(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    """A real match-runner worker: the reaper task it runs reaps long jobs too."""
    process = start_worker("reaper", JOB_ENV)
    yield process
    process.stop()


@pytest.fixture
def sample_worker() -> Iterator[Callable[..., ManagedProcess]]:
    started: list[ManagedProcess] = []

    def _start(name: str, concurrency: int = 1) -> ManagedProcess:
        command = [PYTHON, "-m", "celery", "-A", "tests.support.sample_jobs", "worker", "-Q", QUEUE_TRAINING]
        command += ["-c", str(concurrency), "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h", "--loglevel", "INFO"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        process = ManagedProcess(command, name, env=JOB_ENV)
        started.append(process)
        process.wait_log("ready.", timeout=60)
        return process

    yield _start
    for process in reversed(started):
        process.stop()


def _job(job_id: uuid.UUID) -> Job:
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job


def _starts(job_id: uuid.UUID) -> Counter[int]:
    with get_engine().connect() as conn:
        rows = conn.execute(
            select(events.c.chunk).where(events.c.job_id == job_id, events.c.event == STARTED)
        )
        return Counter(row[0] for row in rows)


def _finish_hooks(job_id: uuid.UUID) -> int:
    with get_engine().connect() as conn:
        rows = conn.execute(select(events.c.id).where(events.c.job_id == job_id, events.c.event == FINISHED))
        return len(rows.all())


def _results(job_id: uuid.UUID) -> list[tuple[int, int, int]]:
    """(chunk, attempt, total) of every committed chunk result, in chunk order."""
    with get_engine().connect() as conn:
        rows = conn.execute(
            select(results.c.chunk, results.c.attempt, results.c.total)
            .where(results.c.job_id == job_id)
            .order_by(results.c.chunk, results.c.id)
        )
        return [(r[0], r[1], r[2]) for r in rows]


def _wait(check: Callable[[], bool], what: str, timeout: float = 30.0, *workers: ManagedProcess) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        for worker in workers:
            assert worker.alive(), f"{worker.name} died:\n{worker.log()[-3000:]}"
        time.sleep(0.05)
    logs = "\n".join(w.log()[-3000:] for w in workers)
    raise AssertionError(f"{what}: not reached in {timeout}s\n{logs}")


def _wait_status(
    job_id: uuid.UUID, status: JobStatus, *workers: ManagedProcess, timeout: float = 30.0
) -> Job:
    _wait(lambda: _job(job_id).status == status, f"job {job_id} {status}", timeout, *workers)
    return _job(job_id)


def _expected_results(chunks: int) -> list[tuple[int, int]]:
    """(chunk, running total) of a sample job's chunks: each adds its number to the checkpoint."""
    return [(n, sum(range(n + 1))) for n in range(chunks)]


def _assert_finished_once(job_id: uuid.UUID, chunks: int) -> Job:
    job = _job(job_id)
    assert job.status == JobStatus.FINISHED, job.error
    assert job.chunk == chunks
    assert job.checkpoint == {"total": sum(range(chunks))}
    assert job.progress == {"chunks_done": chunks, "chunks": chunks}
    assert job.lease_token is None
    assert job.finished_at is not None
    assert job.error is None
    assert [(c, total) for c, _, total in _results(job_id)] == _expected_results(chunks)
    assert _finish_hooks(job_id) == 1
    return job


def _heartbeat_age(job_id: uuid.UUID) -> float:
    beat = _job(job_id).heartbeat_at
    assert beat is not None
    return (datetime.now(UTC) - beat).total_seconds()


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
def test_worker_killed_mid_chunk_resumes_from_the_last_checkpoint(
    sample_worker: Callable[..., ManagedProcess], reaper: ManagedProcess
) -> None:
    doomed = sample_worker("doomed")
    job_id = start_job(SAMPLE, {"chunks": 5, "sleep_s": 1.5})
    _wait(lambda: _starts(job_id)[2] == 1, "chunk 2 started", 60, doomed)
    doomed.kill()  # SIGKILL to the whole process group (main process and pool child): no ack, no cleanup
    doomed.proc.wait(timeout=10)
    _wait(lambda: _group_gone(doomed.pid), "every process of the killed worker gone", 10)

    running = _job(job_id)
    assert running.status == JobStatus.RUNNING
    assert running.chunk == 2
    assert running.attempts == 1
    assert [c for c, _, _ in _results(job_id)] == [0, 1], "chunk 2 must not have committed"

    rescue = sample_worker("rescue")
    time.sleep(0.5)
    assert _starts(job_id)[2] == 1, "a live-looking chunk was taken over before the reaper"
    _wait(
        lambda: _heartbeat_age(job_id) > STALE_AFTER_S + 0.3, "the killed chunk's heartbeat going stale", 15
    )
    send_task(TASK_REAP_STALE, QUEUE_MATCHES)
    _wait_status(job_id, JobStatus.FINISHED, rescue, reaper, timeout=60)
    # Other tests' abandoned jobs in the same database may be requeued by the same sweep.
    stale_line = re.compile(r"requeued [1-9][0-9]* stale jobs")
    reaper.wait_until(lambda: stale_line.search(reaper.log()) is not None, 10, "a requeued-stale-jobs line")

    _assert_finished_once(job_id, 5)
    assert _starts(job_id) == Counter({0: 1, 1: 1, 2: 2, 3: 1, 4: 1})
    assert [(c, attempt) for c, attempt, _ in _results(job_id)] == [(0, 1), (1, 1), (2, 2), (3, 1), (4, 1)]


@pytest.mark.slow
def test_duplicate_chunk_messages_are_no_ops(sample_worker: Callable[..., ManagedProcess]) -> None:
    worker = sample_worker("duplicates", concurrency=2)
    job_id = start_job(SAMPLE, {"chunks": 3, "sleep_s": 0.5})
    for _ in range(3):  # while chunk 0 runs in one pool process, the other gets its duplicates
        ChunkMessage(job_id, 0, SAMPLE.task_name, SAMPLE.queue).send()
    _wait_status(job_id, JobStatus.FINISHED, worker)
    for chunk in (0, 1, 2, 3):  # chunks done, and one past the end
        ChunkMessage(job_id, chunk, SAMPLE.task_name, SAMPLE.queue).send()
    needle = f"job {job_id} chunk"
    _wait(lambda: worker.log().count(needle) >= 7, "every duplicate skipped", 30, worker)
    assert run_chunk(HANDLER, job_id, 1) is ChunkOutcome.SKIPPED
    assert run_chunk(HANDLER, job_id, 3) is ChunkOutcome.SKIPPED

    _assert_finished_once(job_id, 3)
    assert _starts(job_id) == Counter({0: 1, 1: 1, 2: 1})


@pytest.mark.usefixtures("database_url")
def test_a_message_for_a_chunk_not_due_or_already_done_is_a_no_op() -> None:
    with session_scope() as session:
        job_id = create_job(session, SAMPLE, {"chunks": 3, "sleep_s": 0}).id
    assert run_chunk(HANDLER, job_id, 1) is ChunkOutcome.SKIPPED, "chunk 1 is not due yet"
    assert run_chunk(HANDLER, job_id, 0) is ChunkOutcome.NEXT_QUEUED
    assert run_chunk(HANDLER, job_id, 0) is ChunkOutcome.SKIPPED, "chunk 0 is done; chunk 1 is queued"
    job = _job(job_id)
    assert job.status == JobStatus.QUEUED
    assert job.chunk == 1
    assert job.checkpoint == {"total": 0}
    assert _starts(job_id) == Counter({0: 1})
    assert [c for c, _, _ in _results(job_id)] == [0]


@pytest.mark.slow
def test_a_worker_that_froze_and_comes_back_discards_its_chunk(
    sample_worker: Callable[..., ManagedProcess], reaper: ManagedProcess
) -> None:
    """Presumed dead (no heartbeat), reaped, its chunk run by another worker: when it wakes up, its
    lease is gone and what it computed is thrown away."""
    frozen = sample_worker("frozen")
    job_id = start_job(SAMPLE, {"chunks": 3, "sleep_s": 1.5})
    _wait(lambda: _starts(job_id)[1] == 1, "chunk 1 started", 30, frozen)
    frozen.kill(signal.SIGSTOP)
    try:
        rescue = sample_worker("rescue")
        _wait(
            lambda: _heartbeat_age(job_id) > STALE_AFTER_S + 0.3,
            "the frozen chunk's heartbeat going stale",
            15,
        )
        send_task(TASK_REAP_STALE, QUEUE_MATCHES)
        _wait(lambda: _starts(job_id)[1] == 2, "chunk 1 started again", 30, rescue, reaper)
    finally:
        frozen.kill(signal.SIGCONT)
    frozen.wait_log("chunk 1 lost its lease; its work was discarded", timeout=30)
    _wait_status(job_id, JobStatus.FINISHED, rescue, frozen)
    _assert_finished_once(job_id, 3)
    assert [(c, attempt) for c, attempt, _ in _results(job_id)] == [(0, 1), (1, 2), (2, 1)]


@pytest.mark.slow
def test_stop_at_a_chunk_boundary_and_resume(sample_worker: Callable[..., ManagedProcess]) -> None:
    worker = sample_worker("stopper")
    job_id = start_job(SAMPLE, {"chunks": 5, "sleep_s": 1.0})
    _wait(lambda: _starts(job_id)[1] == 1, "chunk 1 started", 30, worker)
    assert stop_job(job_id) == JobStatus.STOPPING
    stopped = _wait_status(job_id, JobStatus.STOPPED, worker)
    assert stopped.chunk == 2, "the running chunk commits, then stops"
    assert stopped.checkpoint == {"total": 1}, "the running chunk commits, then stops"
    assert stop_job(job_id) == JobStatus.STOPPED
    time.sleep(1.5)
    assert 2 not in _starts(job_id), "a stopped job ran a chunk"

    assert resume_job(job_id) == JobStatus.QUEUED
    _wait(lambda: _starts(job_id)[3] == 1, "chunk 3 started", 30, worker)
    assert stop_job(job_id) == JobStatus.STOPPING
    assert resume_job(job_id) == JobStatus.RUNNING, "resuming a stopping job calls the stop off"
    _wait_status(job_id, JobStatus.FINISHED, worker)

    _assert_finished_once(job_id, 5)
    assert _starts(job_id) == Counter({0: 1, 1: 1, 2: 1, 3: 1, 4: 1})
    with pytest.raises(JobStateError):
        stop_job(job_id)
    with pytest.raises(JobStateError):
        resume_job(job_id)


@pytest.mark.usefixtures("database_url")
def test_a_queued_job_stops_at_once_and_its_message_is_a_no_op() -> None:
    with session_scope() as session:
        job_id = create_job(session, SAMPLE, {"chunks": 1, "sleep_s": 0}).id
    assert stop_job(job_id) == JobStatus.STOPPED
    assert run_chunk(HANDLER, job_id, 0) is ChunkOutcome.SKIPPED
    assert _starts(job_id) == Counter()


@pytest.mark.slow
def test_a_failing_chunk_is_retried_then_the_job_fails_and_can_be_resumed(
    sample_worker: Callable[..., ManagedProcess],
) -> None:
    worker = sample_worker("failing")
    job_id = start_job(SAMPLE, {"chunks": 3, "sleep_s": 0.1, "fail_starts": {"1": MAX_ATTEMPTS + 1}})
    failed = _wait_status(job_id, JobStatus.FAILED, worker)
    assert failed.chunk == 1
    assert failed.attempts == MAX_ATTEMPTS
    assert failed.finished_at is not None
    assert failed.error is not None
    assert f"RuntimeError: boom in chunk 1 (start {MAX_ATTEMPTS})" in failed.error
    assert _starts(job_id) == Counter({0: 1, 1: MAX_ATTEMPTS})
    assert [c for c, _, _ in _results(job_id)] == [0], "a failed chunk committed something"

    # From its last checkpoint: the chunk fails once more, is retried, and the job finishes.
    assert resume_job(job_id) == JobStatus.QUEUED
    _wait_status(job_id, JobStatus.FINISHED, worker)
    _assert_finished_once(job_id, 3)
    assert _starts(job_id) == Counter({0: 1, 1: MAX_ATTEMPTS + 2, 2: 1})
    assert [(c, attempt) for c, attempt, _ in _results(job_id)] == [(0, 1), (1, 2), (2, 1)]


@pytest.mark.usefixtures("database_url")
def test_a_permanent_failure_fails_the_job_at_once() -> None:
    """PermanentJobError: no retries (the first claim fails the job), the message is the job's error;
    resuming tries again, from the last checkpoint."""
    message = "device 'cuda' requested but this machine has no CUDA GPU"
    config = {"chunks": 3, "sleep_s": 0, "fail_permanently": {"1": message}}
    with session_scope() as session:
        job_id = create_job(session, SAMPLE, config).id
    assert run_chunk(HANDLER, job_id, 0) is ChunkOutcome.NEXT_QUEUED
    assert run_chunk(HANDLER, job_id, 1) is ChunkOutcome.FAILED
    failed = _job(job_id)
    assert failed.status == JobStatus.FAILED
    assert failed.attempts == 1 < MAX_ATTEMPTS
    assert failed.error == f"chunk 1, attempt 1: {message}"
    assert failed.finished_at is not None
    assert failed.chunk == 1
    assert failed.checkpoint == {"total": 0}
    assert failed.lease_token is None
    assert run_chunk(HANDLER, job_id, 1) is ChunkOutcome.SKIPPED, "a failed job runs nothing"
    assert resume_job(job_id) == JobStatus.QUEUED
    assert run_chunk(HANDLER, job_id, 1) is ChunkOutcome.FAILED
    assert _starts(job_id) == Counter({0: 1, 1: 2})
    assert [c for c, _, _ in _results(job_id)] == [0]


@pytest.mark.slow
def test_a_slow_worker_with_a_fresh_heartbeat_is_never_reaped(
    sample_worker: Callable[..., ManagedProcess], reaper: ManagedProcess
) -> None:
    worker = sample_worker("slow")
    slow_s = 2 * STALE_AFTER_S
    job_id = start_job(SAMPLE, {"chunks": 2, "sleep_s": 0.1, "slow": {"0": slow_s}})
    _wait(lambda: _starts(job_id)[0] == 1, "chunk 0 started", 30, worker)
    reaper_log_before = len(reaper.log())
    deadline = time.monotonic() + slow_s - 1.5
    while time.monotonic() < deadline:
        report = reap_stale_jobs(STALE_AFTER_S, MAX_ATTEMPTS)
        assert job_id not in report.requeued + report.failed + report.resent
        send_task(TASK_REAP_STALE, QUEUE_MATCHES)  # the real reaper too
        time.sleep(0.5)
    _wait_status(job_id, JobStatus.FINISHED, worker)
    _assert_finished_once(job_id, 2)
    assert _starts(job_id) == Counter({0: 1, 1: 1})
    reaped = reaper.log()[reaper_log_before:]
    assert "Task arena.matches.reap_stale" in reaped
    assert "stale jobs" not in reaped


@pytest.mark.slow
def test_a_lost_chunk_message_is_sent_again_by_the_reaper(
    sample_worker: Callable[..., ManagedProcess],
) -> None:
    with session_scope() as session:
        job_id = create_job(session, SAMPLE, {"chunks": 2, "sleep_s": 0.1}).id  # created, never sent
    worker = sample_worker("resend")
    assert job_id not in reap_stale_jobs(STALE_AFTER_S, MAX_ATTEMPTS, resend_after_s=60).resent
    with session_scope() as session:
        session.execute(
            update(Job).where(Job.id == job_id).values(enqueued_at=datetime.now(UTC) - timedelta(minutes=5))
        )
    assert job_id in reap_stale_jobs(STALE_AFTER_S, MAX_ATTEMPTS, resend_after_s=60).resent
    _wait_status(job_id, JobStatus.FINISHED, worker)
    _assert_finished_once(job_id, 2)


@pytest.mark.slow
@pytest.mark.usefixtures("database_url")
def test_the_reaper_fails_jobs_out_of_attempts_and_stops_dead_stopping_jobs() -> None:
    long_ago = datetime.now(UTC) - timedelta(hours=1)
    ids = {}
    for name, status, attempts in [
        ("out_of_attempts", JobStatus.RUNNING, MAX_ATTEMPTS),
        ("stopping", JobStatus.STOPPING, 1),
    ]:
        with session_scope() as session:
            job = create_job(session, SAMPLE, {"chunks": 1})
            job.status, job.attempts, job.heartbeat_at = status, attempts, long_ago
            job.lease_token = uuid.uuid4()
            ids[name] = job.id
    report = reap_stale_jobs(STALE_AFTER_S, MAX_ATTEMPTS)
    assert ids["out_of_attempts"] in report.failed
    assert ids["stopping"] in report.stopped
    failed = _job(ids["out_of_attempts"])
    assert failed.status == JobStatus.FAILED
    assert failed.lease_token is None
    assert failed.error == f"abandoned: chunk 0 lost its worker {MAX_ATTEMPTS} times (heartbeat lost)"
    assert _job(ids["stopping"]).status == JobStatus.STOPPED
    with pytest.raises(JobStateError):
        stop_job(ids["out_of_attempts"])
    assert resume_job(ids["stopping"]) == JobStatus.QUEUED
    assert stop_job(ids["stopping"]) == JobStatus.STOPPED
