"""Replay store settings: the filesystem store by default, and clear refusals of incomplete or
malformed S3 settings before any service starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from shared.config import Settings
from shared.states import ReplayStorage


def settings(**values: object) -> Settings:
    return Settings(dev_mode=True, **values)  # type: ignore[arg-type]


def test_the_default_is_files_under_the_data_folder(tmp_path: Path) -> None:
    assert settings(data_dir=tmp_path).replay_store == ReplayStorage.FILESYSTEM
    assert settings(data_dir=tmp_path).replay_path() == tmp_path / "replays"
    assert (
        settings(data_dir=tmp_path, replay_dir=tmp_path / "elsewhere").replay_path() == tmp_path / "elsewhere"
    )


def test_the_compose_variables_configure_s3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_REPLAY_STORE", "s3")
    monkeypatch.setenv("ARENA_REPLAY_S3_ENDPOINT", "http://minio:9000")
    monkeypatch.setenv("ARENA_REPLAY_S3_BUCKET", "arena-replays")
    monkeypatch.setenv("ARENA_REPLAY_S3_ACCESS_KEY", "minio-user")
    monkeypatch.setenv("ARENA_REPLAY_S3_SECRET_KEY", "minio-password")
    loaded = settings()
    assert loaded.replay_store == ReplayStorage.S3
    assert (loaded.replay_s3_endpoint, loaded.replay_s3_bucket) == ("http://minio:9000", "arena-replays")
    assert loaded.replay_s3_secret_key is not None
    assert "minio-password" not in repr(loaded)


def test_empty_credentials_mean_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_REPLAY_S3_ACCESS_KEY", "")
    monkeypatch.setenv("ARENA_REPLAY_S3_SECRET_KEY", "")
    loaded = settings(replay_store="s3", replay_s3_bucket="arena-replays")
    assert loaded.replay_s3_access_key is None
    assert loaded.replay_s3_secret_key is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"replay_store": "s3"}, "ARENA_REPLAY_STORE=s3 needs ARENA_REPLAY_S3_BUCKET"),
        ({"replay_store": "database"}, "not a place to write replays"),
        ({"replay_store": "tape"}, "replay_store"),
        ({"replay_s3_bucket": "Arena_Replays"}, "not a valid bucket name"),
        ({"replay_s3_bucket": "ab"}, "not a valid bucket name"),
        ({"replay_s3_endpoint": "minio:9000"}, "must be an http:// or https:// URL"),
        ({"replay_s3_endpoint": "http://"}, "must be an http:// or https:// URL"),
        ({"replay_s3_access_key": "only-half"}, "set both ARENA_REPLAY_S3_ACCESS_KEY"),
        ({"replay_s3_secret_key": "only-half"}, "set both ARENA_REPLAY_S3_ACCESS_KEY"),
    ],
)
def test_bad_settings_are_refused_with_a_clear_message(values: dict[str, str], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        settings(**values)
