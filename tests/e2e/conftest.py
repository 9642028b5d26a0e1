"""End-to-end fixtures: a private Redis server per module, so that workers started here never share
a queue with any other test run on the machine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from shared.ports import free_port
from tests.support.owned_services import redis_server_command
from tests.support.processes import ManagedProcess


@pytest.fixture(scope="module")
def private_redis_url() -> Iterator[str]:
    port = free_port()
    server = ManagedProcess(redis_server_command(port), "redis")
    url = f"redis://127.0.0.1:{port}/0"
    try:
        server.wait_until(lambda: bool(redis.Redis.from_url(url).ping()), 20, "redis answering")
        yield url
    finally:
        server.stop()
