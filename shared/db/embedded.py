"""PostgreSQL for one machine: the configured server when it answers, otherwise an embedded one
(pgserver) under a data folder. `make demo` and `arena evolve` without a server use it."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import psycopg
from sqlalchemy.engine import make_url

Stop = Callable[[], None]


def libpq_url(url: str, database: str | None = None) -> str:
    """A psycopg connection string for a SQLAlchemy URL, optionally for another database."""
    parsed = make_url(url).set(drivername="postgresql")
    if database is not None:
        parsed = parsed.set(database=database)
    return parsed.render_as_string(hide_password=False)


def postgres_reachable(url: str) -> bool:
    try:
        with psycopg.connect(libpq_url(url, "postgres"), connect_timeout=3):
            return True
    except psycopg.Error:
        return False


def _import_pgserver() -> ModuleType:
    """pgserver, imported without the warning it makes platformdirs print on most servers.

    At import pgserver asks platformdirs for the user's runtime directory (for its lock file and
    sockets); where XDG_RUNTIME_DIR is unset (containers, ssh sessions, cron) platformdirs warns and
    falls back to /tmp/runtime-<uid>, which is what we want. That one warning, of that one import,
    is silenced here; every other warning stays visible.
    """
    from platformdirs import RuntimeDirWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeDirWarning)
        import pgserver

    return pgserver


def start_embedded_postgres(data_dir: Path, database: str) -> tuple[str, Stop]:
    get_server = _import_pgserver().get_server

    pgdata = data_dir / "pgdata"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    server = get_server(pgdata, cleanup_mode="stop")
    uri = server.get_uri(database)
    return uri.replace("postgresql://", "postgresql+psycopg://", 1), server.cleanup


def ensure_database(url: str) -> bool:
    """Create the URL's database if it does not exist; True if it was created."""
    name = make_url(url).database or "arena"
    with psycopg.connect(libpq_url(url, "postgres"), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return False
        conn.execute(f'CREATE DATABASE "{name.replace(chr(34), "")}"')
        return True


def drop_database(url: str) -> None:
    """Drop the URL's database (closing its other connections); nothing if it does not exist.

    The counterpart of `ensure_database` for throwaway databases (benches), so none is left behind.
    """
    name = make_url(url).database
    if not name:
        raise ValueError(f"the URL names no database: {make_url(url).render_as_string()}")
    with psycopg.connect(libpq_url(url, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name.replace(chr(34), "")}" WITH (FORCE)')
