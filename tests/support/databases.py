"""Scratch PostgreSQL databases next to the test database, for tests that need one of their own."""

from __future__ import annotations

import psycopg
from sqlalchemy.engine import make_url

from shared.db import embedded
from tests.support.environment import ADMIN_URL


def pg_available() -> bool:
    try:
        with psycopg.connect(ADMIN_URL, connect_timeout=3):
            return True
    except psycopg.OperationalError:
        return False


def create_database(name: str) -> str:
    """An empty database called `name` (dropped first if it exists); its SQLAlchemy URL."""
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


def drop_database(name: str) -> None:
    embedded.drop_database(make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False))
