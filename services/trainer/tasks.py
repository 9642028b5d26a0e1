"""The trainer's Celery task: one chunk of a training run, on the `training` queue, with the long
jobs' limits on the task (docs/long-jobs.md). Its name lives in shared.training, next to
`create_run`, which sends the first chunk; later chunks are sent by shared.jobs and the reaper."""

from __future__ import annotations

import logging
import uuid

from services.trainer import announce
from services.trainer.handler import HANDLER, clean_up
from services.trainer.store import run_state
from shared.config import get_settings
from shared.jobs import ChunkOutcome, run_chunk
from shared.queue import QUEUE_TRAINING, celery_app
from shared.states import JobStatus
from shared.training import TASK_TRAIN_CHUNK

log = logging.getLogger(__name__)

_settings = get_settings()


@celery_app.task(
    name=TASK_TRAIN_CHUNK,
    queue=QUEUE_TRAINING,
    soft_time_limit=_settings.job_chunk_soft_time_limit_s,
    time_limit=_settings.job_chunk_hard_time_limit_s,
    acks_late=True,
    ignore_result=True,
)
def train_chunk(job_id: str, chunk: int) -> str:
    """Run a chunk of a training run if it is ours to run (idempotent: duplicates are no-ops)."""
    outcome = run_chunk(HANDLER, job_id, chunk)
    status = SETTLED.get(outcome)
    if status is not None:
        after_chunk(uuid.UUID(job_id), status)
    return str(outcome)


SETTLED = {
    ChunkOutcome.NEXT_QUEUED: JobStatus.QUEUED,
    ChunkOutcome.RETRYING: JobStatus.QUEUED,
    ChunkOutcome.FINISHED: JobStatus.FINISHED,
    ChunkOutcome.STOPPED: JobStatus.STOPPED,
    ChunkOutcome.FAILED: JobStatus.FAILED,
}
"""Where a chunk that ran left its run (a skipped chunk or one that lost its lease says nothing)."""


def after_chunk(job_id: uuid.UUID, status: JobStatus) -> None:
    """After the chunk settled: announce where the run stands, delete checkpoint files it let go."""
    try:
        state = run_state(job_id)
        if state is None:
            return
        error = state.error if status == JobStatus.FAILED else None
        announce.status(state.run_id, status, state.iteration, state.global_step, state.stage, error)
        clean_up(get_settings().training_checkpoints_path(), state.run_id)
    except Exception:
        log.exception("job %s: after-chunk work failed", job_id)
