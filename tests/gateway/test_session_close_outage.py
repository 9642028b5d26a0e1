"""The gateway's request session (services.gateway.deps) when PostgreSQL goes away after the endpoint
has answered but before the session is closed, on a PostgreSQL server of this test's own.

Closing rolls back the request's last transaction, on a connection the server has dropped. That
error used to escape the dependency after the answer had started: Starlette then tried to answer
503 on a started response, and uvicorn logged "Exception in ASGI application" with a traceback of
some 150 lines per such request (tests/match_runner/test_platform_outages.py met it). Now the dead
connection is discarded quietly, returned to the pool, and the next session works once the
database is back."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import anyio
import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import QueuePool

from services.gateway import deps
from shared.logging_throttle import LogThrottle
from tests.support.owned_services import OwnedPostgres, owned_postgres


@pytest.fixture
def postgres() -> Iterator[OwnedPostgres]:
    with owned_postgres() as server:
        yield server


@pytest.fixture
def engine(postgres: OwnedPostgres, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """The gateway's sessions, on the test's own server (the same engine options as the platform's)."""
    engine = create_engine(postgres.url(), pool_pre_ping=True, pool_size=5, max_overflow=5)
    maker = sessionmaker(engine, expire_on_commit=False)
    monkeypatch.setattr(deps, "get_sessionmaker", lambda: maker)
    yield engine
    engine.dispose()


def _checked_out(engine: Engine) -> int:
    """Connections taken from the engine's pool and not given back yet (its QueuePool counts them)."""
    assert isinstance(engine.pool, QueuePool)
    return engine.pool.checkedout()


async def _request(read_then: contextlib.AbstractContextManager[None]) -> None:
    """One request's session as FastAPI runs the dependency: a read, then `read_then`, then close."""
    async with contextlib.asynccontextmanager(deps._db)() as session:
        assert isinstance(session, Session)
        assert session.execute(text("SELECT 1")).scalar_one() == 1
        with read_then:
            pass


class _Kill(contextlib.AbstractContextManager[None]):
    def __init__(self, postgres: OwnedPostgres) -> None:
        self.postgres = postgres

    def __exit__(self, *_: object) -> None:
        self.postgres.kill()


def test_a_session_whose_database_went_away_closes_quietly(
    postgres: OwnedPostgres, engine: Engine, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deps, "_close_log", LogThrottle())  # said here, whatever ran before
    with caplog.at_level(logging.WARNING):
        anyio.run(_request, _Kill(postgres))  # answered; then the database died; closing raises nothing
    assert _checked_out(engine) == 0, "the dead connection went back to the pool, discarded"
    said = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    assert [(name, level) for name, level, _ in said] == [("services.gateway.deps", "WARNING")], said
    assert "connection was lost" in said[0][2]

    postgres.start()
    anyio.run(_request, contextlib.nullcontext())
    assert _checked_out(engine) == 0
