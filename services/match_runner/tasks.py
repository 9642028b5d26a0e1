"""Celery tasks of the match runner, each declared with its queue and time limits on the task.

The play task's name lives in shared.matches (the gateway and the evolver send it); the ladder tick,
the lost-message check, the reaper and the replay sweep are only sent by this service's beat
(worker.py), so their names live here.
"""

from __future__ import annotations

import logging
import random
import uuid
from typing import Any

from services.match_runner import announce
from services.match_runner.ladder import ladder_tick
from services.match_runner.lost import resend_lost_messages
from services.match_runner.play import run_match
from services.match_runner.store import ReapedMatches, reap_stale
from shared.config import Settings, get_settings
from shared.jobs import reap_stale_jobs, resend_lost_chunks
from shared.matches import TASK_PLAY_MATCH, enqueue_match
from shared.queue import QUEUE_MATCHES, celery_app
from shared.replay_store import replay_store
from shared.replay_store.sweep import sweep_orphans

log = logging.getLogger(__name__)

TASK_LADDER_TICK = "arena.matches.ladder_tick"
TASK_RESEND_LOST = "arena.matches.resend_lost"
TASK_REAP_STALE = "arena.matches.reap_stale"
TASK_SWEEP_REPLAYS = "arena.matches.sweep_replays"

_settings = get_settings()
_BEAT_TASK: dict[str, Any] = {
    "queue": QUEUE_MATCHES,
    "soft_time_limit": _settings.beat_task_soft_time_limit_s,
    "time_limit": _settings.beat_task_hard_time_limit_s,
    "acks_late": True,
    "ignore_result": True,
    "retry_on_outage": False,
}
"""What the beat's tasks share: short limits on the matches queue, and no retries through an outage
(shared.queue.ArenaTask): the next tick does the same work."""


@celery_app.task(
    name=TASK_PLAY_MATCH,
    queue=QUEUE_MATCHES,
    soft_time_limit=_settings.match_soft_time_limit_s,
    time_limit=_settings.match_hard_time_limit_s,
    acks_late=True,
)
def play(match_id: str) -> str:
    """Play a match. Idempotent: redelivery, retries and duplicates are harmless. A match that
    cannot be claimed because the database is unreachable is tried again (shared.queue.ArenaTask)."""
    return str(run_match(uuid.UUID(match_id)))


def ladder_round(settings: Settings, rng: random.Random | None = None) -> list[uuid.UUID]:
    """One ladder tick, after sending again the play messages the broker lost: every pending match
    the ladder then counts against `ladder_max_pending` is one a worker will get (a match without a
    message would hold its slot until the reaper's `lost_match_after_s`, ten minutes)."""
    resend_lost_messages(settings)
    return ladder_tick(settings, rng)


@celery_app.task(name=TASK_LADDER_TICK, **_BEAT_TASK)
def ladder(*_: object) -> int:
    return len(ladder_round(get_settings()))


@celery_app.task(name=TASK_RESEND_LOST, **_BEAT_TASK)
def resend_lost() -> int:
    """Send again the play message of queued matches (services/match_runner/lost.py) and the chunk
    message of queued long jobs (shared/jobs/lost.py) that the broker no longer holds."""
    settings = get_settings()
    return len(resend_lost_messages(settings)) + len(resend_lost_chunks(settings))


def reap_matches(stale_after_s: float, max_attempts: int, lost_after_s: float) -> ReapedMatches:
    """One reaper round over matches: requeue (or fail) those of dead workers and resend the play
    message of those queued for longer than `lost_after_s` since it was sent; all sends and
    announcements after the commit.

    A send that fails leaves its match queued with a fresh `sent_at`: a later round resends it."""
    reaped = reap_stale(stale_after_s, max_attempts, lost_after_s)
    for match_id in reaped.to_send():
        try:
            enqueue_match(match_id)
        except Exception:
            log.exception("reaper: could not send match %s (resent after lost_match_after_s)", match_id)
    for match_id, error in reaped.failed:
        announce.match_failed(match_id, None, error)
    if reaped.requeued or reaped.failed or reaped.resent:
        log.warning(
            "reaper: requeued %d stale matches, failed %d, resent %d lost match messages",
            len(reaped.requeued),
            len(reaped.failed),
            len(reaped.resent),
        )
    return reaped


@celery_app.task(name=TASK_REAP_STALE, **_BEAT_TASK)
def reap() -> dict[str, int]:
    """Give matches and long-job chunks of dead workers to their queue again (or fail them after
    too many attempts), and resend match and chunk messages that seem lost.

    Long jobs are reaped here, by the beat the platform always runs, because the job reaper needs no
    service code: each job row names the task and queue of its chunks (see docs/long-jobs.md)."""
    settings = get_settings()
    matches = reap_matches(
        settings.stale_match_after_s, settings.max_match_attempts, settings.lost_match_after_s
    )
    jobs = reap_stale_jobs(settings.stale_job_after_s, settings.max_job_chunk_attempts)
    if jobs.requeued or jobs.failed or jobs.stopped or jobs.resent:
        log.warning(
            "reaper: requeued %d stale jobs, failed %d, stopped %d, resent %d lost chunk messages",
            len(jobs.requeued),
            len(jobs.failed),
            len(jobs.stopped),
            len(jobs.resent),
        )
    return {
        "requeued": len(matches.requeued),
        "failed": len(matches.failed),
        "resent": len(matches.resent),
        "jobs_requeued": len(jobs.requeued),
        "jobs_failed": len(jobs.failed),
        "jobs_stopped": len(jobs.stopped),
        "jobs_resent": len(jobs.resent),
    }


@celery_app.task(
    name=TASK_SWEEP_REPLAYS,
    **{
        **_BEAT_TASK,
        "soft_time_limit": _settings.match_soft_time_limit_s,
        "time_limit": _settings.match_hard_time_limit_s,
    },
)
def sweep_replays() -> int:
    """Remove orphan replay objects (shared/replay_store/sweep.py): those of attempts whose result
    was never committed. It lists the whole store, so it runs hours apart
    (`replay_sweep_interval_s`) with a match's time limits rather than a tick's."""
    settings = get_settings()
    return len(sweep_orphans(replay_store(settings), settings.replay_sweep_min_age_s).removed)
