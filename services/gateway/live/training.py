"""Who may follow a training run live, and what its socket (`/ws/training/{run_id}`) says first.

A run is its owner's (and admins') only, in the API and here. A browser cannot put headers on a
WebSocket and a key in the URL would end up in access logs, so the client sends its API key as the
socket's first message, `{"type": "auth", "api_key": "..."}`; the gateway checks it as the API
checks a key (hashed, not revoked) and the run as the API does (`shared.training.get_run`), then
says `training.subscribed`: the run as the database has it once the socket is subscribed. A page
reads the run's metrics after this message, so no iteration falls between the history it reads and
the events that follow. The check is repeated while the socket is open (a revoked key stops it).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from shared import training
from shared.config import Settings
from shared.crypto import hash_api_key
from shared.db.models import ApiKey, User
from shared.db.session import get_sessionmaker

TRAINING_SUBSCRIBED = "training.subscribed"
AUTH = "auth"
MAX_AUTH_MESSAGE_CHARS = 4096

CLOSE_UNAUTHORIZED = 4401
CLOSE_UNKNOWN_RUN = 4404
ASK_FOR_KEY = 'send {"type": "auth", "api_key": "<your API key>"} first'
KEY_REFUSED = "invalid or revoked API key"
UNKNOWN_RUN = "unknown training run"


@dataclass(frozen=True)
class Refusal:
    code: int
    reason: str


def key_in(message: str | None) -> str | None:
    """The API key of an `auth` message; None for anything else."""
    if message is None or len(message) > MAX_AUTH_MESSAGE_CHARS:
        return None
    try:
        body = json.loads(message)
    except ValueError:
        return None
    if not isinstance(body, dict) or body.get("type") != AUTH:
        return None
    key = body.get("api_key")
    return key.strip() if isinstance(key, str) and key.strip() else None


def user_for_key(session: Session, settings: Settings, key: str) -> User | None:
    """The user of an API key, checked as the API checks one (hashed, not revoked); None if refused."""
    return session.scalar(
        select(User)
        .join(ApiKey, ApiKey.user_id == User.id)
        .where(ApiKey.key_hash == hash_api_key(settings, key), ApiKey.revoked_at.is_(None))
    )


def check(settings: Settings, key: str, run_id: uuid.UUID) -> str | Refusal:
    """The `training.subscribed` message if `key` may see run `run_id`, else why not. A run that
    does not exist and one of someone else are the same refusal, as in the API."""
    with get_sessionmaker()() as session:
        user = user_for_key(session, settings, key)
        if user is None:
            return Refusal(CLOSE_UNAUTHORIZED, KEY_REFUSED)
        try:
            run = training.get_run(session, user, run_id)
        except training.RunNotFound:
            return Refusal(CLOSE_UNKNOWN_RUN, UNKNOWN_RUN)
        return json.dumps(
            {
                "type": TRAINING_SUBSCRIBED,
                "run_id": str(run.id),
                "status": str(run.job.status),
                "stage": str(run.stage),
                "iteration": run.iteration,
                "global_step": run.global_step,
            },
            separators=(",", ":"),
        )
