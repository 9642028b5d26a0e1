"""The filesystem replay store: a whole file or none, in sharded folders, never outside its root."""

from __future__ import annotations

import gzip
import stat
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from shared.replay_store import FilesystemReplayStore, ReplayStoreError, replay_key
from shared.states import ReplayStorage

BLOB = gzip.compress(b'{"game": "podracing", "frames": []}')


def test_put_get_exists_delete_roundtrip(tmp_path: Path) -> None:
    store = FilesystemReplayStore(tmp_path)
    key = replay_key(uuid.uuid4(), 1)

    assert store.kind == ReplayStorage.FILESYSTEM
    assert store.get(key) is None
    assert not store.exists(key)
    store.put(key, BLOB)
    assert store.get(key) == BLOB
    assert store.exists(key)
    store.put(key, b"replaced")
    assert store.get(key) == b"replaced"
    store.delete(key)
    assert store.get(key) is None
    assert not store.exists(key)
    store.delete(key)  # deleting what is not there is not an error


def test_keys_are_sharded_per_match_and_attempt(tmp_path: Path) -> None:
    """Two levels of two hex digits, then the match id and the attempt: a later attempt at the same
    match can never overwrite (or delete) an earlier attempt's object."""
    match_id = uuid.uuid4()
    first, second = replay_key(match_id, 1), replay_key(match_id, 2)
    assert first != second
    assert first == replay_key(match_id, 1)
    shard_a, shard_b, name = first.split("/")
    assert len(shard_a) == len(shard_b) == 2
    assert int(shard_a + shard_b, 16) >= 0
    assert name == f"{match_id}.1.json.gz"

    store = FilesystemReplayStore(tmp_path)
    store.put(first, BLOB)
    assert (tmp_path / shard_a / shard_b / name).read_bytes() == BLOB
    shards = {replay_key(uuid.uuid4(), 1).split("/")[0] for _ in range(200)}
    assert len(shards) > 100, "ids spread over the first-level folders"


def test_a_write_leaves_only_the_finished_file(tmp_path: Path) -> None:
    store = FilesystemReplayStore(tmp_path)
    key = replay_key(uuid.uuid4(), 3)
    store.put(key, BLOB)
    path = store.path(key)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name], "no temporary file is left"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644, "a gateway running as another user can read it"


def test_a_failed_write_raises_and_leaves_nothing_behind(tmp_path: Path) -> None:
    store = FilesystemReplayStore(tmp_path)
    key = replay_key(uuid.uuid4(), 1)
    store.path(key).mkdir(parents=True)  # the rename into place cannot replace a folder
    with pytest.raises(ReplayStoreError, match="cannot write replay"):
        store.put(key, BLOB)
    assert [p.name for p in store.path(key).parent.iterdir()] == [store.path(key).name]

    blocked = FilesystemReplayStore(tmp_path / "a-file")
    (tmp_path / "a-file").write_bytes(b"")
    with pytest.raises(ReplayStoreError, match="cannot write replay"):
        blocked.put(key, BLOB)


def test_an_unreadable_replay_is_a_store_error_not_a_missing_one(tmp_path: Path) -> None:
    store = FilesystemReplayStore(tmp_path)
    key = replay_key(uuid.uuid4(), 1)
    store.path(key).mkdir(parents=True)  # there, but not a file that can be read
    with pytest.raises(ReplayStoreError, match="cannot read replay"):
        store.get(key)


@pytest.mark.parametrize(
    "key", ["../escape.json.gz", "/etc/passwd", "ab/../../x", ".hidden", "a//b", "", "a/"]
)
def test_keys_cannot_leave_the_root(tmp_path: Path, key: str) -> None:
    store = FilesystemReplayStore(tmp_path / "root")
    actions: list[Callable[[], object]] = [
        lambda: store.put(key, BLOB),
        lambda: store.get(key),
        lambda: store.delete(key),
    ]
    for action in actions:
        with pytest.raises(ValueError, match="not a replay key"):
            action()
    assert not (tmp_path / "escape.json.gz").exists()
