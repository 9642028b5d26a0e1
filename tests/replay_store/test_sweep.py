"""The orphan sweep (shared/replay_store/sweep.py): it removes the objects no commit can ever point
at, and leaves everything else: the committed replay, the object of an attempt that may be
committing right now, objects of matches this database does not know, young objects, other files.
The filesystem store and the S3 one list their objects for it alike."""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.match_runner.tasks import TASK_SWEEP_REPLAYS
from services.match_runner.worker import beat_schedule
from shared.config import Settings, get_settings
from shared.db.models import Match, Replay
from shared.db.session import session_scope
from shared.queue import celery_app
from shared.replay_store import FilesystemReplayStore, replay_key
from shared.replay_store.base import parse_replay_key
from shared.replay_store.sweep import sweep_orphans
from shared.states import MatchStatus, ReplayStorage
from tests.support.s3 import s3_store

MIN_AGE_S = 3600.0
OLD = time.time() - 2 * MIN_AGE_S


def _match(status: MatchStatus, attempts: int, committed: int | None = None) -> uuid.UUID:
    """A match row in this state; `committed`: the attempt whose replay its row names."""
    with session_scope() as session:
        match = Match(game="podracing", seed=1, status=status, attempts=attempts)
        session.add(match)
        session.flush()
        if committed is not None:
            key = replay_key(match.id, committed)
            session.add(
                Replay(match_id=match.id, storage=ReplayStorage.FILESYSTEM, key=key, size_bytes=1, frames=1)
            )
        return match.id


def _put(store: FilesystemReplayStore, key: str, mtime: float = OLD) -> str:
    store.put(key, b"replay")
    os.utime(store.path(key), (mtime, mtime))
    return key


@pytest.mark.usefixtures("database_url")
def test_the_sweep_removes_only_what_no_commit_can_point_at(tmp_path: Path) -> None:
    store = FilesystemReplayStore(tmp_path)
    finished = _match(MatchStatus.FINISHED, attempts=2, committed=2)
    running = _match(MatchStatus.RUNNING, attempts=2)
    requeued = _match(MatchStatus.QUEUED, attempts=1)
    failed = _match(MatchStatus.FAILED, attempts=2)
    orphans = {
        _put(store, replay_key(finished, 1)),  # its commit failed; attempt 2 finished the match
        _put(store, replay_key(running, 1)),  # attempt 2 runs now: attempt 1 can never commit
        _put(store, replay_key(requeued, 1)),  # handed out again: the next claim is attempt 2
        _put(store, replay_key(failed, 1)),
        _put(store, replay_key(failed, 2)),
    }
    kept = {
        _put(store, replay_key(finished, 2)),  # the committed replay
        _put(store, replay_key(running, 2)),  # attempt 2 may be committing right now
        _put(store, replay_key(requeued, 2)),  # an attempt this database has not reached
        _put(store, replay_key(uuid.uuid4(), 1)),  # a match this database does not know
        _put(store, replay_key(failed, 3), mtime=time.time()),  # too young to judge
    }
    _put(store, "notes.txt")  # a valid name, but not a replay's

    swept = sweep_orphans(store, MIN_AGE_S)

    assert set(swept.removed) == orphans
    assert swept.examined == len(orphans) + len(kept) - 1  # the young one is not even looked at
    assert {o.key for o in store.objects()} == kept | {"notes.txt"}
    assert sweep_orphans(store, MIN_AGE_S).removed == []


def test_keys_name_their_match_and_attempt_and_nothing_else_parses() -> None:
    match_id = uuid.uuid4()
    assert parse_replay_key(replay_key(match_id, 7)) == (match_id, 7)
    shards = "00/00" if not replay_key(match_id, 7).startswith("00/00/") else "11/11"  # not its own
    for key in (
        "notes.txt",
        f"{shards}/{match_id}.7.json.gz",
        f"{replay_key(match_id, 7)}.tmp",
        "a/b/c.1.json.gz",
    ):
        assert parse_replay_key(key) is None, key


def test_s3_lists_its_objects_for_the_sweep(s3_endpoint: str, bucket: str) -> None:
    store = s3_store(s3_endpoint, bucket)
    assert list(store.objects()) == []  # no bucket yet: nothing to list
    keys = {replay_key(uuid.uuid4(), attempt) for attempt in (1, 2, 3)}
    for key in keys:
        store.put(key, b"replay")
    store.put("notes.txt", b"not a replay")  # a valid name, but not a replay's: the sweep skips it

    listed = list(store.objects())

    assert {o.key for o in listed} >= keys
    assert all(abs(o.modified - datetime.now(UTC)) < timedelta(minutes=5) for o in listed)


def test_the_beat_sweeps_hours_apart_with_a_matchs_time_limits_unless_switched_off() -> None:
    entry = beat_schedule(Settings(dev_mode=True))["replay-sweep"]
    assert (entry["task"], entry["schedule"].total_seconds()) == (TASK_SWEEP_REPLAYS, 6 * 3600.0)
    assert "replay-sweep" not in beat_schedule(Settings(dev_mode=True, replay_sweep_interval_s=0))
    task = celery_app.tasks[TASK_SWEEP_REPLAYS]
    assert task.soft_time_limit == get_settings().match_soft_time_limit_s
