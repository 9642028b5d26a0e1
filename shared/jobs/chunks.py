"""Running one chunk: the body of every service's chunk task.

    @celery_app.task(name=TASK_X_CHUNK, queue=QUEUE_X, soft_time_limit=..., time_limit=..., acks_late=True)
    def x_chunk(job_id: str, chunk: int) -> str:
        return run_chunk(HANDLER, job_id, chunk)

Claim chunk N (a conditional UPDATE: queued, or running with a stale heartbeat, and still at chunk
N), run the handler from the checkpoint while a thread heartbeats, then commit the checkpoint, the
handler's own writes, the next chunk number and the status in one transaction, only while the lease
is still ours, and after the commit send the next chunk. See docs/long-jobs.md.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from enum import StrEnum
from types import TracebackType

from shared.config import Settings, get_settings
from shared.jobs.handler import ChunkWork, JobHandler, PermanentJobError
from shared.jobs.store import ChunkMessage, Settled, claim_chunk, commit_chunk, fail_chunk, heartbeat
from shared.states import JobStatus

log = logging.getLogger(__name__)


class ChunkOutcome(StrEnum):
    """What one chunk task did (its return value, for logs; never stored)."""

    SKIPPED = "skipped"
    """Not ours to run: a duplicate, a chunk already done, a job running elsewhere, stopped, gone."""
    NEXT_QUEUED = "next_queued"
    FINISHED = "finished"
    STOPPED = "stopped"
    RETRYING = "retrying"
    """The handler raised; the chunk was queued again."""
    FAILED = "failed"
    """The handler raised and the chunk had no attempts left: the job failed."""
    LOST = "lost"
    """The lease was taken away meanwhile (reaped, taken over): the chunk's work was discarded."""


def worker_name() -> str:
    return f"{socket.gethostname()}/{os.getpid()}"


class _Heartbeat:
    """Marks the chunk alive every interval, and tells the handler about stops and a lost lease."""

    def __init__(self, work: ChunkWork, token: uuid.UUID, interval_s: float) -> None:
        self._work = work
        self._token = token
        self._interval_s = interval_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"job-heartbeat-{work.job_id}", daemon=True)

    def _loop(self) -> None:
        while not self._done.wait(self._interval_s):
            try:
                status = heartbeat(self._work.job_id, self._token)
            except Exception as exc:  # the database blinked: try again next interval
                log.warning("job %s: heartbeat failed: %s", self._work.job_id, exc)
                continue
            if status is None:
                self._work.lost_event.set()
                return
            if status == JobStatus.STOPPING:
                self._work.stop_event.set()
            else:
                self._work.stop_event.clear()

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._done.set()
        self._thread.join(timeout=max(5.0, self._interval_s * 2))


def _send(message: ChunkMessage) -> None:
    """Send after the commit; a failed send leaves the job queued for the lost-message check
    (shared/jobs/lost.py) to resend."""
    try:
        message.send()
    except Exception:
        log.exception(
            "job %s: could not send chunk %d; the lost-message check will resend it",
            message.job_id,
            message.chunk,
        )


def run_chunk(
    handler: JobHandler,
    job_id: str | uuid.UUID,
    chunk: int,
    settings: Settings | None = None,
    *,
    send_next: bool = True,
) -> ChunkOutcome:
    """Run chunk `chunk` of the job if it is ours to run. Idempotent: a duplicate or redelivered
    message for a chunk that is done, or running elsewhere, changes nothing. `send_next=False` is
    for a caller that runs the chunks itself, in process (`arena evolve` without a server)."""
    settings = settings or get_settings()
    job_uuid = uuid.UUID(str(job_id))
    claim = claim_chunk(
        job_uuid,
        handler.kind,
        int(chunk),
        worker_name(),
        settings.stale_job_after_s,
        settings.max_job_chunk_attempts,
    )
    if claim is None:
        log.info("job %s chunk %s is not ours to run", job_uuid, chunk)
        return ChunkOutcome.SKIPPED
    work, token = claim.work, claim.token
    log.info("job %s (%s): chunk %d, attempt %d", job_uuid, work.kind, work.chunk, work.attempt)
    failed = False
    settled: Settled | None = None
    with _Heartbeat(work, token, settings.job_heartbeat_interval_s):
        try:
            result = handler.run_chunk(work)
            if not work.lease_lost:
                settled = commit_chunk(handler, work, token, result)
        except PermanentJobError as exc:
            log.error("job %s: chunk %d cannot succeed: %s", job_uuid, work.chunk, exc)
            failed = True
            settled = fail_chunk(work, token, str(exc), settings.max_job_chunk_attempts, permanent=True)
        except Exception as exc:
            log.exception("job %s: chunk %d failed (attempt %d)", job_uuid, work.chunk, work.attempt)
            failed = True
            settled = fail_chunk(work, token, f"{type(exc).__name__}: {exc}", settings.max_job_chunk_attempts)
    if settled is None:
        log.warning("job %s: chunk %d lost its lease; its work was discarded", job_uuid, work.chunk)
        return ChunkOutcome.LOST
    if settled.next is not None and send_next:
        _send(settled.next)
    outcome = {
        JobStatus.QUEUED: ChunkOutcome.RETRYING if failed else ChunkOutcome.NEXT_QUEUED,
        JobStatus.FINISHED: ChunkOutcome.FINISHED,
        JobStatus.STOPPED: ChunkOutcome.STOPPED,
        JobStatus.FAILED: ChunkOutcome.FAILED,
    }[settled.status]
    log.info("job %s: chunk %d -> %s", job_uuid, work.chunk, outcome)
    return outcome
