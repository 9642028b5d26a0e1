"""The evolver's Celery task: one chunk of an evolution run, on the `evolution` queue, with the long
jobs' limits on the task (docs/long-jobs.md). Its name lives in shared.evolution, next to
`create_run`, which sends the first chunk; later chunks are sent by shared.jobs and the reaper."""

from __future__ import annotations

from services.evolver.handler import HANDLER
from shared.config import get_settings
from shared.evolution import TASK_EVOLVE_CHUNK
from shared.jobs import run_chunk
from shared.queue import QUEUE_EVOLUTION, celery_app

_settings = get_settings()


@celery_app.task(
    name=TASK_EVOLVE_CHUNK,
    queue=QUEUE_EVOLUTION,
    soft_time_limit=_settings.job_chunk_soft_time_limit_s,
    time_limit=_settings.job_chunk_hard_time_limit_s,
    acks_late=True,
    ignore_result=True,
)
def evolve_chunk(job_id: str, chunk: int) -> str:
    """Run a chunk of an evolution run if it is ours to run (idempotent: duplicates are no-ops)."""
    return str(run_chunk(HANDLER, job_id, chunk))
