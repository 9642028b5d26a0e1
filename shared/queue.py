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

Outages: a task that fails because the database is unreachable is sent again with a capped backoff
(`ArenaTask`) rather than acknowledged away, unless it opts out (`retry_on_outage=False`, the beat's
periodic tasks, whose next tick does the same work). A worker that loses Redis connects again for as
long as it takes (`Settings.broker_connection_max_retries`, None: no last try). Worker and beat
logs say an outage once per interval per kind, without tracebacks, and a worker's reconnection
attempts once per interval too (shared/logging_throttle.py).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any

from celery import Celery, Task, signals
from celery.worker.consumer import consumer as celery_consumer
from kombu import Exchange, Queue

from shared.broker_contents import TRANSPORT_OPTIONS
from shared.config import Settings, get_settings
from shared.logging_throttle import LogThrottle, install_outage_filter
from shared.outages import Dependency, describe, unreachable

log = logging.getLogger(__name__)

QUEUE_MATCHES = "matches"
QUEUE_TRAINING = "training"
QUEUE_EVOLUTION = "evolution"
QUEUES = (QUEUE_MATCHES, QUEUE_TRAINING, QUEUE_EVOLUTION)


OUTAGE_RETRY_MAX_S = 10.0
"""The longest wait between two tries of a task during a database outage: a task queued during an
outage starts at most this long (and at least half of it) after the database is back. Far below the
broker's visibility timeout, so a delayed retry held by a worker is never handed to another."""
OUTAGE_MAX_RETRIES = 100_000
"""Tries of one task through outages (about 11 days at the capped delay): in effect for ever; past
it, the reaper still resends a match or chunk that is left queued."""
_outage_log = LogThrottle()


def outage_retry_delay_s(retries: int, rng: random.Random | None = None) -> float:
    """The countdown before try `retries + 1`: doubling from 1 s up to OUTAGE_RETRY_MAX_S, each drawn
    from its upper half, so the tasks of one outage do not all come back in the same second."""
    ceiling = min(OUTAGE_RETRY_MAX_S, 2.0 ** min(retries, 16))
    return ceiling * (rng or random).uniform(0.5, 1.0)


class ArenaTask(Task[Any, Any]):
    """Every Arena task: a task that fails because the database is unreachable is sent again after
    `outage_retry_delay_s` (and its message acknowledged only once the retry is sent), so a play or
    chunk message is never lost to an outage. Safe because every task is idempotent (its claim
    makes a second run a no-op). Other errors are raised as before."""

    retry_on_outage = True
    """False for periodic tasks (ladder tick, reaper): the next tick does the work; retries of every
    tick would only pile up."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.run(*args, **kwargs)
        except Exception as exc:
            if not self.retry_on_outage or unreachable(exc) is not Dependency.DATABASE:
                raise
            delay = outage_retry_delay_s(self.request.retries)
            _outage_log.log(
                log,
                logging.WARNING,
                ("retry", self.name),
                "%s: the database is unreachable (%s); retrying in %.1f s",
                self.name,
                describe(exc),
                delay,
            )
            raise self.retry(exc=exc, countdown=delay, max_retries=OUTAGE_MAX_RETRIES) from None


_consumer: Any = celery_consumer
"""The worker's consumer module, whose log templates name its reconnection lines (celery-types'
stub of the module leaves them out)."""


def broker_reconnect(record: logging.LogRecord) -> str | None:
    """The kind of a worker's record about its lost broker connection (Celery logs each attempt, 2
    to 30 s apart, for as long as the outage lasts), for shared.logging_throttle.RepeatLogFilter."""
    if record.name != _consumer.logger.name:
        return None
    args = record.args if isinstance(record.args, tuple) else ()
    lost = bool(args) and args[0] == _consumer.CONNECTION_RETRY
    if record.msg == _consumer.CONNECTION_ERROR or lost:
        return "broker-reconnect"
    return None


@signals.after_setup_logger.connect
def _quiet_outages(logger: logging.Logger | None = None, **_: Any) -> None:
    """Worker and beat: outage errors logged once per interval per kind, without tracebacks; a
    worker's reconnection attempts once per interval."""
    install_outage_filter(logger, repeats=broker_reconnect)


@signals.after_setup_task_logger.connect
def _quiet_task_outages(logger: logging.Logger | None = None, **_: Any) -> None:
    install_outage_filter(logger)


def create_celery(settings: Settings | None = None) -> Celery[ArenaTask]:
    settings = settings or get_settings()
    app = Celery("arena", broker=settings.redis_url, task_cls=ArenaTask)
    app.conf.update(
        # One direct exchange per queue, routing key = queue name: a message reaches its queue only.
        # A queue not declared here is an error, never a silently created queue nobody consumes.
        task_queues=[Queue(name, Exchange(name, type="direct"), routing_key=name) for name in QUEUES],
        task_create_missing_queues=False,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # The key names shared.broker_contents reads (the lost-message check), set explicitly.
        broker_transport_options={
            "visibility_timeout": settings.broker_visibility_timeout_s,
            **TRANSPORT_OPTIONS,
        },
        # A worker whose broker is away connects again with capped backoff (kombu: 2 s more per try,
        # at most 30 s), at start-up and after a loss, and with None never gives up and exits.
        broker_connection_retry=True,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=settings.broker_connection_max_retries,
        # Celery's consumer, but one that outlives losing Redis while it holds messages.
        worker_consumer="shared.worker_consumer:ArenaConsumer",
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
