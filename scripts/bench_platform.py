"""Platform benchmarks of the match runner, measured on this machine:

(a) per-turn cost of the runner's bot connection (SSRF-pinned transport, signing, size cap, JSON
    checks) against a bare keep-alive httpx POST of the same signed body to the same SDK bot,
    as a ratio (target <= 1.5); plus the whole turn loop (game + two bots in parallel) per turn;
(b) podracing matches per minute with the example bots and ONE worker (target >= 60): a real
    celery worker, two SDK bot processes, a scratch PostgreSQL database and Redis database;
(c) the same between two HOSTED bots (the built-in runner policy and the follower example,
    uploaded as "decide" bots), each match starting both bots in bubblewrap sandboxes.
(b) and (c) use the default match config and are measured with the worker at concurrency 1
(celery -c 1, the figure the target is about) and at concurrency 2.

    .venv/bin/python -m scripts.bench_platform [--quick] [--turns 300] [--matches 20]

Needs PostgreSQL and Redis as configured for the tests (ARENA_TEST_PG_ADMIN, 127.0.0.1:6379).
Everything it starts is stopped, and its database dropped, whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from scripts.bench_procs import LoggedProcess, free_port, process_tree_cpu, processes
from shared.states import BotKind, HostedContract, MatchStatus

ROOT = Path(__file__).resolve().parent.parent
ADMIN_URL = os.environ.get("ARENA_TEST_PG_ADMIN", "postgresql://postgres@127.0.0.1:5432/postgres")
BENCH_DB = f"arena_bench_{os.getpid()}_{secrets.token_hex(3)}"
BENCH_REDIS_URL = f"redis://127.0.0.1:6379/{os.environ.get('ARENA_BENCH_REDIS_DB', '10')}"
LOG_DIR = ROOT / ".arena-data" / "bench" / BENCH_DB
EXAMPLE_BOTS = ("examples/bots/podracing_runner_bot.py", "examples/bots/podracing_follower_bot.py")

# Before anything reads Settings: this process and its children use the scratch database.
os.environ.update(
    {
        "ARENA_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:5432/{BENCH_DB}",
        "ARENA_REDIS_URL": BENCH_REDIS_URL,
        "ARENA_DEV_MODE": "1",
        "ARENA_SECRET_KEY": "bench-" + secrets.token_hex(16),
    }
)


class Proc(LoggedProcess):
    """A child in its own process group, output to a log file named after its last argument."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        log_path = LOG_DIR / f"{Path(args[-1]).stem}-{secrets.token_hex(3)}.log"
        super().__init__(args, log_path, cwd=ROOT, env=env)


def start_bot(started: list[Proc], module: str, secret: str) -> int:
    port = free_port()
    proc = Proc(
        [sys.executable, "-m", "shared.botsdk.run", "--module", module, "--port", str(port)],
        env={"ARENA_BOT_SECRET": secret},
    )
    started.append(proc)
    proc.wait_for("serving", timeout=20)
    return port


def recorded_observations(turns: int) -> list[dict[str, Any]]:
    """Real observations of a real race (player 0), replayed to the bot in the same order."""
    from shared.games.podracing.bots import runner
    from shared.games.registry import get_game

    game = get_game("podracing")
    observations: list[dict[str, Any]] = []
    seed = 1
    while len(observations) < turns:
        match = game.create_match(seed, {}, 2)
        while not match.finished and len(observations) < turns:
            observations.append(json.loads(json.dumps(match.observation(0))))
            match.step([runner(match.observation(0)), runner(match.observation(1))])
        seed += 1
    return observations


async def _runner_turns(port: int, secret: str, observations: list[dict[str, Any]]) -> float:
    from shared.botclient import HttpBotConnection
    from shared.config import get_settings

    connection = await HttpBotConnection.open(f"http://127.0.0.1:{port}", secret, get_settings())
    async with connection:
        await connection.turn(
            match_id="warm", game="podracing", player=0, turn=0, timeout_ms=5000, observation=observations[0]
        )
        started = time.perf_counter()
        for turn, observation in enumerate(observations):
            reply = await connection.turn(
                match_id="bench",
                game="podracing",
                player=0,
                turn=turn,
                timeout_ms=5000,
                observation=observation,
            )
            if not reply.ok:
                raise RuntimeError(f"bot failed: {reply.error}")
        return (time.perf_counter() - started) / len(observations)


async def _bare_turns(port: int, secret: str, observations: list[dict[str, Any]]) -> float:
    import httpx

    from shared.protocol.signing import Signer

    signer = Signer(secret)
    url = f"http://127.0.0.1:{port}/turn"
    async with httpx.AsyncClient() as client:
        await client.get(
            f"http://127.0.0.1:{port}/health",
            headers=signer.headers("warm", b"", method="GET", path="/health"),
        )
        started = time.perf_counter()
        for turn, observation in enumerate(observations):
            body = json.dumps(
                {
                    "protocol": 1,
                    "match_id": "bench",
                    "game": "podracing",
                    "player": 0,
                    "turn": turn,
                    "timeout_ms": 5000,
                    "observation": observation,
                },
                separators=(",", ":"),
            ).encode()
            response = await client.post(
                url,
                content=body,
                headers=signer.headers(f"bench-{turn}-{uuid.uuid4().hex}", body, method="POST", path="/turn"),
            )
            if response.status_code != 200:
                raise RuntimeError(f"bot answered {response.status_code}")
        return (time.perf_counter() - started) / len(observations)


async def _loop_turns(ports: list[int], secret: str, matches: int) -> tuple[float, int]:
    from services.match_runner.runner import play_match
    from shared.botclient import HttpBotConnection
    from shared.config import get_settings
    from shared.games.registry import get_game

    settings = get_settings()
    clients = [await HttpBotConnection.open(f"http://127.0.0.1:{p}", secret, settings) for p in ports]
    turns, elapsed = 0, 0.0
    try:
        for seed in range(matches):
            started = time.perf_counter()
            played = await play_match(
                get_game("podracing"),
                match_id=f"loop-{seed}",
                seed=seed,
                config={},
                clients=clients,
                settings=settings,
            )
            elapsed += time.perf_counter() - started
            turns += played.turns
    finally:
        for client in clients:
            await client.aclose()
    return elapsed / turns, turns


def bench_overhead(turns: int, rounds: int) -> dict[str, float]:
    from shared.protocol.signing import generate_secret

    secret = generate_secret()
    observations = recorded_observations(turns)
    with processes() as started:
        port = start_bot(started, EXAMPLE_BOTS[0], secret)
        second = start_bot(started, EXAMPLE_BOTS[1], secret)
        runner_times, bare_times = [], []
        for _ in range(rounds):  # interleaved, so load changes on the machine hit both alike
            bare_times.append(asyncio.run(_bare_turns(port, secret, observations)))
            runner_times.append(asyncio.run(_runner_turns(port, secret, observations)))
        loop_per_turn, loop_turns = asyncio.run(_loop_turns([port, second], secret, 3))
    runner_ms = statistics.median(runner_times) * 1000
    bare_ms = statistics.median(bare_times) * 1000
    return {
        "runner_ms": runner_ms,
        "bare_ms": bare_ms,
        "ratio": runner_ms / bare_ms,
        "loop_ms": loop_per_turn * 1000,
        "loop_turns": loop_turns,
    }


def _create_database() -> str:
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
    from shared.db.migrations import migrate

    migrate(os.environ["ARENA_DATABASE_URL"])
    return os.environ["ARENA_DATABASE_URL"]


def _drop_database() -> None:
    from sqlalchemy.engine import make_url

    from shared.db.embedded import drop_database
    from shared.db.session import get_engine

    get_engine().dispose()
    drop_database(make_url(ADMIN_URL).set(database=BENCH_DB).render_as_string(hide_password=False))


HOSTED_SOURCES = (
    (ROOT / "shared/games/podracing/bots.py").read_text()
    + "\n\ndef decide(observation):\n    return runner(observation)\n",
    (ROOT / "examples/bots/podracing_follower_bot.py").read_text(),
)
"""The hosted pair of (c): the same two policies as the HTTP example bots of (b)."""


def _start_worker(concurrency: int) -> Proc:
    from services.match_runner.commands import worker_command

    name = f"bench-{secrets.token_hex(3)}@%h"
    return Proc([*worker_command(concurrency=concurrency, name=name), "--without-heartbeat"])


def _register_bots(kind: str, ports: list[int], secrets_by_bot: list[str]) -> list[uuid.UUID]:
    from shared.config import get_settings
    from shared.crypto import encrypt_secret
    from shared.db.models import Bot, BotVersion, User
    from shared.db.session import session_scope

    settings = get_settings()
    with session_scope() as session:
        user = User(name=f"bench-{kind}-{secrets.token_hex(3)}")
        session.add(user)
        session.flush()
        bot_ids = []
        for index, secret in enumerate(secrets_by_bot):
            bot = Bot(
                owner_id=user.id,
                name=f"example-{kind}-{index}",
                game="podracing",
                kind=kind,
                endpoint=f"http://127.0.0.1:{ports[index]}" if kind == BotKind.HTTP else None,
                secret_encrypted=encrypt_secret(settings, secret),
            )
            session.add(bot)
            session.flush()
            if kind == BotKind.HOSTED:
                version = BotVersion(
                    bot_id=bot.id, number=1, source=HOSTED_SOURCES[index], contract=HostedContract.DECIDE
                )
                session.add(version)
                session.flush()
                bot.current_version_id = version.id
            bot_ids.append(bot.id)
    return bot_ids


def _measure_run(
    kind: str, concurrency: int, matches: int, timeout_s: float, bot_ids: list[uuid.UUID], bots: list[Proc]
) -> dict[str, float]:
    """Queue `matches` default podracing matches for one fresh worker and time them."""
    from sqlalchemy import func, select

    from shared.db.models import Match
    from shared.db.session import session_scope
    from shared.matches import create_match, enqueue_match

    with processes() as started:
        worker = _start_worker(concurrency)
        started.append(worker)
        with session_scope() as session:
            match_ids: list[uuid.UUID] = []
            for seed in range(matches):
                order = bot_ids if seed % 2 == 0 else bot_ids[::-1]
                match_ids.append(create_match(session, game="podracing", bot_ids=order, seed=1000 + seed).id)
        worker.wait_for("ready.", timeout=60)  # we measure playing, not booting
        hosted = kind == BotKind.HOSTED
        worker_cpu0 = process_tree_cpu(worker.proc.pid, reaped=hosted)
        bots_cpu0 = sum(process_tree_cpu(p.proc.pid) for p in bots)
        started_wall = time.time()
        started_at = time.perf_counter()
        for match_id in match_ids:
            enqueue_match(match_id)
        done = turns = failed = 0
        last_finish: Any = None
        while time.perf_counter() - started_at < timeout_s:
            with session_scope() as session:
                done, turns, last_finish = session.execute(
                    select(
                        func.count(), func.coalesce(func.sum(Match.turns), 0), func.max(Match.finished_at)
                    ).where(
                        Match.id.in_(match_ids), Match.status.in_([MatchStatus.FINISHED, MatchStatus.FAILED])
                    )
                ).one()
                failed = session.scalar(
                    select(func.count()).where(Match.id.in_(match_ids), Match.status == MatchStatus.FAILED)
                )
            if done == matches:
                break
            time.sleep(0.2)
        worker_cpu = process_tree_cpu(worker.proc.pid, reaped=hosted) - worker_cpu0
        bots_cpu = sum(process_tree_cpu(p.proc.pid) for p in bots) - bots_cpu0
    # Matches per minute over the time the finished ones took (from queueing to the last finish).
    elapsed = (last_finish.timestamp() - started_wall) if last_finish is not None else timeout_s
    elapsed = max(elapsed, 1e-6)
    return {
        "concurrency": float(concurrency),
        "matches": float(done),
        "queued": float(matches),
        "failed": float(failed or 0),
        "seconds": elapsed,
        "per_minute": done / elapsed * 60,
        "avg_turns": turns / done if done else 0.0,
        "worker_cpu_per_match": worker_cpu / done if done else 0.0,
        "bots_cpu_per_match": bots_cpu / done if done else 0.0,
    }


def bench_throughput(plan: list[tuple[str, int, int]], timeout_s: float) -> list[dict[str, float]]:
    """One measurement per (bot kind, worker concurrency, matches) in `plan`, each with a fresh
    worker, on one scratch database."""
    import redis

    from shared.protocol.signing import generate_secret

    redis_client = redis.Redis.from_url(BENCH_REDIS_URL)
    redis_client.flushdb()
    _create_database()
    results = []
    try:
        with processes() as http_bots:
            secrets_by_bot = [generate_secret() for _ in EXAMPLE_BOTS]
            ports = [start_bot(http_bots, m, s) for m, s in zip(EXAMPLE_BOTS, secrets_by_bot, strict=True)]
            bot_ids = {kind: _register_bots(kind, ports, secrets_by_bot) for kind in BotKind}
            for kind, concurrency, matches in plan:
                bots = http_bots if kind == BotKind.HTTP else []
                results.append(_measure_run(kind, concurrency, matches, timeout_s, bot_ids[kind], bots))
                redis_client.flushdb()  # tasks of matches a timed-out run left behind
    finally:
        _drop_database()
        redis_client.flushdb()
    return results


def ceiling(throughput: dict[str, float]) -> float:
    """Matches per minute this machine could play if nothing else ran on it: limited by the worker
    (one process, so one core) and by all the CPU the match needs spread over every core."""
    worker = throughput["worker_cpu_per_match"]
    total = worker + throughput["bots_cpu_per_match"]
    if worker <= 0:
        return 0.0
    return 60.0 / max(worker, total / (os.cpu_count() or 1))


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # so that every finally block stops processes and drops the database


def main() -> int:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer turns and matches (about a minute)")
    parser.add_argument("--turns", type=int, default=None, help="turns per round in (a) [300; quick 100]")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds in (a) [5; quick 3]")
    parser.add_argument("--matches", type=int, default=None, help="HTTP matches per run in (b) [20; quick 8]")
    parser.add_argument(
        "--hosted-matches", type=int, default=None, help="hosted matches per run in (c) [10; quick 4]"
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="give up on one run after this many seconds"
    )
    parser.add_argument("--keep-logs", action="store_true", help=f"keep the processes' logs in {LOG_DIR}")
    args = parser.parse_args()
    quick = args.quick
    args.turns = args.turns or (100 if quick else 300)
    args.rounds = args.rounds or (3 if quick else 5)
    args.matches = args.matches or (8 if quick else 20)
    args.hosted_matches = args.hosted_matches or (4 if quick else 10)
    try:
        return run(args)
    finally:
        if not args.keep_logs:
            shutil.rmtree(LOG_DIR, ignore_errors=True)
            with contextlib.suppress(OSError):
                LOG_DIR.parent.rmdir()


def _run_row(label: str, result: dict[str, float], target: str = "") -> tuple[str, str, str]:
    missing = int(result["queued"] - result["matches"])
    return (
        f"{label}, worker -c {int(result['concurrency'])} ({int(result['matches'])} matches, "
        f"avg {result['avg_turns']:.0f} turns, {int(result['failed'])} failed"
        + (f", {missing} unfinished" if missing else "")
        + ")",
        f"{result['per_minute']:.1f}",
        target,
    )


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    overhead = bench_overhead(args.turns, args.rounds)
    plan = [
        (BotKind.HTTP, 1, args.matches),
        (BotKind.HOSTED, 1, args.hosted_matches),
        (BotKind.HTTP, 2, args.matches),
        (BotKind.HOSTED, 2, args.hosted_matches),
    ]
    http1, hosted1, http2, hosted2 = bench_throughput(plan, args.timeout)
    load = os.getloadavg()[0]
    rows = [
        ("(a) bare httpx keep-alive POST, ms/turn", f"{overhead['bare_ms']:.3f}", ""),
        ("(a) runner connection layer, ms/turn", f"{overhead['runner_ms']:.3f}", ""),
        ("(a) overhead ratio runner / bare", f"{overhead['ratio']:.2f}", "<= 1.5"),
        (
            f"(a) full turn loop, 2 bots, ms/turn ({int(overhead['loop_turns'])} turns)",
            f"{overhead['loop_ms']:.3f}",
            "",
        ),
        _run_row("(b) HTTP bots: podracing matches/min, 1 worker", http1, ">= 60"),
        _run_row("(b) HTTP bots: podracing matches/min, 1 worker", http2),
        (
            "(b) -c 1: worker CPU per match, ms (bots' CPU per match)",
            f"{http1['worker_cpu_per_match'] * 1000:.0f}",
            f"({http1['bots_cpu_per_match'] * 1000:.0f})",
        ),
        ("(b) -c 1: CPU-bound ceiling on this machine if idle, matches/min", f"{ceiling(http1):.1f}", ""),
        _run_row("(c) hosted bots: podracing matches/min, 1 worker", hosted1, ">= 60"),
        _run_row("(c) hosted bots: podracing matches/min, 1 worker", hosted2),
        (
            "(c) -c 1: worker + sandboxes CPU per match, ms",
            f"{hosted1['worker_cpu_per_match'] * 1000:.0f}",
            "",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(
        f"\nplatform benchmark  (cpus: {os.cpu_count()}, load average at end: {load:.2f}, "
        f"took {time.perf_counter() - started:.0f} s)"
    )
    print("default podracing config; '-c N' is the worker's celery concurrency (processes)")
    print(f"{'measure'.ljust(width)}  {'value':>9}  target")
    print("-" * (width + 20))
    for name, value, target in rows:
        print(f"{name.ljust(width)}  {value:>9}  {target}")
    ok = overhead["ratio"] <= 1.5 and http1["per_minute"] >= 60 and hosted1["per_minute"] >= 60
    print("\nall targets met" if ok else "\nsome targets missed (see above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
