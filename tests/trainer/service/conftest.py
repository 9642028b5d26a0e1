"""Fixtures for the trainer service: the real gateway in-process (tests/conftest.py's client and
users), real trainer workers started with the command compose runs, and an open log of training
events."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import redis

from shared.queue import QUEUE_TRAINING
from tests.support.accounts import Account
from tests.support.processes import ManagedProcess
from tests.support.training import EventLog, start_trainers


@pytest.fixture
def training_events(redis_url: str) -> Iterator[EventLog]:  # noqa: ARG001 (requested for its side effect)
    with EventLog() as log:
        yield log


@pytest.fixture(scope="module")
def empty_queue(redis_url: str) -> None:
    """Chunk messages another module left behind must not reach this module's workers."""
    redis.Redis.from_url(redis_url).delete(QUEUE_TRAINING)


@pytest.fixture(scope="module")
def trainer(database_url: str, empty_queue: None) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    (process,) = start_trainers("trainer")
    yield process
    process.stop()


@pytest.fixture
def owner(make_user: Callable[..., Account]) -> Account:
    return make_user("trainer")
