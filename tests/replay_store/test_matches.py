"""Replays of real matches: a Celery worker plays two HTTP bots and writes the replay to the
configured store (files by default, a bucket on a real S3 API with ARENA_REPLAY_STORE=s3), and the
gateway serves it from there. A replay whose object is gone is a clear 410, an unreachable store a
503, never a 500; replays still stored in PostgreSQL keep being served."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shared.config import Settings, get_settings
from shared.db.models import Match, Replay
from shared.db.session import session_scope
from shared.games.replay import compress, decompress
from shared.ports import free_port
from shared.replay_store import FilesystemReplayStore, replay_key
from shared.states import MatchStatus, ReplayStorage
from tests.support.bot_processes import RunningBot
from tests.support.match_runner import queue_match, start_worker, wait_for_match
from tests.support.s3 import new_bucket, s3_env, s3_settings, s3_store


@pytest.fixture
def gateway() -> Iterator[Callable[[Settings], TestClient]]:
    """The real app in this process, with the settings a test gives it."""
    from services.gateway.app import create_app

    opened: list[TestClient] = []

    def _open(settings: Settings) -> TestClient:
        client = TestClient(create_app(settings), raise_server_exceptions=False)
        opened.append(client.__enter__())
        return client

    yield _open
    for client in opened:
        client.__exit__(None, None, None)


def play_one(
    env: dict[str, str], bot: RunningBot, register: Callable[..., uuid.UUID], seed: int
) -> tuple[Match, Replay]:
    worker = start_worker("replays", env)
    try:
        match = wait_for_match(queue_match([register(bot), register(bot)], seed=seed), worker)
    finally:
        worker.stop()
    assert match.status == MatchStatus.FINISHED, match.error
    assert match.replay is not None
    return match, match.replay


def served(client: TestClient, match_id: uuid.UUID) -> tuple[dict[str, Any], bytes]:
    """The replay as JSON (through a client that refuses gzip) and as the `.json.gz` download."""
    plain = client.get(f"/api/v1/matches/{match_id}/replay", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200, plain.text
    packed = client.get(f"/api/v1/matches/{match_id}/replay", params={"compressed": 1})
    assert packed.status_code == 200
    assert packed.headers["content-type"] == "application/gzip"
    replay = json.loads(plain.content)
    assert isinstance(replay, dict), replay
    return replay, packed.content


def assert_error(client: TestClient, match_id: uuid.UUID, status: int, words: str) -> None:
    answer = client.get(f"/api/v1/matches/{match_id}/replay")
    assert answer.status_code == status, answer.text
    assert words in answer.json()["detail"]
    if status == 503:
        assert answer.headers.get("Retry-After") == "5", "an outage says when to try again"


@pytest.mark.slow
@pytest.mark.usefixtures("database_url", "redis_url")
def test_a_played_match_writes_its_replay_to_files_by_default(
    good_bot: RunningBot,
    register_bot: Callable[..., uuid.UUID],
    gateway: Callable[[Settings], TestClient],
) -> None:
    match, row = play_one({}, good_bot, register_bot, seed=41)

    assert (row.storage, row.key, row.data) == (
        ReplayStorage.FILESYSTEM,
        replay_key(match.id, match.attempts),
        None,
    )
    assert row.key is not None
    store = FilesystemReplayStore(get_settings().replay_path())
    blob = store.get(row.key)
    assert blob is not None
    assert len(blob) == row.size_bytes
    client = gateway(get_settings())
    replay, download = served(client, match.id)
    assert download == blob
    assert replay == decompress(blob)
    assert len(replay["frames"]) == row.frames == (match.turns or 0) + 1

    store.delete(row.key)
    assert_error(client, match.id, 410, "missing from replay storage")


@pytest.mark.slow
@pytest.mark.usefixtures("database_url", "redis_url")
def test_a_played_match_writes_its_replay_to_s3_and_the_gateway_serves_it(
    s3_endpoint: str,
    good_bot: RunningBot,
    register_bot: Callable[..., uuid.UUID],
    gateway: Callable[[Settings], TestClient],
) -> None:
    bucket = new_bucket()
    match, row = play_one(s3_env(s3_endpoint, bucket), good_bot, register_bot, seed=42)

    assert (row.storage, row.key, row.data) == (ReplayStorage.S3, replay_key(match.id, match.attempts), None)
    assert row.key is not None
    blob = s3_store(s3_endpoint, bucket).get(row.key)
    assert blob is not None
    assert len(blob) == row.size_bytes
    assert not FilesystemReplayStore(get_settings().replay_path()).exists(row.key), "only in the bucket"

    client = gateway(s3_settings(s3_endpoint, bucket))
    replay, download = served(client, match.id)
    assert download == blob
    assert replay == decompress(blob)
    assert replay["seed"] == 42
    assert len(replay["frames"]) == row.frames

    # A gateway that cannot reach the store, or is not configured for it: 503, never a 500.
    dead = s3_settings(f"http://127.0.0.1:{free_port()}", bucket)
    assert_error(gateway(dead), match.id, 503, "replay storage is unavailable")
    assert_error(gateway(get_settings()), match.id, 503, "replay storage is unavailable")

    s3_store(s3_endpoint, bucket).delete(row.key)
    assert_error(client, match.id, 410, "missing from replay storage")
    assert client.get(f"/api/v1/matches/{match.id}").json()["replay_frames"] == row.frames


@pytest.mark.usefixtures("database_url")
def test_replays_stored_in_postgresql_are_still_served(
    s3_endpoint: str,
    register_bot: Callable[..., uuid.UUID],
    gateway: Callable[[Settings], TestClient],
) -> None:
    """A row from before object storage (bytes in `replays.data`) reads the same under either store."""
    match_id = queue_match([register_bot(), register_bot()], seed=43, send=False)
    replay = {"game": "podracing", "seed": 43, "frames": [{"turn": 0}], "turns": []}
    blob = compress(replay)
    with session_scope() as session:
        session.add(Replay(match_id=match_id, data=blob, size_bytes=len(blob), frames=1))
        session.get_one(Match, match_id).status = MatchStatus.FINISHED
    with session_scope() as session:
        assert session.get_one(Replay, match_id).storage == ReplayStorage.DATABASE

    for settings in (get_settings(), s3_settings(s3_endpoint, new_bucket())):
        assert served(gateway(settings), match_id) == (replay, blob)
