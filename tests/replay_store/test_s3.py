"""The S3 replay store against a real S3 API on loopback (moto's server, in its own process)."""

from __future__ import annotations

import gzip
import os
import time
import uuid

import pytest

from shared.ports import free_port
from shared.replay_store import ReplayStoreError, replay_key
from shared.states import ReplayStorage
from tests.support.s3 import SECRET_KEY, s3_store

BLOB = gzip.compress(os.urandom(2048))
"""Binary bytes, as a replay's gzip is: they must come back exactly."""


def test_put_get_exists_delete_roundtrip(s3_endpoint: str, bucket: str) -> None:
    store = s3_store(s3_endpoint, bucket)
    key = replay_key(uuid.uuid4(), 1)

    assert store.kind == ReplayStorage.S3
    store.put(key, BLOB)  # the bucket does not exist yet: the first write creates it
    assert store.get(key) == BLOB
    assert store.exists(key)
    store.put(key, b"replaced")
    assert store.get(key) == b"replaced"
    store.delete(key)
    assert store.get(key) is None
    assert not store.exists(key)
    store.delete(key)  # deleting what is not there is not an error


def test_a_missing_object_is_none_and_other_keys_are_untouched(s3_endpoint: str, bucket: str) -> None:
    store = s3_store(s3_endpoint, bucket)
    match_id = uuid.uuid4()
    store.put(replay_key(match_id, 1), BLOB)
    assert store.get(replay_key(match_id, 2)) is None
    assert not store.exists(replay_key(match_id, 2))
    store.delete(replay_key(match_id, 2))
    assert store.get(replay_key(match_id, 1)) == BLOB


def test_a_bucket_that_was_never_written_holds_no_replay(s3_endpoint: str, bucket: str) -> None:
    store = s3_store(s3_endpoint, bucket)
    store.delete(replay_key(uuid.uuid4(), 1))
    with pytest.raises(ReplayStoreError, match=f"bucket {bucket}"):
        store.get(replay_key(uuid.uuid4(), 1))


def test_an_unreachable_store_is_a_clear_error_soon(bucket: str) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    store = s3_store(endpoint, bucket, connect_timeout_s=1, max_attempts=1)
    key = replay_key(uuid.uuid4(), 1)
    started = time.monotonic()
    for action in (lambda: store.put(key, BLOB), lambda: store.get(key), lambda: store.exists(key)):
        with pytest.raises(ReplayStoreError) as caught:
            action()
        message = str(caught.value)
        assert key in message
        assert endpoint in message
        assert bucket in message
        assert SECRET_KEY not in message
    assert time.monotonic() - started < 10


def test_keys_are_checked_before_anything_is_sent(s3_endpoint: str, bucket: str) -> None:
    store = s3_store(s3_endpoint, bucket)
    with pytest.raises(ValueError, match="not a replay key"):
        store.put("../outside", BLOB)
