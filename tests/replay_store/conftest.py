"""Fixtures for the replay stores: a real S3-compatible server (moto's, on loopback, in its own
process) and settings that point the platform at one of its buckets."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from shared.config import Settings, get_settings
from shared.replay_store import S3ReplayStore
from shared.states import ReplayStorage
from tests.conftest import PYTHON, ManagedProcess, free_port

ACCESS_KEY = "arena-test-access"
SECRET_KEY = "arena-test-secret-" + uuid.uuid4().hex


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """An S3 API on 127.0.0.1 (moto's server: in memory, gone when the process ends)."""
    port = free_port()
    server = ManagedProcess([PYTHON, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], "s3-server")
    url = f"http://127.0.0.1:{port}"
    try:
        server.wait_http(f"{url}/moto-api/", timeout=60)
        yield url
    finally:
        server.stop()


def new_bucket() -> str:
    return f"replays-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def bucket() -> str:
    """A bucket name of this test's own; the store creates the bucket on its first write."""
    return new_bucket()


def s3_store(endpoint: str, bucket: str, **options: float) -> S3ReplayStore:
    return S3ReplayStore(
        bucket, endpoint_url=endpoint, access_key=ACCESS_KEY, secret_key=SECRET_KEY, **options
    )


def s3_env(endpoint: str, bucket: str) -> dict[str, str]:
    """The variables a worker or the migration command needs to write to the bucket."""
    return {
        "ARENA_REPLAY_STORE": "s3",
        "ARENA_REPLAY_S3_ENDPOINT": endpoint,
        "ARENA_REPLAY_S3_BUCKET": bucket,
        "ARENA_REPLAY_S3_ACCESS_KEY": ACCESS_KEY,
        "ARENA_REPLAY_S3_SECRET_KEY": SECRET_KEY,
    }


def s3_settings(endpoint: str, bucket: str) -> Settings:
    """This process's settings, pointed at the bucket (a new object: stores are cached per object)."""
    return Settings.model_validate(
        {
            **get_settings().model_dump(),
            "replay_store": ReplayStorage.S3,
            "replay_s3_endpoint": endpoint,
            "replay_s3_bucket": bucket,
            "replay_s3_access_key": ACCESS_KEY,
            "replay_s3_secret_key": SecretStr(SECRET_KEY),
        }
    )
