"""Removing orphan replay objects: written by an attempt whose result was never committed.

The match runner writes a replay's object before the transaction that commits the result (see
`services.match_runner.store.finish_match`), so a commit that fails (the database went away, the
worker died in between) leaves an object nothing points at. The attempt that finishes the match
later removes the objects of the attempts before it; this sweep removes whatever is left.

An object `<match id>.<attempt>` is removed only when the database says that no commit can ever
point at it: the match's `replays` row names another key (or there is none), the match is not
running with that attempt (a commit in flight holds exactly that state, under its row lock, and a
later claim only ever raises `attempts`), and its `attempts` have reached that attempt. An object
of a match this database does not know, or younger than `min_age_s`, is left alone: a store shared
with another deployment, a database restored from an older backup, a write of the replay migration
whose row is about to change.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from shared.db.models import Match, Replay
from shared.db.session import session_scope
from shared.replay_store.base import ReplayStore, StoredObject, parse_replay_key
from shared.replay_store.index import discard
from shared.states import MatchStatus

log = logging.getLogger(__name__)

BATCH = 500
"""Objects judged per database query."""


@dataclass
class SweptReplays:
    examined: int = 0
    """Objects old enough to judge."""
    removed: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _MatchState:
    status: MatchStatus
    attempts: int
    replay_key: str | None


def is_orphan(key: str, state: _MatchState | None) -> bool:
    """Whether no commit can ever point at the object `key`, given its match's state now (None: no
    such match here)."""
    parsed = parse_replay_key(key)
    if parsed is None or state is None:
        return False
    _, attempt = parsed
    if state.replay_key == key:
        return False
    if state.status == MatchStatus.RUNNING and state.attempts == attempt:
        return False  # its attempt may be committing right now
    return state.attempts >= attempt


def sweep_orphans(store: ReplayStore, min_age_s: float, now: datetime | None = None) -> SweptReplays:
    """Delete the store's orphan objects older than `min_age_s` (module docstring); what it did."""
    cutoff = (now or datetime.now(UTC)) - timedelta(seconds=min_age_s)
    swept = SweptReplays()
    for batch in _batches(o for o in store.objects() if o.modified < cutoff):
        swept.examined += len(batch)
        states = _states(match_id for _, match_id in batch)
        for key, match_id in batch:
            if is_orphan(key, states.get(match_id)) and discard(store, key):
                swept.removed.append(key)
    if swept.removed:
        log.warning("removed %d orphan replay objects from %s", len(swept.removed), store.describe())
    return swept


def _batches(objects: Iterable[StoredObject]) -> Iterator[list[tuple[str, uuid.UUID]]]:
    """(key, match id) of the objects named by replay keys, BATCH at a time."""
    batch: list[tuple[str, uuid.UUID]] = []
    for stored in objects:
        parsed = parse_replay_key(stored.key)
        if parsed is None:
            continue
        batch.append((stored.key, parsed[0]))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _states(match_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, _MatchState]:
    """Each match's status, attempts and committed replay key, read in one statement (one snapshot)."""
    with session_scope() as session:
        rows = session.execute(
            select(Match.id, Match.status, Match.attempts, Replay.key)
            .outerjoin(Replay, Replay.match_id == Match.id)
            .where(Match.id.in_(set(match_ids)))
        )
        return {row[0]: _MatchState(MatchStatus(row[1]), int(row[2]), row[3]) for row in rows}
