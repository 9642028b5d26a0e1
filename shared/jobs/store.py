"""The database side of long jobs: create, claim, heartbeat, commit, stop, resume, reap.

Ownership of a job is its lease: a claim writes a fresh `lease_token`, and every later write of
that chunk (heartbeat, commit, failure) requires the token to be unchanged and the status to hold
the lease. A worker that was presumed dead and comes back can never overwrite the chunk that
replaced it; its work is discarded.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, or_, select, update
from sqlalchemy.orm import Session

from shared.config import get_settings
from shared.db.models import Job
from shared.db.session import get_engine, session_scope
from shared.jobs.handler import ChunkResult, ChunkWork, JobHandler, JobRoute
from shared.jsonsafe import safe_text
from shared.queue import QUEUES, send_task
from shared.states import JobStatus

log = logging.getLogger(__name__)

MAX_JOB_ERROR_CHARS = 4000


class JobNotFound(LookupError):
    """No job with this id."""


class JobStateError(ValueError):
    """The job cannot do what was asked in its current state; the message says why."""


@dataclass(frozen=True, slots=True)
class ChunkMessage:
    """Everything needed to send a job's chunk task: the row names the task and its queue."""

    job_id: uuid.UUID
    chunk: int
    task_name: str
    queue: str

    def send(self) -> None:
        send_task(self.task_name, self.queue, args=[str(self.job_id), self.chunk])


def _message(job: Job) -> ChunkMessage:
    return ChunkMessage(job.id, job.chunk, job.task_name, job.queue)


def create_job(session: Session, route: JobRoute, config: dict[str, Any] | None = None) -> Job:
    """Insert a queued job at chunk 0. Does not commit: call `enqueue_job` after the commit."""
    if route.queue not in QUEUES:
        raise ValueError(f"unknown queue {route.queue!r}")
    job = Job(
        kind=route.kind,
        status=JobStatus.QUEUED,
        config=dict(config or {}),
        checkpoint={},
        progress={},
        chunk=0,
        attempts=0,
        task_name=route.task_name,
        queue=route.queue,
        enqueued_at=datetime.now(UTC),
    )
    session.add(job)
    session.flush()
    return job


def enqueue_job(job: Job) -> None:
    """Send the chunk a queued job is waiting for (after the row is committed)."""
    _message(job).send()


def start_job(route: JobRoute, config: dict[str, Any] | None = None) -> uuid.UUID:
    """Create a job in its own transaction and send its first chunk."""
    with session_scope() as session:
        job = create_job(session, route, config)
    enqueue_job(job)
    return job.id


def _lock(session: Session, job_id: uuid.UUID) -> Job:
    job = session.scalars(select(Job).where(Job.id == job_id).with_for_update()).one_or_none()
    if job is None:
        raise JobNotFound(f"job {job_id} does not exist")
    return job


def stop_job(job_id: uuid.UUID) -> JobStatus:
    """Ask a job to stop. A queued job stops at once (its chunk message becomes a no-op); a running
    one becomes STOPPING and stops when its chunk ends, with that chunk's work committed."""
    with session_scope() as session:
        job = _lock(session, job_id)
        if job.status == JobStatus.QUEUED:
            job.status = JobStatus.STOPPED
        elif job.status == JobStatus.RUNNING:
            job.status = JobStatus.STOPPING
        elif job.status in (JobStatus.FINISHED, JobStatus.FAILED):
            raise JobStateError(f"job {job_id} is {job.status}: nothing to stop")
        return job.status


def resume_job(job_id: uuid.UUID, *, send: bool = True) -> JobStatus:
    """Run a stopped (or failed) job again from its last checkpoint, or call off a pending stop.
    Never raises once the state is committed: a chunk message the broker did not take is resent
    by the lost-message check within seconds (shared/jobs/lost.py). `send=False` is for a caller
    that runs the chunks itself, in process."""
    message = None
    with session_scope() as session:
        job = _lock(session, job_id)
        if job.status in JobStatus.resumable():
            job.status = JobStatus.QUEUED
            job.attempts = 0
            job.error = None
            job.finished_at = None
            job.enqueued_at = datetime.now(UTC)
            message = _message(job)
        elif job.status == JobStatus.STOPPING:
            job.status = JobStatus.RUNNING  # the chunk still holds its lease and goes on
        elif job.status == JobStatus.FINISHED:
            raise JobStateError(f"job {job_id} is finished: nothing to resume")
        status = job.status
    if message is not None and send:
        try:
            message.send()
        except Exception as exc:  # committed: the job is queued, and the check resends a lost chunk
            log.error(
                "job %s resumed, but its chunk was not sent (the lost-message check will resend it): %s",
                job_id,
                exc,
            )
    return status


def _stale(stale_after_s: float) -> ColumnElement[bool]:
    return or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < func.now() - timedelta(seconds=stale_after_s))


@dataclass(frozen=True, slots=True)
class Claim:
    token: uuid.UUID
    work: ChunkWork


def claim_chunk(
    job_id: uuid.UUID,
    kind: str,
    chunk: int,
    owner: str,
    stale_after_s: float,
    max_attempts: int,
) -> Claim | None:
    """Atomically take chunk `chunk` of a queued (or abandoned) job; None if it is not ours to run.

    None covers every duplicate: the chunk is done already (the job moved on), the job is running
    elsewhere with a fresh heartbeat, stopped, finished, failed, of another kind, or unknown."""
    token = uuid.uuid4()
    claimable = or_(
        Job.status == JobStatus.QUEUED,
        (Job.status == JobStatus.RUNNING) & _stale(stale_after_s),
    )
    with get_engine().begin() as conn:
        row = conn.execute(
            update(Job)
            .where(
                Job.id == job_id,
                Job.kind == kind,
                Job.chunk == chunk,
                Job.attempts < max_attempts,
                claimable,
            )
            .values(
                status=JobStatus.RUNNING,
                attempts=Job.attempts + 1,
                lease_owner=owner,
                lease_token=token,
                heartbeat_at=func.now(),
                started_at=func.coalesce(Job.started_at, func.now()),
            )
            .returning(Job.attempts, Job.config, Job.checkpoint, Job.progress)
        ).first()
    if row is None:
        return None
    attempts, config, checkpoint, progress = row
    work = ChunkWork(
        job_id=job_id,
        kind=kind,
        chunk=chunk,
        attempt=attempts,
        config=dict(config or {}),
        checkpoint=dict(checkpoint or {}),
        progress=dict(progress or {}),
    )
    return Claim(token, work)


def heartbeat(job_id: uuid.UUID, token: uuid.UUID) -> JobStatus | None:
    """Mark the chunk alive; the job's status (STOPPING: a stop was asked), or None when the lease
    is gone (reaped, taken over)."""
    with get_engine().begin() as conn:
        row = conn.execute(
            update(Job)
            .where(Job.id == job_id, Job.lease_token == token, Job.status.in_(JobStatus.holding_lease()))
            .values(heartbeat_at=func.now())
            .returning(Job.status)
        ).first()
    return None if row is None else JobStatus(row[0])


def _lock_if_ours(session: Session, job_id: uuid.UUID, token: uuid.UUID, chunk: int) -> Job | None:
    job = session.scalars(select(Job).where(Job.id == job_id).with_for_update()).one_or_none()
    if (
        job is None
        or job.lease_token != token
        or job.status not in JobStatus.holding_lease()
        or job.chunk != chunk
    ):
        return None
    return job


def _release(job: Job, status: JobStatus) -> None:
    now = datetime.now(UTC)
    job.status = status
    job.lease_owner = None
    job.lease_token = None
    job.heartbeat_at = now
    if status == JobStatus.QUEUED:
        job.enqueued_at = now
    if status in (JobStatus.FINISHED, JobStatus.FAILED):
        job.finished_at = now


@dataclass(frozen=True, slots=True)
class Settled:
    """Where a chunk left its job; `next` is the chunk message to send after the commit, if any."""

    status: JobStatus
    next: ChunkMessage | None = None


def commit_chunk(
    handler: JobHandler, work: ChunkWork, token: uuid.UUID, result: ChunkResult
) -> Settled | None:
    """In ONE transaction: the handler's own writes, the new checkpoint and progress, the next chunk
    number and the new status. None (and nothing written) if the lease is no longer ours."""
    with session_scope() as session:
        job = _lock_if_ours(session, work.job_id, token, work.chunk)
        if job is None:
            return None
        handler.record(session, work, result)
        job.checkpoint = dict(result.checkpoint)
        job.progress = dict(result.progress)
        job.chunk = work.chunk + 1
        job.attempts = 0
        job.error = None
        if result.finished:
            _release(job, JobStatus.FINISHED)
            handler.on_finished(session, job)
        elif job.status == JobStatus.STOPPING:
            _release(job, JobStatus.STOPPED)
        else:
            _release(job, JobStatus.QUEUED)
        return Settled(job.status, _message(job) if job.status == JobStatus.QUEUED else None)


def fail_chunk(
    work: ChunkWork, token: uuid.UUID, error: str, max_attempts: int, *, permanent: bool = False
) -> Settled | None:
    """The handler raised: retry the chunk (queued again), or fail the job once the chunk has had
    `max_attempts` claims, or at once when the failure is `permanent` (PermanentJobError). A pending
    stop wins over a retry. None if the lease is no longer ours."""
    with session_scope() as session:
        job = _lock_if_ours(session, work.job_id, token, work.chunk)
        if job is None:
            return None
        job.error = safe_text(f"chunk {work.chunk}, attempt {job.attempts}: {error}", MAX_JOB_ERROR_CHARS)
        if permanent or job.attempts >= max_attempts:
            _release(job, JobStatus.FAILED)
        elif job.status == JobStatus.STOPPING:
            _release(job, JobStatus.STOPPED)
        else:
            _release(job, JobStatus.QUEUED)
        return Settled(job.status, _message(job) if job.status == JobStatus.QUEUED else None)


def _sent_before(grace_s: float) -> ColumnElement[bool]:
    """Queued, its chunk message sent more than `grace_s` ago (or never recorded as sent)."""
    return (Job.status == JobStatus.QUEUED) & or_(
        Job.enqueued_at.is_(None), Job.enqueued_at < func.now() - timedelta(seconds=grace_s)
    )


def queued_chunks_before(grace_s: float) -> list[ChunkMessage]:
    """The chunk message of every job queued whose message was sent more than `grace_s` ago."""
    with get_engine().begin() as conn:
        rows = conn.execute(select(Job.id, Job.chunk, Job.task_name, Job.queue).where(_sent_before(grace_s)))
        return [ChunkMessage(*row) for row in rows]


def mark_chunks_resent(job_ids: list[uuid.UUID], grace_s: float) -> list[ChunkMessage]:
    """Of `job_ids`, the jobs still queued and last sent more than `grace_s` ago, now marked sent
    (in the statement that picks them: two checks send a chunk once); the caller sends their chunk
    messages after this commit."""
    if not job_ids:
        return []
    with get_engine().begin() as conn:
        rows = conn.execute(
            update(Job)
            .where(Job.id.in_(job_ids), _sent_before(grace_s))
            .values(enqueued_at=func.now())
            .returning(Job.id, Job.chunk, Job.task_name, Job.queue)
        )
        return [ChunkMessage(*row) for row in rows]


@dataclass(frozen=True, slots=True)
class ReapReport:
    requeued: list[uuid.UUID] = field(default_factory=list)
    """Running jobs whose worker stopped heartbeating: queued again, their chunk sent again."""
    failed: list[uuid.UUID] = field(default_factory=list)
    """The same, but their chunk had no attempts left."""
    stopped: list[uuid.UUID] = field(default_factory=list)
    """Stopping jobs whose worker died: stopped (the unfinished chunk runs again on resume)."""
    resent: list[uuid.UUID] = field(default_factory=list)
    """Queued for longer than the resend threshold: their chunk message was sent again."""


def reap_stale_jobs(
    stale_after_s: float, max_attempts: int, resend_after_s: float | None = None
) -> ReapReport:
    """Requeue running jobs whose heartbeat is stale (fail those out of attempts) and resend the
    chunk of jobs queued for longer than `resend_after_s` (default: Settings.job_resend_after_s),
    by the task name and queue on each row. Every resend is safe: a duplicate chunk is a no-op."""
    if resend_after_s is None:
        resend_after_s = get_settings().job_resend_after_s
    stale = _stale(stale_after_s)
    route = (Job.id, Job.chunk, Job.task_name, Job.queue)
    released = {"lease_owner": None, "lease_token": None}
    with get_engine().begin() as conn:
        stopped = conn.execute(
            update(Job)
            .where(Job.status == JobStatus.STOPPING, stale)
            .values(status=JobStatus.STOPPED, **released)
            .returning(Job.id)
        ).scalars()
        stopped_ids = list(stopped)
        failed = conn.execute(
            update(Job)
            .where(Job.status == JobStatus.RUNNING, Job.attempts >= max_attempts, stale)
            .values(
                status=JobStatus.FAILED,
                finished_at=func.now(),
                error=func.concat(
                    "abandoned: chunk ",
                    Job.chunk,
                    " lost its worker ",
                    Job.attempts,
                    " times (heartbeat lost)",
                ),
                **released,
            )
            .returning(Job.id)
        ).scalars()
        failed_ids = list(failed)
        requeued = [
            ChunkMessage(*row)
            for row in conn.execute(
                update(Job)
                .where(Job.status == JobStatus.RUNNING, Job.attempts < max_attempts, stale)
                .values(status=JobStatus.QUEUED, enqueued_at=func.now(), **released)
                .returning(*route)
            )
        ]
        lost = [
            ChunkMessage(*row)
            for row in conn.execute(
                update(Job)
                .where(
                    Job.status == JobStatus.QUEUED,
                    or_(
                        Job.enqueued_at.is_(None),
                        Job.enqueued_at < func.now() - timedelta(seconds=resend_after_s),
                    ),
                )
                .values(enqueued_at=func.now())
                .returning(*route)
            )
        ]
    for message in [*requeued, *lost]:
        try:
            message.send()
        except Exception:  # still queued: the next round resends it after `resend_after_s`
            log.exception("reaper: could not send chunk %d of job %s", message.chunk, message.job_id)
    return ReapReport(
        requeued=[m.job_id for m in requeued],
        failed=failed_ids,
        stopped=stopped_ids,
        resent=[m.job_id for m in lost],
    )
