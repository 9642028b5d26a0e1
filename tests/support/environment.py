"""Where the tests run, and the settings every process they start shares.

tests/conftest.py writes `TEST_ENVIRONMENT` into `os.environ` before anything reads `shared.config`,
so child processes (workers, gateways, bots) inherit the same database, Redis and secret.

Every pytest process has its own: the PostgreSQL database and the data folder are named after the
process, and under pytest-xdist each worker (`gw0`, `gw1`, ...) takes its own Redis database, the
base (`ARENA_TEST_REDIS_DB`, 4 unless set) plus the worker's number, so one worker's FLUSHDB or
queued tasks never reach another's. From 4 up, three workers stay clear of the databases the
benchmarks flush (10, 12 and 15: scripts/bench_*.py).
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_RUN_ID = f"{os.getpid()}_{secrets.token_hex(3)}"
ADMIN_URL = os.environ.get("ARENA_TEST_PG_ADMIN", "postgresql://postgres@127.0.0.1:5432/postgres")
TEST_DB_NAME = f"arena_test_{_RUN_ID}"
TEST_DATABASE_URL = f"postgresql+psycopg://postgres@127.0.0.1:5432/{TEST_DB_NAME}"
REDIS_DB_BASE = int(os.environ.get("ARENA_TEST_REDIS_DB", "4"))
XDIST_REDIS_DBS = range(4, 16)
"""The Redis databases xdist workers may take (0-3 are left to other uses of the server)."""


def xdist_worker_number() -> int:
    """This process's pytest-xdist worker number (`PYTEST_XDIST_WORKER=gw<n>`); 0 when serial."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0


def redis_db(base: int, worker: int) -> int:
    """The Redis database of worker `worker`: `base` when serial, `base + worker` under xdist, where
    each must be one of `XDIST_REDIS_DBS`."""
    if worker == 0:
        return base
    if base not in XDIST_REDIS_DBS or base + worker not in XDIST_REDIS_DBS:
        raise RuntimeError(
            f"xdist worker gw{worker} would use Redis database {base + worker} (ARENA_TEST_REDIS_DB={base} "
            f"plus its number): run fewer workers or set ARENA_TEST_REDIS_DB so that all of them fall in "
            f"{XDIST_REDIS_DBS.start}..{XDIST_REDIS_DBS.stop - 1}"
        )
    return base + worker


TEST_REDIS_DB = redis_db(REDIS_DB_BASE, xdist_worker_number())
TEST_REDIS_URL = f"redis://127.0.0.1:6379/{TEST_REDIS_DB}"
TEST_SECRET_KEY = "test-secret-key-" + secrets.token_hex(16)

TEST_ENVIRONMENT = {
    "ARENA_DATABASE_URL": TEST_DATABASE_URL,
    "ARENA_REDIS_URL": TEST_REDIS_URL,
    "ARENA_SECRET_KEY": TEST_SECRET_KEY,
    "ARENA_DEV_MODE": "1",
    "ARENA_DATA_DIR": str(ROOT / ".arena-data" / f"test_{_RUN_ID}"),
    "ARENA_STATIC_HOSTS": json.dumps({"localhost": ["127.0.0.1", "::1"]}),
    # Bots may only live on loopback: even a generated endpoint with a public IP literal
    # (schemathesis) is refused before any connection leaves the machine.
    "ARENA_BOT_NETWORKS": json.dumps(["127.0.0.0/8", "::1/128"]),
}
