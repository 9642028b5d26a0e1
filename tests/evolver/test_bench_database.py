"""The evolver bench works in a throwaway database: it must not leave one on the server per run."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from scripts.bench_evolver import bench_database
from shared.config import get_settings
from shared.db.embedded import drop_database, ensure_database, libpq_url
from shared.db.session import get_engine, get_sessionmaker
from tests.support.environment import ADMIN_URL

SERVER_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _exists(name: str) -> bool:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


@pytest.fixture
def bench_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The bench points the platform at its own database; the test session's comes back after."""
    monkeypatch.setenv("ARENA_DATABASE_URL", SERVER_URL)
    yield
    monkeypatch.undo()
    get_settings.cache_clear()
    get_engine.cache_clear()
    get_sessionmaker.cache_clear()


@pytest.mark.slow
def test_drop_database_removes_it_even_with_an_open_connection_and_ignores_a_missing_one() -> None:
    name = f"arena_test_drop_me_{secrets.token_hex(3)}"  # not a fixed name: test runs share the server
    url = make_url(SERVER_URL).set(database=name).render_as_string(hide_password=False)
    ensure_database(url)
    with psycopg.connect(libpq_url(url)):
        drop_database(url)
    assert not _exists(name)
    drop_database(url)  # already gone: nothing to do, no error
    with pytest.raises(ValueError, match="names no database"):
        drop_database("postgresql+psycopg://postgres@127.0.0.1:5432")


@pytest.mark.usefixtures("bench_server")
def test_the_bench_database_is_migrated_for_the_block_and_dropped_after() -> None:
    with bench_database("arena_test_bench") as url:
        name = make_url(url).database
        assert name is not None
        assert name.startswith("arena_test_bench_")
        assert get_settings().database_url == url
        with get_engine().connect() as conn:  # the platform's own engine, migrated to head
            assert conn.execute(text("SELECT count(*) FROM evolution_runs")).scalar_one() == 0
    assert not _exists(name)


@pytest.mark.usefixtures("bench_server")
def test_a_failing_bench_still_drops_its_database() -> None:
    with pytest.raises(RuntimeError, match="bench failed"), bench_database("arena_test_bench") as url:
        raise RuntimeError("bench failed")
    assert not _exists(make_url(url).database or "")


@pytest.mark.usefixtures("bench_server")
def test_keep_database_keeps_it_and_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    with bench_database("arena_test_bench", keep=True) as url:
        pass
    name = make_url(url).database or ""
    try:
        assert _exists(name)
        assert f"database kept: {name}" in capsys.readouterr().err
    finally:
        drop_database(url)
