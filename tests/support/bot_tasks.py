"""Test-only Celery tasks: a worker registers hosted bots and new versions through shared.bots, the
functions the API calls, as the evolver and the trainer do.

Each task records its outcome as JSON under `report_key` in the test Redis database: the new ids, or
the domain error's class, message and details. Started with `celery -A tests.support.bot_tasks`;
the queue is test-only, so no real worker ever takes these tasks.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import redis
from kombu import Exchange, Queue

from shared import bots
from shared.config import get_settings
from shared.db.models import User
from shared.db.session import get_sessionmaker
from shared.queue import celery_app
from shared.states import BotOrigin, HostedContract

QUEUE = "arena-test-bots"
TASK_REGISTER_HOSTED = "arena_test.bots.register_hosted"
TASK_ADD_VERSION = "arena_test.bots.add_version"

app = celery_app
"""What `celery -A tests.support.bot_tasks` picks up."""

# The app refuses queues it does not declare; the test queue is declared here, in the test worker
# and in the test process that sends to it, the way the app declares its own.
celery_app.amqp.queues.add(Queue(QUEUE, Exchange(QUEUE, type="direct"), routing_key=QUEUE))


def _record(report_key: str, outcome: dict[str, Any]) -> None:
    client = redis.Redis.from_url(get_settings().redis_url)
    try:
        client.set(report_key, json.dumps(outcome), ex=600)
    finally:
        client.close()


def _error(exc: bots.BotError) -> dict[str, Any]:
    return {"error": type(exc).__name__, "message": exc.message, "details": exc.details}


@celery_app.task(name=TASK_REGISTER_HOSTED, queue=QUEUE, soft_time_limit=60, time_limit=90, acks_late=True)
def register_hosted(
    report_key: str,
    owner_id: str,
    name: str,
    game: str,
    source: str,
    contract: str,
    origin: str,
    notes: dict[str, Any] | None = None,
) -> None:
    settings = get_settings()
    with get_sessionmaker()() as session:
        owner = session.get(User, uuid.UUID(owner_id))
        assert owner is not None, owner_id
        try:
            bot = bots.register_hosted_bot(
                session,
                settings,
                owner,
                name=name,
                game=game,
                source=source,
                contract=HostedContract(contract),
                origin=BotOrigin(origin),
                notes=notes,
            )
        except bots.BotError as exc:
            _record(report_key, _error(exc))
            return
        _record(report_key, {"bot_id": str(bot.id), "version_id": str(bot.current_version_id)})


@celery_app.task(name=TASK_ADD_VERSION, queue=QUEUE, soft_time_limit=60, time_limit=90, acks_late=True)
def add_version(report_key: str, bot_id: str, source: str, notes: dict[str, Any] | None = None) -> None:
    settings = get_settings()
    with get_sessionmaker()() as session:
        try:
            bot = bots.get_bot(session, uuid.UUID(bot_id))
            version = bots.add_version(session, settings, bot, source=source, notes=notes)
        except bots.BotError as exc:
            _record(report_key, _error(exc))
            return
        _record(report_key, {"bot_id": bot_id, "version_id": str(version.id), "number": version.number})
