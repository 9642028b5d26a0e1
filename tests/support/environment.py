"""Where the tests run, and the settings every process they start shares.

tests/conftest.py writes `TEST_ENVIRONMENT` into `os.environ` before anything reads `shared.config`,
so child processes (workers, gateways, bots) inherit the same database, Redis and secret.
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
TEST_REDIS_DB = int(os.environ.get("ARENA_TEST_REDIS_DB", "9"))
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
