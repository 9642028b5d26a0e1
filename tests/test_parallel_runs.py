"""What lets pytest-xdist workers run side by side (tests/support/environment.py): a Redis database
of each worker's own, within 4-15, and a PostgreSQL database and data folder named after the process."""

from __future__ import annotations

import os

import pytest

from tests.support.environment import (
    REDIS_DB_BASE,
    TEST_DB_NAME,
    TEST_ENVIRONMENT,
    TEST_REDIS_DB,
    redis_db,
    xdist_worker_number,
)


def test_a_serial_run_keeps_the_base_whatever_it_is() -> None:
    assert redis_db(4, 0) == 4
    assert redis_db(3, 0) == 3, "a serial run may use a database workers never take"


def test_each_worker_takes_the_base_plus_its_number() -> None:
    assert [redis_db(4, worker) for worker in range(4)] == [4, 5, 6, 7]
    assert redis_db(13, 2) == 15


@pytest.mark.parametrize(("base", "worker"), [(14, 2), (3, 1), (0, 5)])
def test_a_worker_outside_4_to_15_stops_with_the_reason(base: int, worker: int) -> None:
    with pytest.raises(RuntimeError, match="ARENA_TEST_REDIS_DB"):
        redis_db(base, worker)


def test_this_process_uses_its_own_databases() -> None:
    worker = xdist_worker_number()
    assert REDIS_DB_BASE + worker == TEST_REDIS_DB
    assert TEST_ENVIRONMENT["ARENA_REDIS_URL"].endswith(f"/{TEST_REDIS_DB}")
    assert str(os.getpid()) in TEST_DB_NAME
    assert str(os.getpid()) in TEST_ENVIRONMENT["ARENA_DATA_DIR"]
