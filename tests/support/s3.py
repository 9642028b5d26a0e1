"""Replay stores on a real S3-compatible server (moto's): credentials, buckets, and the settings
that point the platform at one."""

from __future__ import annotations

import uuid
from typing import TypedDict, Unpack

from pydantic import SecretStr

from shared.config import Settings, get_settings
from shared.replay_store import S3ReplayStore
from shared.states import ReplayStorage

ACCESS_KEY = "arena-test-access"
SECRET_KEY = "arena-test-secret-" + uuid.uuid4().hex


def new_bucket() -> str:
    return f"replays-{uuid.uuid4().hex[:12]}"


class S3StoreOptions(TypedDict, total=False):
    """S3ReplayStore's tuning arguments a test may set (its defaults otherwise)."""

    connect_timeout_s: float
    read_timeout_s: float
    max_attempts: int


def s3_store(endpoint: str, bucket: str, **options: Unpack[S3StoreOptions]) -> S3ReplayStore:
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
