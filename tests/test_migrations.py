"""Migrations and models agree, and the schema can go all the way down and up again."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, pool

from shared.db.models import Base
from tests.conftest import _pg_available, create_database, drop_database, migrate


@pytest.fixture()
def fresh_url() -> Iterator[str]:
    if not _pg_available():
        pytest.fail("PostgreSQL is not reachable; start it (see README) and retry")
    name = f"arena_migrations_{secrets.token_hex(4)}"
    url = create_database(name)
    yield url
    drop_database(name)


def _diff(url: str) -> list[object]:
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": False}
            )
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def _tables(url: str) -> set[str]:
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_check_downgrade_upgrade(fresh_url: str) -> None:
    migrate(fresh_url)
    assert _diff(fresh_url) == [], "models and migrations differ: write a migration"
    assert set(Base.metadata.tables) <= _tables(fresh_url)

    migrate(fresh_url, "base", "downgrade")
    assert _tables(fresh_url) <= {"alembic_version"}

    migrate(fresh_url)
    assert _diff(fresh_url) == []
