"""Fixtures of the live tests that play a real match: two HTTP bots and a match-runner worker."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from tests.support.bot_processes import RunningBot
from tests.support.match_runner import start_worker
from tests.support.processes import ManagedProcess


@pytest.fixture
def two_bots(
    bot_factory: Callable[..., RunningBot], register_bot: Callable[..., uuid.UUID]
) -> list[uuid.UUID]:
    """Two podracing bots that answer well, registered as `user_id`'s HTTP bots."""
    return [register_bot(bot_factory("ok")) for _ in range(2)]


@pytest.fixture
def worker(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    """A match-runner worker on the test database and Redis, stopped after the test."""
    process = start_worker("live-worker")
    yield process
    process.stop()
