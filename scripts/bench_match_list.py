"""Match lists against the number of matches: a page with the list indexes and a capped count, and
the same page without them (every match of the game sorted and counted), in the same run.

    .venv/bin/python -m scripts.bench_match_list [--matches 60000] [--repeat 20]

A scratch database gets `--matches` finished ladder matches with participants and replays (the
seeding of `scripts.bench_gateway_load`; at most about 60,000, as its replay files are hard links
to one file per game). Then the gateway's own functions (`list_matches`, `match_views`) read a
podracing page (the newest 50) and a page of all games at offset 1,000, first as they are, then
with the two list indexes dropped and the count uncapped, as before they existed. Prints the median
milliseconds of each over `--repeat` reads. The query time is the database's and the ORM's; an
HTTP request adds the view's validation and JSON (`scripts.bench_gateway_load`).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import statistics
import sys
import time
from collections.abc import Callable

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
