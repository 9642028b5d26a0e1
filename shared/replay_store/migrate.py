"""`python -m shared.replay_store.migrate`: move replays into the configured replay store.

Moves every replay that does not live in `ARENA_REPLAY_STORE` yet: those stored in PostgreSQL
before object storage existed, and those in another store (filesystem -> s3, say). In batches, in
match-id order, printing progress; safe to stop at any moment and to run again, also while the
platform runs, and from several machines at once (each batch locks its rows, SKIP LOCKED).

For each replay: read its bytes, write them to the store under the key of the match's finishing
attempt, read them back and compare (unless --no-verify), and only then point the row at the
object. Rows of a batch change in one transaction, which also clears `data`, so a replay is
always either fully in its old place or fully in the new one. An interruption between the write
and the commit leaves an object that the next run overwrites with the same bytes. Objects in the
old store are deleted after the commit (a failure there only leaves an orphan, and is reported).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from shared.config import Settings, get_settings
from shared.db.models import Match, Replay
from shared.db.session import get_engine
from shared.replay_store.base import ReplayStore, ReplayStoreError, replay_key
from shared.replay_store.index import open_store
from shared.states import ReplayStorage

DEFAULT_BATCH = 100


@dataclass
class MigrationReport:
    moved: int = 0
    bytes: int = 0
    failed: list[tuple[uuid.UUID, str]] = field(default_factory=list)
    """Replays that could not be moved (their bytes are missing from their old place): left as
    they are, so a later run tries them again."""
    orphans: list[str] = field(default_factory=list)
    """Objects in an old store that could not be deleted after their move."""
    stopped: str | None = None
    """Why the run stopped early (the target store refused a write), if it did."""

    @property
    def ok(self) -> bool:
        return not self.failed and self.stopped is None


@dataclass(frozen=True, slots=True)
class _Row:
    match_id: uuid.UUID
    storage: ReplayStorage
    key: str | None
    attempt: int


class _TargetFailed(Exception):
    """The target store refused a write or a read-back: stop the run (after committing what moved)."""


def pending(engine: Engine, target: ReplayStorage) -> dict[ReplayStorage, int]:
    """How many replays live in each other place than `target`."""
    with Session(engine) as session:
        rows = session.execute(
            select(Replay.storage, func.count()).where(Replay.storage != target).group_by(Replay.storage)
        )
        return {storage: int(count) for storage, count in rows}


def migrate_replays(
    target: ReplayStore,
    *,
    engine: Engine | None = None,
    settings: Settings | None = None,
    batch_size: int = DEFAULT_BATCH,
    limit: int | None = None,
    verify: bool = True,
    progress: Callable[[str], None] | None = None,
) -> MigrationReport:
    """Move up to `limit` replays (all by default) into `target`; see the module docstring."""
    engine = engine or get_engine()
    settings = settings or get_settings()
    progress = progress or _say
    report = MigrationReport()
    total = sum(pending(engine, target.kind).values())
    if limit is not None:
        total = min(total, limit)
    progress(f"{total} replays to move to {target.describe()}, {batch_size} per batch")
    started = time.monotonic()
    after: uuid.UUID | None = None
    while limit is None or report.moved + len(report.failed) < limit:
        room = batch_size if limit is None else min(batch_size, limit - report.moved - len(report.failed))
        to_delete: list[tuple[ReplayStorage, str]] = []
        with Session(engine) as session, session.begin():
            rows = _next_batch(session, target.kind, after, room)
            if not rows:
                break
            after = rows[-1].match_id
            for row in rows:
                try:
                    moved = _move(session, row, target, settings, verify)
                except _TargetFailed as exc:
                    report.stopped = str(exc)
                    break
                except (ReplayStoreError, ValueError) as exc:
                    report.failed.append((row.match_id, str(exc)))
                    continue
                if moved is None:
                    report.failed.append((row.match_id, f"the replay of match {row.match_id} has no bytes"))
                    continue
                report.moved += 1
                report.bytes += moved
                if row.storage != ReplayStorage.DATABASE and row.key is not None:
                    to_delete.append((row.storage, row.key))
        report.orphans += _delete_old(to_delete, settings)
        elapsed = max(time.monotonic() - started, 1e-9)
        done = report.moved + len(report.failed)
        progress(
            f"  {done}/{total} ({100 * done / max(total, 1):.0f}%): {report.moved} moved, "
            f"{report.bytes / 2**20:.1f} MiB, {report.moved / elapsed:.0f}/s, {len(report.failed)} failed"
        )
        if report.stopped is not None:
            break
    return report


def _next_batch(session: Session, target: ReplayStorage, after: uuid.UUID | None, size: int) -> list[_Row]:
    query = (
        select(Replay.match_id, Replay.storage, Replay.key, Match.attempts)
        .join(Match, Match.id == Replay.match_id)
        .where(Replay.storage != target)
        .order_by(Replay.match_id)
        .limit(size)
        .with_for_update(of=Replay, skip_locked=True)
    )
    if after is not None:
        query = query.where(Replay.match_id > after)
    return [_Row(m, s, k, a) for m, s, k, a in session.execute(query)]


def _move(session: Session, row: _Row, target: ReplayStore, settings: Settings, verify: bool) -> int | None:
    """Copy one replay into `target` and point its row there (in the caller's transaction); the
    number of bytes moved, or None when the replay has no bytes to move."""
    if row.storage == ReplayStorage.DATABASE:
        data = session.scalar(select(Replay.data).where(Replay.match_id == row.match_id))
    else:
        data = open_store(row.storage, settings).get(row.key) if row.key else None
    if data is None:
        return None
    key = replay_key(row.match_id, row.attempt)
    try:
        target.put(key, data)
        if verify and target.get(key) != data:
            raise ReplayStoreError(f"{key} in {target.describe()} does not read back as written")
    except ReplayStoreError as exc:
        raise _TargetFailed(str(exc)) from exc
    session.execute(
        update(Replay)
        .where(Replay.match_id == row.match_id, Replay.storage == row.storage)
        .values(storage=target.kind, key=key, data=None)
    )
    return len(data)


def _delete_old(objects: list[tuple[ReplayStorage, str]], settings: Settings) -> list[str]:
    """Delete the moved objects from their old store; the ones that could not be deleted."""
    left = []
    for storage, key in objects:
        try:
            open_store(storage, settings).delete(key)
        except ReplayStoreError:
            left.append(f"{storage.value}:{key}")
    return left


def _say(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shared.replay_store.migrate",
        description=(
            "Move replays stored in PostgreSQL (or in another replay store) into the one "
            "ARENA_REPLAY_STORE names. Resumable: stop it at any time and run it again."
        ),
    )
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH, help="replays per transaction")
    parser.add_argument("--limit", type=int, default=None, help="move at most this many, then stop")
    parser.add_argument("--no-verify", action="store_true", help="do not read each object back")
    parser.add_argument("--dry-run", action="store_true", help="only count what would move")
    args = parser.parse_args(argv)
    if args.batch_size < 1 or (args.limit is not None and args.limit < 1):
        parser.error("--batch-size and --limit must be at least 1")
    settings = get_settings()
    target = open_store(settings.replay_store, settings)
    counts = pending(get_engine(), target.kind)
    if args.dry_run or not counts:
        where = ", ".join(f"{count} in {storage.value}" for storage, count in sorted(counts.items()))
        print(f"replays to move to {target.describe()}: {where or 'none'}")
        return 0
    report = migrate_replays(
        target, settings=settings, batch_size=args.batch_size, limit=args.limit, verify=not args.no_verify
    )
    print(f"moved {report.moved} replays ({report.bytes / 2**20:.1f} MiB) to {target.describe()}")
    for match_id, reason in report.failed:
        print(f"not moved: match {match_id}: {reason}", file=sys.stderr)
    for orphan in report.orphans:
        print(f"moved, but the old object is still there: {orphan}", file=sys.stderr)
    if report.stopped is not None:
        print(f"stopped: {report.stopped}; run again once the store answers", file=sys.stderr)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
