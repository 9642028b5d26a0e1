"""Match runner fixtures: a worker per module, and a ladder of this test's bots only (tests/conftest.py
has the bots and the user who owns them; tests/support/match_runner.py starts workers and queues
matches)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import update

from shared.db.models import Bot
from shared.db.session import session_scope
from shared.ports import free_port
from shared.states import BotStatus
from tests.support.match_runner import cancel_earlier_matches, start_worker
from tests.support.processes import ManagedProcess


@pytest.fixture(scope="module")
def worker(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    """A worker that also serves its Prometheus metrics on `process.metrics_url`."""
    port = free_port()
    process = start_worker("worker", {"ARENA_WORKER_METRICS_PORT": str(port)})
    process.metrics_url = f"http://127.0.0.1:{port}/metrics"  # type: ignore[attr-defined]
    yield process
    process.stop()


@pytest.fixture
def ladder_world(database_url: str, redis_url: str) -> Iterator[None]:  # noqa: ARG001 (requested for its side effect)
    """Only this test's bots are active, and the matches queue starts empty."""
    _leave_the_ladder()
    yield
    _leave_the_ladder()


def _leave_the_ladder() -> None:
    """Every bot made inactive, earlier matches cancelled, the queue emptied."""
    with session_scope() as session:
        session.execute(update(Bot).values(status=BotStatus.INACTIVE))
    cancel_earlier_matches()
