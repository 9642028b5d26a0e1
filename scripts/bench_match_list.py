"""Match lists against the number of matches: a page with the list indexes and a capped count, and
the same page without them (every match of the game sorted and counted), in the same run; and a
whole page's work, JSON included, read as plain rows into dicts (as the gateway does) against ORM
objects and models built one by one (as it did).

    .venv/bin/python -m scripts.bench_match_list [--matches 60000] [--repeat 20]

A scratch database gets `--matches` finished ladder matches with participants and replays (the
seeding of `scripts.bench_gateway_load`; at most about 60,000, as its replay files are hard links
to one file per game). Then the gateway's own functions (`list_matches`, `match_views`) read a
podracing page (the newest 50) and a page of all games at offset 1,000, first as they are, then
with the two list indexes dropped and the count uncapped, as before they existed. Prints the median
milliseconds of each over `--repeat` reads (query and views, no JSON).

The second table is the podracing page with its JSON, as the `GET /api/v1/matches` endpoint makes
it: the page read as rows into dicts, validated once into the response model and serialised
(what FastAPI does with the dicts the endpoint returns), against the earlier way, kept here as the
baseline: ORM objects with their participants loaded by `selectinload`, one query each for bots,
owners and versions, a model built per match and participant, and FastAPI's handling of a returned
model (dumped, validated again, serialised).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from scripts import bench_gateway_load as load

PAGE = 50
LIST_INDEXES = ("ix_matches_created", "ix_matches_game_created")


def _median_ms(read: Callable[[], None], repeat: int) -> float:
    for _ in range(3):
        read()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def measure(repeat: int) -> dict[str, float]:
    from services.gateway.matches import service
    from shared.db.session import session_scope

    def game_page() -> None:
        with session_scope() as session:
            found = service.list_matches(session, "podracing", None, None, None, PAGE, 0)
            service.match_views(session, found.matches, None)

    def deep_page() -> None:
        with session_scope() as session:
            found = service.list_matches(session, None, None, None, None, PAGE, 1000)
            service.match_views(session, found.matches, None)

    return {
        "podracing page": _median_ms(game_page, repeat),
        "all games, offset 1,000": _median_ms(deep_page, repeat),
    }


def _orm_views(session: Any, matches: list[Any]) -> list[Any]:
    """The earlier `match_views`: ORM rows in, one model per match and participant out."""
    from sqlalchemy import select

    from services.gateway.matches.schemas import MatchOut, ParticipantOut
    from shared.db.models import Bot, BotVersion, Replay, User
    from shared.ratings import ordinal

    parts = [p for m in matches for p in m.participants]
    bots = {b.id: b for b in session.scalars(select(Bot).where(Bot.id.in_({p.bot_id for p in parts})))}
    owners: dict[uuid.UUID, str] = dict(
        session.execute(
            select(User.id, User.name).where(User.id.in_({b.owner_id for b in bots.values()}))
        ).all()
    )
    version_ids = {p.bot_version_id for p in parts if p.bot_version_id}
    versions: dict[uuid.UUID, int] = dict(
        session.execute(select(BotVersion.id, BotVersion.number).where(BotVersion.id.in_(version_ids))).all()
    )
    replays = {
        row.match_id: row
        for row in session.execute(
            select(Replay.match_id, Replay.frames, Replay.size_bytes).where(
                Replay.match_id.in_([m.id for m in matches])
            )
        )
    }

    def change(p: Any) -> float | None:
        if None in (p.mu_before, p.sigma_before, p.mu_after, p.sigma_after):
            return None
        return float(ordinal(p.mu_after, p.sigma_after) - ordinal(p.mu_before, p.sigma_before))

    views = []
    for m in matches:
        replay = replays.get(m.id)
        participants = [
            ParticipantOut(
                slot=p.slot,
                bot_id=p.bot_id,
                bot_name=bots[p.bot_id].name,
                owner_name=owners.get(bots[p.bot_id].owner_id, "?"),
                version=versions.get(p.bot_version_id) if p.bot_version_id else None,
                rank=p.rank,
                score=p.score,
                metrics=p.metrics or {},
                mu_before=p.mu_before,
                sigma_before=p.sigma_before,
                mu_after=p.mu_after,
                sigma_after=p.sigma_after,
                ordinal_change=change(p),
                errors=p.errors,
                timeouts=p.timeouts,
                forfeited=p.forfeited,
                latency_p50_ms=p.latency_p50_ms,
                latency_p99_ms=p.latency_p99_ms,
                error_samples=None,
            )
            for p in m.participants
        ]
        views.append(
            MatchOut(
                id=m.id,
                game=m.game,
                kind=m.kind,
                rated=m.rated,
                status=m.status,
                seed=m.seed,
                config=m.config or {},
                attempts=m.attempts,
                queued_at=m.queued_at,
                started_at=m.started_at,
                finished_at=m.finished_at,
                turns=m.turns,
                end_reason=m.end_reason,
                error=m.error,
                participants=participants,
                replay_url=f"/api/v1/matches/{m.id}/replay" if replay else None,
                replay_frames=replay.frames if replay else None,
                replay_bytes=replay.size_bytes if replay else None,
            )
        )
    return views


def measure_page(repeat: int) -> dict[str, Any]:
    """The podracing page with its JSON: rows into dicts against ORM objects and models."""
    from pydantic import TypeAdapter
    from sqlalchemy import func, select
    from sqlalchemy.orm import selectinload

    from services.gateway.matches import service
    from services.gateway.matches.schemas import MatchOut
    from services.gateway.pagination import Page
    from shared.db.models import Match
    from shared.db.session import session_scope

    adapter = TypeAdapter(Page[MatchOut])
    bodies: dict[str, bytes] = {}

    def rows_page() -> None:
        with session_scope() as session:
            found = service.list_matches(session, "podracing", None, None, None, PAGE, 0)
            page = {
                "items": service.match_dicts(session, found.matches, None),
                "total": found.total,
                "total_exact": found.exact,
                "limit": PAGE,
                "offset": 0,
            }
        bodies["rows"] = adapter.dump_json(adapter.validate_python(page))

    def orm_page() -> None:
        with session_scope() as session:
            capped = select(Match.id).where(Match.game == "podracing").limit(service.COUNT_LIMIT + 1)
            total = session.scalar(select(func.count()).select_from(capped.subquery())) or 0
            matches = list(
                session.scalars(
                    select(Match)
                    .where(Match.game == "podracing")
                    .options(selectinload(Match.participants))
                    .order_by(Match.created_at.desc(), Match.id.desc())
                    .limit(PAGE)
                )
            )
            page = Page[MatchOut](
                items=_orm_views(session, matches),
                total=min(total, service.COUNT_LIMIT),
                total_exact=total <= service.COUNT_LIMIT,
                limit=PAGE,
                offset=0,
            )
        bodies["orm"] = adapter.dump_json(adapter.validate_python(page.model_dump()))

    figures = {
        "rows into dicts": _median_ms(rows_page, repeat),
        "ORM and models": _median_ms(orm_page, repeat),
    }
    if bodies["rows"] != bodies["orm"]:
        raise SystemExit("the two ways gave different JSON: the baseline no longer matches the gateway")
    return {**figures, "bytes": len(bodies["rows"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=60_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    if not 1_000 <= args.matches <= 60_000:
        parser.error("--matches must be between 1,000 and 60,000")
    name = f"arena_bench_list_{os.getpid()}_{secrets.token_hex(3)}"
    work = load.ROOT / ".arena-data" / "bench" / name
    os.environ.update(
        {
            "ARENA_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
            "ARENA_DEV_MODE": "1",
            "ARENA_SECRET_KEY": "bench-" + secrets.token_hex(16),
            "ARENA_REPLAY_STORE": "filesystem",
            "ARENA_REPLAY_DIR": str(work / "replays"),
        }
    )
    work.mkdir(parents=True, exist_ok=True)
    try:
        load.create_database(name)
        started = time.perf_counter()
        load.seed_data(40, {"podracing": 36, "battle": 12}, args.matches)
        print(f"{args.matches:,} matches seeded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        now = measure(args.repeat)
        page = measure_page(args.repeat)

        from services.gateway.matches import service
        from shared.db.session import session_scope

        with session_scope() as session:
            for index in LIST_INDEXES:
                session.connection().exec_driver_sql(f"DROP INDEX {index}")
            session.connection().exec_driver_sql("ANALYZE matches")
        capped = service.COUNT_LIMIT
        service.COUNT_LIMIT = 10**12
        try:
            before = measure(args.repeat)
        finally:
            service.COUNT_LIMIT = capped
    finally:
        load.drop_database(name)
        shutil.rmtree(work, ignore_errors=True)

    print(f"\nmatch list reads, {args.matches:,} matches, median of {args.repeat} (ms; query, ORM and views)")
    print(f"{'page':26} {'indexes, capped count':>22} {'no indexes, full count':>23} {'ratio':>7}")
    for label, value in now.items():
        print(f"{label:26} {value:22.2f} {before[label]:23.2f} {before[label] / value:7.1f}x")
    rows, orm = page["rows into dicts"], page["ORM and models"]
    print(f"\nthe podracing page with its JSON ({page['bytes']:,} bytes), median of {args.repeat} (ms)")
    print(f"{'rows into dicts':>16} {'ORM and models':>15} {'ratio':>7}")
    print(f"{rows:16.2f} {orm:15.2f} {orm / rows:7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
