"""Match runner fixtures: a worker per module (tests/conftest.py has the bots and the user who
owns them; tests/support/match_runner.py starts workers and queues matches)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.ports import free_port
from tests.support.match_runner import start_worker
from tests.support.processes import ManagedProcess


@pytest.fixture(scope="module")
def worker(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    """A worker that also serves its Prometheus metrics on `process.metrics_url`."""
    port = free_port()
    process = start_worker("worker", {"ARENA_WORKER_METRICS_PORT": str(port)})
    process.metrics_url = f"http://127.0.0.1:{port}/metrics"  # type: ignore[attr-defined]
    yield process
    process.stop()
