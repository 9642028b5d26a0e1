"""The replay store interface: gzip bytes under a key, in some place every reader can reach.

Keys come from `replay_key`: derived from the match id and the attempt that played it, so two
attempts at one match (a worker presumed dead that wakes up, and the one that replaced it) can never
overwrite or delete each other's object. The `replays` row records the key of the attempt whose
result was committed.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from shared.states import ReplayStorage

MAX_KEY_CHARS = 255
"""The width of replays.key."""

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*")
"""Relative, slash-separated names; no segment may start with a dot, so no `..`, no hidden files."""


class ReplayStoreError(Exception):
    """The store could not do what was asked: unreachable, refused, misconfigured. Worth retrying
    later or fixing the settings; the message names the store and the key, never a credential."""


class ReplayMissing(LookupError):
    """The index names a replay that is not where it says (its object or its bytes are gone)."""


@dataclass(frozen=True, slots=True)
class StoredObject:
    """One object in a store, as a listing shows it."""

    key: str
    modified: datetime
    """When it was last written (timezone-aware)."""


class ReplayStore(Protocol):
    """Gzip replay bytes by key. `put` is atomic (a reader sees the whole object or none) and
    durable when it returns; `delete` of a missing key is not an error."""

    @property
    def kind(self) -> ReplayStorage: ...

    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes | None:
        """The bytes, or None when there is no such object."""
        ...

    def delete(self, key: str) -> None: ...

    def exists(self, key: str) -> bool: ...

    def objects(self) -> Iterator[StoredObject]:
        """Every object whose name is a replay key, in no particular order (the orphan sweep)."""
        ...

    def describe(self) -> str:
        """Where the store is, for logs and command output (no credentials)."""
        ...


def replay_key(match_id: uuid.UUID, attempt: int) -> str:
    """`ab/cd/<match id>.<attempt>.json.gz`: two levels of shards from a hash of the id, so no
    folder (or listing prefix) grows past a few hundred entries per 10 million replays, whatever
    the id's format."""
    if attempt < 0:
        raise ValueError(f"attempt must be at least 0, not {attempt}")
    digest = hashlib.sha256(match_id.bytes).hexdigest()
    return f"{digest[:2]}/{digest[2:4]}/{match_id}.{attempt}.json.gz"


_KEY_NAME = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/(?P<match>[0-9a-f-]{36})\.(?P<attempt>\d{1,9})\.json\.gz")


def parse_replay_key(key: str) -> tuple[uuid.UUID, int] | None:
    """(match id, attempt) of a key `replay_key` made; None for any other name."""
    found = _KEY_NAME.fullmatch(key)
    if found is None:
        return None
    try:
        match_id = uuid.UUID(found["match"])
    except ValueError:
        return None
    return (match_id, int(found["attempt"])) if replay_key(match_id, int(found["attempt"])) == key else None


def check_key(key: str) -> str:
    """The key itself if a store may use it as a relative path; ValueError otherwise."""
    if len(key) > MAX_KEY_CHARS or not _KEY.fullmatch(key):
        raise ValueError(f"not a replay key: {key[:80]!r}")
    return key
