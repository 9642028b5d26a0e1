"""Moving replays out of PostgreSQL: the schema migration keeps old rows readable, and
`python -m shared.replay_store.migrate` moves their bytes into the configured store (a bucket on a
real S3 API here) in batches, resumably and idempotently, leaving a row untouched when its bytes
cannot be moved. Each test has a database of its own, so moving "every" replay moves only its rows."""

from __future__ import annotations

import gzip
import os
import secrets
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, pool, select
from sqlalchemy.orm import Session

from shared.db.migrations import migrate
from shared.db.models import Match, Replay
from shared.ports import free_port
from shared.replay_store import FilesystemReplayStore, load_replay, replay_key
from shared.replay_store.migrate import migrate_replays, pending
from shared.states import MatchStatus, ReplayStorage
from tests.support.databases import create_database, drop_database
from tests.support.environment import ROOT
from tests.support.processes import PYTHON
from tests.support.s3 import new_bucket, s3_env, s3_settings, s3_store

REVISION = "f72e3b015a12"
"""The migration that made `replays` an index (storage, key; data nullable)."""


@pytest.fixture
def database() -> Iterator[tuple[str, Engine]]:
    name = f"arena_replays_{secrets.token_hex(4)}"
    url = create_database(name)
    migrate(url)
    engine = create_engine(url, poolclass=pool.NullPool)
    yield url, engine
    engine.dispose()
    drop_database(name)


def add_replays(
    engine: Engine, count: int, storage: ReplayStorage = ReplayStorage.DATABASE, store: object = None
) -> dict[uuid.UUID, bytes]:
    """Finished matches with replays (bytes in the row, or in `store` under their key), by match id."""
    blobs = {}
    with Session(engine) as session, session.begin():
        for number in range(count):
            match = Match(game="podracing", seed=number, config={}, status=MatchStatus.FINISHED, attempts=2)
            session.add(match)
            session.flush()
            blob = gzip.compress(os.urandom(512) + str(match.id).encode())
            blobs[match.id] = blob
            if storage == ReplayStorage.DATABASE:
                session.add(Replay(match_id=match.id, data=blob, size_bytes=len(blob), frames=1))
            else:
                assert isinstance(store, FilesystemReplayStore)
                key = replay_key(match.id, 1)
                store.put(key, blob)
                session.add(
                    Replay(match_id=match.id, storage=storage, key=key, size_bytes=len(blob), frames=1)
                )
    return blobs


def rows(engine: Engine) -> dict[uuid.UUID, Replay]:
    with Session(engine) as session:
        return {row.match_id: row for row in session.scalars(select(Replay))}


def run_command(url: str, endpoint: str, bucket: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **s3_env(endpoint, bucket), "ARENA_DATABASE_URL": url}
    return subprocess.run(
        [PYTHON, "-m", "shared.replay_store.migrate", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_the_command_moves_replays_in_batches_resumably_and_idempotently(
    database: tuple[str, Engine], s3_endpoint: str
) -> None:
    url, engine = database
    bucket = new_bucket()
    settings = s3_settings(s3_endpoint, bucket)
    bucket_store = s3_store(s3_endpoint, bucket)
    blobs = add_replays(engine, 5)
    lines: list[str] = []

    # A first run stops after three replays (as an interrupted run would have).
    report = migrate_replays(
        bucket_store, engine=engine, settings=settings, batch_size=2, limit=3, progress=lines.append
    )
    assert (report.moved, report.failed, report.ok) == (3, [], True)
    assert lines[0].startswith("3 replays to move to bucket")
    assert len(lines) == 3  # header, two batches
    assert pending(engine, ReplayStorage.S3) == {ReplayStorage.DATABASE: 2}
    moved = [row for row in rows(engine).values() if row.storage == ReplayStorage.S3]
    for row in moved:
        assert (row.key, row.data) == (replay_key(row.match_id, 2), None)  # the finishing attempt
        assert row.key is not None
        assert bucket_store.get(row.key) == blobs[row.match_id]

    # The run after it was cut off between writing an object and committing its row: the object is
    # there (with other bytes, to be sure it is written again), the row still holds the bytes.
    left = sorted(match_id for match_id, row in rows(engine).items() if row.storage == ReplayStorage.DATABASE)
    bucket_store.put(replay_key(left[0], 2), b"half-finished")

    resumed = run_command(url, s3_endpoint, bucket, "--batch-size", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert "2 replays to move" in resumed.stdout
    assert "1/2 (50%)" in resumed.stdout
    assert "2/2 (100%)" in resumed.stdout
    assert "moved 2 replays" in resumed.stdout

    final = rows(engine)
    assert {row.storage for row in final.values()} == {ReplayStorage.S3}
    assert all(row.data is None for row in final.values())
    for match_id, row in final.items():
        assert load_replay(row, settings) == blobs[match_id]

    again = run_command(url, s3_endpoint, bucket)
    assert again.returncode == 0, again.stderr
    assert "replays to move to bucket" in again.stdout
    assert "none" in again.stdout
    assert rows(engine).keys() == final.keys()


@pytest.mark.slow
def test_replays_in_another_store_move_too_and_missing_bytes_are_reported(
    database: tuple[str, Engine], s3_endpoint: str, tmp_path: Path
) -> None:
    url, engine = database
    bucket = new_bucket()
    files = FilesystemReplayStore(tmp_path)
    settings = s3_settings(s3_endpoint, bucket).model_copy(update={"replay_dir": tmp_path})
    blobs = add_replays(engine, 2, ReplayStorage.FILESYSTEM, files)
    gone, kept = sorted(blobs)
    files.delete(replay_key(gone, 1))

    report = migrate_replays(s3_store(s3_endpoint, bucket), engine=engine, settings=settings, progress=print)

    assert report.moved == 1
    assert not report.ok
    assert [match_id for match_id, _ in report.failed] == [gone]
    after = rows(engine)
    assert after[kept].storage == ReplayStorage.S3
    assert load_replay(after[kept], settings) == blobs[kept]
    assert not files.exists(replay_key(kept, 1)), "the old file is deleted once the row points at S3"
    assert (after[gone].storage, after[gone].key) == (ReplayStorage.FILESYSTEM, replay_key(gone, 1))

    command = run_command(url, s3_endpoint, bucket)  # the command says so, and fails
    assert command.returncode == 1
    assert f"not moved: match {gone}" in command.stderr


@pytest.mark.slow
def test_an_unreachable_store_stops_the_run_and_changes_nothing(database: tuple[str, Engine]) -> None:
    _, engine = database
    endpoint = f"http://127.0.0.1:{free_port()}"
    blobs = add_replays(engine, 3)
    dead = s3_store(endpoint, new_bucket(), connect_timeout_s=1, max_attempts=1)

    report = migrate_replays(dead, engine=engine, settings=s3_settings(endpoint, dead.bucket), progress=print)

    assert report.moved == 0
    assert report.stopped is not None
    assert "Could not connect" in report.stopped
    assert all(row.storage == ReplayStorage.DATABASE for row in rows(engine).values())
    assert {match_id: row.data for match_id, row in rows(engine).items()} == blobs


def test_the_schema_migration_keeps_old_rows_and_downgrades_only_while_it_is_safe(
    database: tuple[str, Engine], tmp_path: Path
) -> None:
    url, engine = database
    blobs = add_replays(engine, 2)
    migrate(url, f"{REVISION}-1", "downgrade")
    migrate(url)
    restored = rows(engine)
    assert {match_id: row.data for match_id, row in restored.items()} == blobs
    assert {row.storage for row in restored.values()} == {ReplayStorage.DATABASE}

    add_replays(engine, 1, ReplayStorage.FILESYSTEM, FilesystemReplayStore(tmp_path))
    with pytest.raises(RuntimeError, match="1 replays live in a replay store"):
        migrate(url, f"{REVISION}-1", "downgrade")
    assert len(rows(engine)) == 3
