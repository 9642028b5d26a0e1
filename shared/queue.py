"""The one Celery app. Services send tasks by name, so the gateway never imports runner code.

Reliability settings: a task is acknowledged only after it finished (late acks), a worker takes one
task at a time (prefetch 1), a task whose worker died is requeued (reject on worker lost), and the
broker's visibility timeout is longer than any match can run, so Redis never hands a running match
to a second worker. The match task itself is idempotent (see services.match_runner.tasks).
"""

from __future__ import annotations

from datetime import timedelta

from celery import Celery
from kombu import Queue

from shared.config import Settings, get_settings

QUEUE_MATCHES = "matches"
QUEUE_EVOLUTION = "evolution"
QUEUE_TRAINING = "training"

TASK_PLAY_MATCH = "arena.matches.play"
TASK_LADDER_TICK = "arena.matches.ladder_tick"
TASK_REAP_STALE = "arena.matches.reap_stale"


def create_celery(settings: Settings | None = None) -> Celery:
    settings = settings or get_settings()
    app = Celery("arena", broker=settings.redis_url)
    app.conf.update(
        task_queues=[Queue(QUEUE_MATCHES), Queue(QUEUE_EVOLUTION), Queue(QUEUE_TRAINING)],
        task_default_queue=QUEUE_MATCHES,
        task_routes={
            "arena.matches.*": {"queue": QUEUE_MATCHES},
            "arena.evolution.*": {"queue": QUEUE_EVOLUTION},
            "arena.training.*": {"queue": QUEUE_TRAINING},
        },
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_soft_time_limit=settings.match_soft_time_limit_s,
        task_time_limit=settings.match_hard_time_limit_s,
        broker_transport_options={"visibility_timeout": settings.broker_visibility_timeout_s},
        broker_connection_retry_on_startup=True,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        worker_hijack_root_logger=False,
        # Ticks share the matches queue and wait behind matches being played; one that is older than
        # its interval has been superseded by a newer one, so it expires instead of piling up.
        beat_schedule={
            "ladder": {
                "task": TASK_LADDER_TICK,
                "schedule": timedelta(seconds=settings.ladder_interval_s),
                "options": {"expires": settings.ladder_interval_s},
            },
            "reaper": {
                "task": TASK_REAP_STALE,
                "schedule": timedelta(seconds=settings.reaper_interval_s),
                "options": {"expires": settings.reaper_interval_s},
            },
        },
        include=["services.match_runner.tasks"],
    )
    return app


celery_app = create_celery()
