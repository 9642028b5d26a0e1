"""Platform benchmarks of the match runner, measured on this machine:

(a) per-turn cost of the runner's bot connection (SSRF-pinned transport, signing, size cap, JSON
    checks) against a bare keep-alive httpx POST of the same signed body to the same SDK bot,
    as a ratio (target <= 1.5); plus the whole turn loop (game + two bots in parallel) per turn;
(b) podracing matches per minute with the example bots and ONE worker (target >= 60): a real
    celery worker, two SDK bot processes, a scratch PostgreSQL database and Redis database.

    .venv/bin/python -m scripts.bench_platform [--turns 300] [--matches 40]

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
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


class Proc:
    """A child in its own process group, output to a log file, killed with its children on exit."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        self.log_path = LOG_DIR / f"{Path(args[-1]).stem}-{secrets.token_hex(3)}.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            args,
            cwd=ROOT,
            env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, needle: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.output():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"process exited early:\n{self.output()[-2000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"{needle!r} not seen in {timeout}s:\n{self.output()[-2000:]}")

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
                break
        self._log.close()


@contextlib.contextmanager
def processes() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    try:
        yield started
    finally:
        for proc in reversed(started):
            proc.stop()


def process_tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and its live children (Linux /proc)."""
    total = 0.0
    pending = [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                pending.extend(int(child) for child in children)
        except (OSError, ValueError, IndexError):
            continue
    return total


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
        await client.get(f"http://127.0.0.1:{port}/health", headers=signer.headers("warm", b""))
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
            response = await client.post(url, content=body, headers=signer.headers(f"bench-{turn}-0", body))
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
    from alembic import command
    from alembic.config import Config

    config = Config(str(ROOT / "alembic.ini"))
    config.attributes["url"] = os.environ["ARENA_DATABASE_URL"]
    config.attributes["configure_logger"] = False
    command.upgrade(config, "head")
    return os.environ["ARENA_DATABASE_URL"]


def _drop_database() -> None:
    import psycopg

    from shared.db.session import get_engine

    get_engine().dispose()
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')


def bench_throughput(matches: int, timeout_s: float) -> dict[str, float]:
    import redis
    from sqlalchemy import func, select

    from shared.crypto import encrypt_secret
    from shared.db.models import Bot, Match, User
    from shared.db.session import session_scope
    from shared.matches import create_match, enqueue_match
    from shared.protocol.signing import generate_secret

    redis_client = redis.Redis.from_url(BENCH_REDIS_URL)
    redis_client.flushdb()
    _create_database()
    try:
        with processes() as started:
            secrets_by_bot = [generate_secret() for _ in EXAMPLE_BOTS]
            ports = [start_bot(started, m, s) for m, s in zip(EXAMPLE_BOTS, secrets_by_bot, strict=True)]
            worker = Proc(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "services.match_runner.worker",
                    "worker",
                    "-Q",
                    "matches",
                    "-c",
                    "1",
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                ]
            )
            started.append(worker)
            from shared.config import get_settings

            settings = get_settings()
            with session_scope() as session:
                user = User(name="bench")
                session.add(user)
                session.flush()
                bot_ids = []
                for index, (port, secret) in enumerate(zip(ports, secrets_by_bot, strict=True)):
                    bot = Bot(
                        owner_id=user.id,
                        name=f"example-{index}",
                        game="podracing",
                        kind="http",
                        endpoint=f"http://127.0.0.1:{port}",
                        secret_encrypted=encrypt_secret(settings, secret),
                    )
                    session.add(bot)
                    session.flush()
                    bot_ids.append(bot.id)
                match_ids: list[uuid.UUID] = []
                for seed in range(matches):
                    order = bot_ids if seed % 2 == 0 else bot_ids[::-1]
                    match_ids.append(
                        create_match(session, game="podracing", bot_ids=order, seed=1000 + seed).id
                    )
            worker.wait_for("ready.", timeout=60)  # we measure playing, not booting
            worker_cpu0 = process_tree_cpu(worker.proc.pid)
            bots_cpu0 = sum(process_tree_cpu(p.proc.pid) for p in started[:2])
            started_at = time.perf_counter()
            for match_id in match_ids:
                enqueue_match(match_id)
            done, turns = 0, 0
            while time.perf_counter() - started_at < timeout_s:
                with session_scope() as session:
                    done, turns = session.execute(
                        select(func.count(), func.coalesce(func.sum(Match.turns), 0)).where(
                            Match.id.in_(match_ids), Match.status.in_(["finished", "failed"])
                        )
                    ).one()
                    failed = session.scalar(
                        select(func.count()).where(Match.id.in_(match_ids), Match.status == "failed")
                    )
                if done == matches:
                    break
                time.sleep(0.2)
            elapsed = time.perf_counter() - started_at
            worker_cpu = process_tree_cpu(worker.proc.pid) - worker_cpu0
            bots_cpu = sum(process_tree_cpu(p.proc.pid) for p in started[:2]) - bots_cpu0
    finally:
        _drop_database()
        redis_client.flushdb()
    return {
        "matches": float(done),
        "failed": float(failed or 0),
        "seconds": elapsed,
        "per_minute": done / elapsed * 60,
        "avg_turns": turns / done if done else 0.0,
        "worker_cpu_per_match": worker_cpu / done if done else 0.0,
        "bots_cpu_per_match": bots_cpu / done if done else 0.0,
    }


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
    parser.add_argument("--turns", type=int, default=300, help="turns per round in (a)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds in (a)")
    parser.add_argument("--matches", type=int, default=40, help="matches queued in (b)")
    parser.add_argument("--timeout", type=float, default=100.0, help="give up on (b) after this many seconds")
    parser.add_argument("--keep-logs", action="store_true", help=f"keep the processes' logs in {LOG_DIR}")
    args = parser.parse_args()
    try:
        return run(args)
    finally:
        if not args.keep_logs:
            shutil.rmtree(LOG_DIR, ignore_errors=True)
            with contextlib.suppress(OSError):
                LOG_DIR.parent.rmdir()


def run(args: argparse.Namespace) -> int:
    overhead = bench_overhead(args.turns, args.rounds)
    throughput = bench_throughput(args.matches, args.timeout)
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
        (
            f"(b) podracing matches/min, 1 worker ({int(throughput['matches'])} matches, "
            f"avg {throughput['avg_turns']:.0f} turns, {int(throughput['failed'])} failed)",
            f"{throughput['per_minute']:.1f}",
            ">= 60",
        ),
        (
            "(b) worker CPU per match, ms (bots' CPU per match)",
            f"{throughput['worker_cpu_per_match'] * 1000:.0f}",
            f"({throughput['bots_cpu_per_match'] * 1000:.0f})",
        ),
        (
            "(b) CPU-bound ceiling on this machine if idle, matches/min",
            f"{ceiling(throughput):.1f}",
            "",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"\nplatform benchmark  (cpus: {os.cpu_count()}, load average at end: {load:.2f})")
    print(f"{'measure'.ljust(width)}  {'value':>9}  target")
    print("-" * (width + 20))
    for name, value, target in rows:
        print(f"{name.ljust(width)}  {value:>9}  {target}")
    ok = overhead["ratio"] <= 1.5 and throughput["per_minute"] >= 60
    print("\nall targets met" if ok else "\nsome targets missed (see above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
