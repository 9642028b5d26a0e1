"""The one Celery app, shared by every service and knowing none of them.

It declares the queues and the reliability settings, nothing else. Each service declares its own
tasks on this app, each with its queue and time limits on the task (`@celery_app.task(name=...,
queue=..., soft_time_limit=..., time_limit=..., acks_late=True)`), and its worker module imports
its tasks and owns its beat schedule (services/match_runner/worker.py). A service that sends
another's task does so by name, with the queue named explicitly (`send_task`): the name constants
live in shared/, next to the domain function that sends them (e.g. shared.matches).

Reliability: a task is acknowledged only after it ended (late acks), a worker reserves one task at a
time (prefetch 1), a task whose worker process died is requeued (reject on worker lost), and only
JSON crosses the broker. With late acks Redis hands an unacknowledged task to another worker after
the visibility timeout, so Settings require that timeout to outlast every task's hard time limit
(see docs/long-jobs.md); tasks that can run twice are written to be idempotent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from celery import Celery
from kombu import Exchange, Queue

from shared.config import Settings, get_settings

QUEUE_MATCHES = "matches"
QUEUE_TRAINING = "training"
QUEUE_EVOLUTION = "evolution"
QUEUES = (QUEUE_MATCHES, QUEUE_TRAINING, QUEUE_EVOLUTION)


def create_celery(settings: Settings | None = None) -> Celery:
    settings = settings or get_settings()
    app = Celery("arena", broker=settings.redis_url)
    app.conf.update(
        # One direct exchange per queue, routing key = queue name: a message reaches its queue only.
        # A queue not declared here is an error, never a silently created queue nobody consumes.
        task_queues=[Queue(name, Exchange(name, type="direct"), routing_key=name) for name in QUEUES],
        task_create_missing_queues=False,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_transport_options={"visibility_timeout": settings.broker_visibility_timeout_s},
        broker_connection_retry_on_startup=True,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        worker_hijack_root_logger=False,
    )
    return app


celery_app = create_celery()


def send_task(name: str, queue: str, args: Sequence[Any] = (), **options: Any) -> None:
    """Send a task by name to its queue; the sender never imports the service that runs it.

    The queue is always explicit: a task sent by name carries no routing of its own, and an
    undeclared queue raises (celery.exceptions.QueueNotFound)."""
    celery_app.send_task(name, args=list(args), queue=queue, **options)
