"""The `replays` table as the index of replays, and the stores it points into.

A row says where its replay lives (`storage`, `key`; or `data` for replays stored before object
storage), so every reader goes through `load_replay` and never needs to know which store the
deployment writes to now: replays written under an earlier setting stay readable.
"""

from __future__ import annotations

import logging
import threading

from shared.config import Settings, get_settings
from shared.db.models import Replay
from shared.replay_store.base import ReplayMissing, ReplayStore, ReplayStoreError
from shared.replay_store.filesystem import FilesystemReplayStore
from shared.replay_store.s3 import S3ReplayStore
from shared.states import ReplayStorage

log = logging.getLogger(__name__)

_stores: dict[tuple[int, ReplayStorage], tuple[Settings, ReplayStore]] = {}
_stores_lock = threading.Lock()


def open_store(kind: ReplayStorage, settings: Settings | None = None) -> ReplayStore:
    """The store of this kind as the settings configure it; one per settings object and kind (an S3
    client is costly to build and meant to be shared)."""
    settings = settings or get_settings()
    with _stores_lock:
        cached = _stores.get((id(settings), kind))
        if cached is not None and cached[0] is settings:
            return cached[1]
        store = _build(kind, settings)
        _stores[(id(settings), kind)] = (settings, store)
        return store


def replay_store(settings: Settings | None = None) -> ReplayStore:
    """The store new replays are written to (`ARENA_REPLAY_STORE`)."""
    settings = settings or get_settings()
    return open_store(settings.replay_store, settings)


def _build(kind: ReplayStorage, settings: Settings) -> ReplayStore:
    if kind == ReplayStorage.FILESYSTEM:
        return FilesystemReplayStore(settings.replay_path())
    if kind == ReplayStorage.S3:
        if settings.replay_s3_bucket is None:
            raise ReplayStoreError("a replay lives in S3, but ARENA_REPLAY_S3_BUCKET is not set")
        secret = settings.replay_s3_secret_key
        return S3ReplayStore(
            settings.replay_s3_bucket,
            endpoint_url=settings.replay_s3_endpoint,
            region=settings.replay_s3_region,
            access_key=settings.replay_s3_access_key,
            secret_key=secret.get_secret_value() if secret is not None else None,
        )
    raise ValueError(f"{kind.value!r} is not a replay store (those replays are read from their row)")


def load_replay(replay: Replay, settings: Settings | None = None) -> bytes:
    """The gzip bytes of an indexed replay, wherever they live.

    Raises ReplayMissing when the bytes are not where the row says, ReplayStoreError when their
    store cannot be reached or is not configured here."""
    if replay.storage == ReplayStorage.DATABASE:
        if replay.data is None:
            raise ReplayMissing(f"the replay of match {replay.match_id} has no bytes in the database")
        return replay.data
    if replay.key is None:
        raise ReplayMissing(f"the replay of match {replay.match_id} ({replay.storage.value}) has no key")
    store = open_store(replay.storage, settings)
    data = store.get(replay.key)
    if data is None:
        raise ReplayMissing(
            f"the replay of match {replay.match_id} is missing: no {replay.key} in {store.describe()}"
        )
    return data


def discard(store: ReplayStore, key: str) -> bool:
    """Delete an object nothing points at (a result that was not ours to commit); a failure only
    leaves an orphan behind (for the sweep, shared/replay_store/sweep.py), so it is logged, never
    raised. Whether it was deleted."""
    try:
        store.delete(key)
    except (ReplayStoreError, ValueError):
        log.warning("could not delete the orphan replay %s from %s", key, store.describe(), exc_info=True)
        return False
    return True
