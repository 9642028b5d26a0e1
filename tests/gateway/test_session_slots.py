"""More concurrent requests than the thread pool has threads and the connection pool connections
must queue, never deadlock (it used to: every thread waiting for a connection, every connection
held by a request waiting for a thread to serialise its response, until the pool's timeout turned
them all into 500s)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import anyio.to_thread
import httpx
import pytest
from fastapi import FastAPI
from pydantic import BaseModel
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.orm import sessionmaker
from sqlalchemy.pool import QueuePool

from services.gateway import deps
from services.gateway.deps import DbSession


class Answer(BaseModel):
    value: int


@pytest.fixture
def tiny_pool(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """One connection, no overflow, a short checkout timeout: a deadlock shows within seconds."""
    engine = create_engine(database_url, pool_size=1, max_overflow=0, pool_timeout=3)
    monkeypatch.setattr(deps, "get_sessionmaker", lambda: sessionmaker(engine, expire_on_commit=False))
    yield engine
    engine.dispose()


def _checked_out(engine: Engine) -> int:
    """Connections taken from the engine's pool and not given back yet (its QueuePool counts them)."""
    assert isinstance(engine.pool, QueuePool)
    return engine.pool.checkedout()


def test_requests_beyond_the_pools_wait_for_a_session_instead_of_deadlocking(tiny_pool: Engine) -> None:
    app = FastAPI()

    @app.get("/value", response_model=Answer)
    def value(session: DbSession) -> Answer:  # a plain function: the endpoint runs on a thread
        return Answer(value=int(session.execute(text("SELECT 1 FROM pg_sleep(0.005)")).scalar_one()))

    async def many() -> list[int]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = 2
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            answers = await asyncio.gather(*(client.get("/value") for _ in range(24)))
        return [answer.status_code for answer in answers]

    started = time.monotonic()
    statuses = asyncio.run(asyncio.wait_for(many(), 30))
    assert statuses == [200] * 24
    assert time.monotonic() - started < 3  # well inside the pool's timeout: nobody waited it out
    assert _checked_out(tiny_pool) == 0  # every session was closed
