"""Celery tasks of the match runner, on the shared app (task names are in shared.queue)."""

from __future__ import annotations

import logging
import uuid

from services.match_runner.ladder import ladder_tick
from services.match_runner.play import run_match
from services.match_runner.store import reap_stale
from shared.config import get_settings
from shared.matches import enqueue_match
from shared.queue import TASK_LADDER_TICK, TASK_PLAY_MATCH, TASK_REAP_STALE, celery_app

log = logging.getLogger(__name__)


@celery_app.task(name=TASK_PLAY_MATCH)
def play(match_id: str) -> str:
    """Play a match. Idempotent: redelivery, retries and duplicates are harmless."""
    return str(run_match(uuid.UUID(match_id)))


@celery_app.task(name=TASK_LADDER_TICK, ignore_result=True)
def ladder(*_: object) -> int:
    return len(ladder_tick(get_settings()))


@celery_app.task(name=TASK_REAP_STALE, ignore_result=True)
def reap() -> dict[str, int]:
    """Give matches of dead workers to the queue again (or fail them after too many attempts)."""
    settings = get_settings()
    requeued, failed = reap_stale(settings.stale_match_after_s, settings.max_match_attempts)
    for match_id in requeued:
        enqueue_match(match_id)
    if requeued or failed:
        log.warning("reaper: requeued %d stale matches, failed %d", len(requeued), len(failed))
    return {"requeued": len(requeued), "failed": len(failed)}
