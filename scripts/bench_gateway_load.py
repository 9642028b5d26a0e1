"""The gateway under load, against a bare FastAPI endpoint served the same way in the same run.

    .venv/bin/python -m scripts.bench_gateway_load [--quick] [--seconds 10] [--clients 200,50]
        [--think 1] [--workers 1,2] [--rounds 2] [--subscribers 1000] [--pairs 6]
        [--no-ws-compression] [--feed match|events] [--no-pin] [--only http|live] [--json]

HTTP: a scratch PostgreSQL database gets realistic data (users, a few dozen rated bots in both games,
a few thousand finished ladder matches with participants, ratings and replays in the filesystem
replay store: one real podracing and one real battle replay, played here with play_local and
hard-linked under every match's key). The real gateway runs as deployed (`uvicorn
services.gateway.app:app --proxy-headers`, uvloop and httptools as installed, access log on) and, at
the same time, a bare FastAPI app with one trivial `async` JSON endpoint served by the same uvicorn
command (the baseline). A SECOND process drives them on loopback: N closed-loop clients, each one
keep-alive HTTP/1.1 connection (raw asyncio, so the client costs far less CPU than the servers)
sending the next request as soon as the last one answered, for a fixed time after a warm-up.
Endpoints: the bare one; the gateway's `/health` (no database, but a plain function, so a thread
per request, and matched after the API's routes);
`GET /api/v1/leaderboard/podracing`; `GET /api/v1/matches?game=podracing` (the first page, 50
matches with their participants); `GET /api/v1/matches/{id}/replay` over 500 matches, gzip
accepted as browsers do. Each (server workers, clients) level runs every endpoint once per round,
in rotating order; figures are medians over the rounds and the leaderboard / bare ratio is the
median of the per-round ratios. A paced level (--think) adds 200 clients that each pause 0.5 to 1.5
times the think time between requests: latency under a steady load rather than at saturation, where
a closed loop's latency is its queue (clients / throughput) for every endpoint, the bare one too.

Targets: the leaderboard's p99 under 50 ms at 200 concurrent clients (judged at saturation and
paced), and at least half the bare endpoint's requests/s at saturation.

Live: a real match-runner worker (celery -c 1, what docker-compose.yml runs) plays default podracing
matches between the two example HTTP bots while a third process holds WebSocket subscribers to
`/ws/matches/{id}` of the match being played (the heaviest live feed: every subscriber gets every
`match.frames` batch; per-message deflate negotiated, as browsers do). For every seed the same match
is played unwatched and watched by all the subscribers (in alternating order); the subscribers
connect and get `live.start` before the match is queued, so the figure is what watching costs a
match while it plays, not the connection storm. The match's time is the worker's own
(`started_at` to `finished_at`). Target: at most 5% slower watched (median of the per-seed ratios).
`--feed events` subscribes them to `/ws/events?topic=matches` instead (every match's start and end).
By default the worker and the bots run on half the CPUs and the gateway and the subscribers on the
other half (taskset), as separate containers or hosts would; `--no-pin` lets them share every CPU.

Everything runs on this machine: the clients compete with the servers and the worker for the same
cores, and the script prints its CPU count and load average. Needs PostgreSQL and Redis as the tests
do (ARENA_TEST_PG_ADMIN, 127.0.0.1:6379, database ARENA_BENCH_REDIS_DB, default 12, flushed).
Everything it starts is stopped, and its database and files removed, whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import secrets
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from scripts.bench_procs import LoggedProcess, processes
from shared.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
ADMIN_URL = os.environ.get("ARENA_TEST_PG_ADMIN", "postgresql://postgres@127.0.0.1:5432/postgres")
EXAMPLE_BOTS = ("examples/bots/podracing_runner_bot.py", "examples/bots/podracing_follower_bot.py")
LEADERBOARD = "/api/v1/leaderboard/podracing"
MATCH_LIST = "/api/v1/matches?game=podracing"
BARE = "/bare"
REPLAY_SAMPLE = 500
LEADERBOARD_P99_MS = 50.0
BARE_RATIO = 0.5
SLOWDOWN = 0.05
PACED_CLIENTS = 200
"""Clients of the paced level (--think): each waits about that long between requests."""
GRACE_S = 10.0
"""How long after a phase's end the load generator waits for the answers still due."""


# -- the baseline app ------------------------------------------------------------------------------


def bare_app() -> Any:
    """The baseline: FastAPI with one trivial JSON endpoint (served with `uvicorn --factory`)."""
    from fastapi import FastAPI

    app = FastAPI()

    @app.get(BARE)
    async def bare() -> dict[str, str]:
        return {"status": "ok"}

    return app


# -- processes -------------------------------------------------------------------------------------


class Proc(LoggedProcess):
    """A child in its own process group, output to a log file, stopped with its children;
    optionally pinned to some CPUs, and with `stdin`, driven by lines (send / read_line)."""

    def __init__(
        self,
        args: list[str],
        log_dir: Path,
        name: str,
        stdin: bool = False,
        env: dict[str, str] | None = None,
        cpus: list[int] | None = None,
    ) -> None:
        log_path = log_dir / f"{name}-{secrets.token_hex(3)}.log"
        command = pinned(args, cpus) if cpus else args
        super().__init__(command, log_path, cwd=ROOT, env=env, stdin=stdin, stop_timeout=10)
        self._pending = b""

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float) -> str:
        """The child's next stdout line (a command's answer)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer in {timeout}s:\n{self.output()[-3000:]}")
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError(f"{self.proc.args!r} exited:\n{self.output()[-3000:]}")
                self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return line.decode()


def pinned(args: list[str], cpus: list[int]) -> list[str]:
    """The command run on these CPUs only, its children and threads included (util-linux taskset)."""
    taskset = shutil.which("taskset")
    if taskset is None:
        raise RuntimeError("pinning needs taskset (util-linux); run with --no-pin")
    return [taskset, "--cpu-list", ",".join(map(str, cpus)), *args]


def cpu_sides(pin: bool) -> tuple[list[int] | None, list[int] | None]:
    """(the match's CPUs, the gateway's and its audience's CPUs): the usable CPUs split in two
    halves when pinning, else (None, None): everything shares every CPU."""
    usable = sorted(os.sched_getaffinity(0))
    if not pin or len(usable) < 2:
        return None, None
    half = len(usable) // 2
    return usable[:half], usable[half:]


def raise_file_limit() -> int:
    """Raise the soft limit on open files to the hard one (1,000 sockets on each side, and the
    children inherit it); the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def uvicorn_command(target: str, port: int, workers: int, factory: bool = False) -> list[str]:
    """docker-compose.yml's gateway command on a loopback port (and --workers when above 1)."""
    command = [sys.executable, "-m", "uvicorn", target, "--host", "127.0.0.1", "--port", str(port)]
    command.append("--proxy-headers")
    if factory:
        command.append("--factory")
    if workers > 1:
        command += ["--workers", str(workers)]
    return command


def wait_http(port: int, path: str, timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}{path}", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing answers 200 on port {port} {path}")


# -- the load generator (a second process) ---------------------------------------------------------


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, int]:
    """One HTTP/1.1 response: (status, body bytes). Content-Length or chunked bodies."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    lower = head.lower()
    at = lower.find(b"\r\ncontent-length:")
    if at >= 0:
        end = lower.index(b"\r\n", at + 2)
        length = int(lower[at + 17 : end])
        await reader.readexactly(length)
        return status, length
    if b"\r\ntransfer-encoding: chunked" not in lower:
        raise ValueError("a response with neither Content-Length nor chunked encoding")
    total = 0
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        await reader.readexactly(size + 2)
        total += size
        if size == 0:
            return status, total


async def _load(
    port: int, paths: list[str], clients: int, warmup: float, seconds: float, think: float
) -> dict[str, Any]:
    requests = [
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: arena-bench\r\n"
            "Accept: application/json\r\nAccept-Encoding: gzip\r\n\r\n"
        ).encode()
        for path in paths
    ]
    latencies: list[float] = []
    problems: Counter[str] = Counter()
    received = [0]
    loop = asyncio.get_running_loop()
    begin = loop.time()
    measure_from, stop_at = begin + warmup, begin + warmup + seconds
    clock = time.perf_counter
    offset = clock() - loop.time()

    async def client(index: int) -> None:
        turn = index
        writer: asyncio.StreamWriter | None = None
        pause = random.Random(index).uniform
        if think:
            await asyncio.sleep(pause(0, think))  # spread the clients over one think time
        while loop.time() < stop_at:
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                request = requests[turn % len(requests)]
                turn += 1
                started = clock()
                writer.write(request)
                status, size = await _read_response(reader)
                ended = clock()
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
                problems[type(exc).__name__] += 1
                if writer is not None:
                    writer.close()
                writer = None
                await asyncio.sleep(0.01)
                continue
            if status != 200:
                problems[f"HTTP {status}"] += 1
            elif measure_from <= ended - offset <= stop_at:
                latencies.append(ended - started)
                received[0] += size
            if think:
                await asyncio.sleep(think * pause(0.5, 1.5))
        if writer is not None:
            writer.close()

    cpu = time.process_time()
    tasks = [asyncio.create_task(client(i)) for i in range(clients)]
    _, stuck = await asyncio.wait(tasks, timeout=warmup + seconds + GRACE_S)
    for task in stuck:  # a request unanswered long after the end: counted, then abandoned
        task.cancel()
    if stuck:
        problems[f"unanswered {GRACE_S:.0f} s after the end"] += len(stuck)
        await asyncio.wait(stuck)
    cpu = time.process_time() - cpu
    latencies.sort()
    count = len(latencies)

    def pct(q: float) -> float:
        return round(1000 * latencies[min(count - 1, int(count * q))], 2) if count else float("nan")

    return {
        "clients": clients,
        "think_s": think,
        "seconds": seconds,
        "requests": count,
        "rps": round(count / seconds, 1),
        "p50_ms": pct(0.50),
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "max_ms": round(1000 * latencies[-1], 2) if count else float("nan"),
        "bytes_per_response": round(received[0] / count) if count else 0,
        "errors": dict(problems),
        "client_cpu_s": round(cpu, 2),
    }


def load_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_gateway_load _load")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--paths", required=True, help="a file of request paths, one a line")
    parser.add_argument("--clients", type=int, required=True)
    parser.add_argument("--warmup", type=float, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--think", type=float, default=0.0)
    args = parser.parse_args(argv)
    paths = Path(args.paths).read_text().split()
    coroutine = _load(args.port, paths, args.clients, args.warmup, args.seconds, args.think)
    try:
        import uvloop

        result = uvloop.run(coroutine)
    except ImportError:
        result = asyncio.run(coroutine)
    print(json.dumps(result), flush=True)
    return 0


# -- the WebSocket subscribers (a third process) ---------------------------------------------------


FEEDS = ("match", "events")
"""What the subscribers follow: the match's own feed (`/ws/matches/{id}`: every frame batch) or the
front page's (`/ws/events?topic=matches`: every match's start and end)."""
EVENTS_SETTLE_S = 0.5
"""/ws/events says nothing when it opens: the time its subscription gets before the match is queued."""


async def _watch(port: int, match_id: str, count: int, parallel: int, compression: bool, feed: str) -> None:
    """`count` subscribers to one match's feed or to the events feed: says `ready` once all are
    subscribed, `done` once all are closed (the match feed closes itself when the match ends; an
    events subscriber closes once it has the match's `match.finished`)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    if feed == "match":
        url = f"ws://127.0.0.1:{port}/ws/matches/{match_id}"
    else:
        url = f"ws://127.0.0.1:{port}/ws/events?topic=matches"
    gate = asyncio.Semaphore(parallel)
    started = asyncio.Event()
    ready = [0]
    messages = [0]
    received = [0]
    closes: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    begin = time.perf_counter()

    async def viewer() -> None:
        try:
            async with gate:
                socket_ = await connect(
                    url,
                    open_timeout=120,
                    ping_interval=None,
                    max_size=None,
                    compression="deflate" if compression else None,
                )
            async with socket_:
                if feed == "match":
                    first = await socket_.recv()
                    if '"live.start"' not in first[:40]:
                        failures["no live.start"] += 1
                ready[0] += 1
                if ready[0] + sum(failures.values()) == count:
                    started.set()
                with contextlib.suppress(ConnectionClosed):
                    async for message in socket_:
                        messages[0] += 1
                        received[0] += len(message)
                        if feed == "events" and '"match.finished"' in message and match_id in message:
                            await socket_.close()
                            break
            closes[str(socket_.close_code)] += 1
        except Exception as exc:
            failures[type(exc).__name__] += 1
            if ready[0] + sum(failures.values()) == count:
                started.set()

    tasks = [asyncio.create_task(viewer()) for _ in range(count)]
    await started.wait()
    if feed == "events":
        await asyncio.sleep(EVENTS_SETTLE_S)
    print(f"ready {time.perf_counter() - begin:.2f}", flush=True)
    await asyncio.gather(*tasks)
    print(
        "done "
        + json.dumps(
            {
                "viewers": ready[0],
                "messages": messages[0],
                "bytes": received[0],
                "closes": dict(closes),
                "failures": dict(failures),
            }
        ),
        flush=True,
    )


async def _subscribers(port: int, count: int, parallel: int, compression: bool, feed: str) -> None:
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    print("listening", flush=True)
    while line := (await stdin.readline()).decode().strip():
        command, _, argument = line.partition(" ")
        if command == "watch":
            await _watch(port, argument, count, parallel, compression, feed)
        elif command == "quit":
            return


def subscribers_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_gateway_load _subscribers")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--parallel", type=int, default=100, help="connections opened at a time")
    parser.add_argument("--no-compression", action="store_true")
    parser.add_argument("--feed", choices=FEEDS, default="match")
    args = parser.parse_args(argv)
    raise_file_limit()
    coroutine = _subscribers(args.port, args.count, args.parallel, not args.no_compression, args.feed)
    try:
        import uvloop

        uvloop.run(coroutine)
    except ImportError:
        asyncio.run(coroutine)
    return 0


# -- data ------------------------------------------------------------------------------------------


def create_database(name: str) -> str:
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    from shared.db.migrations import migrate

    migrate(os.environ["ARENA_DATABASE_URL"])
    return os.environ["ARENA_DATABASE_URL"]


def drop_database(name: str) -> None:
    from sqlalchemy.engine import make_url

    from shared.db import embedded
    from shared.db.session import get_engine

    get_engine().dispose()
    embedded.drop_database(make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False))


def seed_data(users: int, bots_per_game: dict[str, int], matches: int) -> dict[str, Any]:
    """Users, rated bots and finished ladder matches with participants and replays (bulk inserts of
    the models' rows; the replays' bytes are real, written once through the filesystem store and
    hard-linked under every other key). Returns the ids the load needs and what was made."""
    from sqlalchemy import insert

    from shared.config import get_settings
    from shared.crypto import encrypt_secret
    from shared.db.models import Bot, Match, MatchParticipant, Rating, Replay, User
    from shared.db.session import session_scope
    from shared.games.battle.bots import defensive
    from shared.games.podracing.bots import runner
    from shared.games.registry import get_game
    from shared.games.replay import compress, play_local
    from shared.protocol.signing import generate_secret
    from shared.ratings import ordinal
    from shared.replay_store import FilesystemReplayStore, replay_key
    from shared.states import BotKind, BotOrigin, BotStatus, MatchKind, MatchStatus, ReplayStorage

    started = time.perf_counter()
    settings = get_settings()
    rng = random.Random(7)
    store = FilesystemReplayStore(settings.replay_path())
    sample = {
        "podracing": play_local(get_game("podracing"), 1, [runner, runner]),
        "battle": play_local(get_game("battle"), 1, [defensive, defensive]),
    }
    blobs = {game: compress(replay) for game, replay in sample.items()}
    originals: dict[str, Path] = {}
    secret = encrypt_secret(settings, generate_secret())
    now = datetime.now(UTC)
    user_rows = [{"id": uuid.uuid4(), "name": f"player-{i:03d}"} for i in range(users)]
    bot_rows: list[dict[str, Any]] = []
    rating_rows: list[dict[str, Any]] = []
    origins = list(BotOrigin)
    for game, count in bots_per_game.items():
        for i in range(count):
            bot_id = uuid.uuid4()
            bot_rows.append(
                {
                    "id": bot_id,
                    "owner_id": user_rows[i % users]["id"],
                    "name": f"{game}-bot-{i:02d}",
                    "game": game,
                    "kind": BotKind.HTTP,
                    "origin": origins[i % len(origins)],
                    "endpoint": f"https://bots.example.org/{game}/{i}",
                    "secret_encrypted": secret,
                    "status": BotStatus.INACTIVE if i % 10 == 9 else BotStatus.ACTIVE,
                }
            )
            mu, sigma = rng.uniform(18, 34), rng.uniform(1.2, 6.0)
            played = rng.randint(20, 400)
            wins = rng.randint(0, played)
            rating_rows.append(
                {
                    "bot_id": bot_id,
                    "game": game,
                    "mu": mu,
                    "sigma": sigma,
                    "ordinal": ordinal(mu, sigma),
                    "matches_played": played,
                    "wins": wins,
                    "draws": 0,
                    "losses": played - wins,
                }
            )
    by_game: dict[str, list[dict[str, Any]]] = {}
    for row in bot_rows:
        by_game.setdefault(row["game"], []).append(row)
    match_rows: list[dict[str, Any]] = []
    part_rows: list[dict[str, Any]] = []
    replay_rows: list[dict[str, Any]] = []
    games = list(bots_per_game)
    for i in range(matches):
        game = games[0] if i % 4 else games[-1]  # three podracing matches for each battle
        match_id = uuid.uuid4()
        finished = now - timedelta(seconds=(matches - i) * 7)
        replay = sample[game]
        match_rows.append(
            {
                "id": match_id,
                "game": game,
                "kind": MatchKind.LADDER,
                "rated": True,
                "status": MatchStatus.FINISHED,
                "seed": rng.randrange(2**31),
                "config": {},
                "attempts": 1,
                "created_at": finished - timedelta(seconds=5),
                "queued_at": finished - timedelta(seconds=5),
                "sent_at": finished - timedelta(seconds=5),
                "started_at": finished - timedelta(seconds=4),
                "finished_at": finished,
                "turns": len(replay["turns"]),
                "end_reason": "finished",
            }
        )
        seats = rng.sample(by_game[game], 2)
        for slot, bot in enumerate(seats):
            mu, sigma = rng.uniform(18, 34), rng.uniform(1.2, 6.0)
            part_rows.append(
                {
                    "id": uuid.uuid4(),
                    "match_id": match_id,
                    "slot": slot,
                    "bot_id": bot["id"],
                    "rank": slot,
                    "score": float(1 - slot),
                    "metrics": {"checkpoints": rng.randint(3, 12)} if game == "podracing" else {"kills": 3},
                    "mu_before": mu,
                    "sigma_before": sigma,
                    "mu_after": mu + (0.4 if slot == 0 else -0.4),
                    "sigma_after": sigma * 0.98,
                    "latency_p50_ms": rng.uniform(0.5, 4.0),
                    "latency_p99_ms": rng.uniform(4.0, 30.0),
                }
            )
        key = replay_key(match_id, 1)
        if game not in originals:
            store.put(key, blobs[game])  # the store's own write, once per game
            originals[game] = store.path(key)
        else:
            target = store.path(key)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(originals[game], target)
        replay_rows.append(
            {
                "match_id": match_id,
                "storage": ReplayStorage.FILESYSTEM,
                "key": key,
                "size_bytes": len(blobs[game]),
                "frames": len(replay["frames"]),
            }
        )
    with session_scope() as session:
        session.execute(insert(User), user_rows)
        session.execute(insert(Bot), bot_rows)
        session.execute(insert(Rating), rating_rows)
        for start in range(0, len(match_rows), 1000):
            session.execute(insert(Match), match_rows[start : start + 1000])
        for start in range(0, len(part_rows), 2000):
            session.execute(insert(MatchParticipant), part_rows[start : start + 2000])
        for start in range(0, len(replay_rows), 1000):
            session.execute(insert(Replay), replay_rows[start : start + 1000])
    with session_scope() as session:
        session.connection().exec_driver_sql("ANALYZE")
    podracing_ids = [row["id"] for row in match_rows if row["game"] == "podracing"]
    return {
        "users": users,
        "bots": len(bot_rows),
        "matches": matches,
        "replay_bytes": {game: len(blob) for game, blob in blobs.items()},
        "seconds": round(time.perf_counter() - started, 1),
        "replay_ids": [str(i) for i in rng.sample(podracing_ids, min(REPLAY_SAMPLE, len(podracing_ids)))],
    }


# -- part 1: HTTP endpoints ------------------------------------------------------------------------


def run_load(
    port: int,
    paths: list[str],
    clients: int,
    think: float,
    timing: tuple[float, float],
    work: Path,
    servers: list[Proc],
) -> dict[str, Any]:
    """One load phase from a separate process; adds the servers' CPU seconds during it."""
    paths_file = work / f"paths-{secrets.token_hex(3)}.txt"
    paths_file.write_text("\n".join(paths))
    command = [sys.executable, "-m", "scripts.bench_gateway_load", "_load", "--port", str(port)]
    warmup, seconds = timing
    command += ["--paths", str(paths_file), "--clients", str(clients), "--think", str(think)]
    command += ["--warmup", str(warmup), "--seconds", str(seconds)]
    cpu_before = [server.cpu() for server in servers]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=warmup + seconds + 120, check=False
    )
    cpu_after = [server.cpu() for server in servers]
    paths_file.unlink()
    if done.returncode != 0:
        raise RuntimeError(f"the load generator failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["server_cpu_s"] = round(sum(cpu_after) - sum(cpu_before), 2)
    return result


def bench_http(args: argparse.Namespace, data: dict[str, Any], work: Path) -> dict[str, Any]:
    replays = [f"/api/v1/matches/{match_id}/replay" for match_id in data["replay_ids"]]
    endpoints: dict[str, list[str]] = {
        "bare": [BARE],
        "health": ["/health"],
        "leaderboard": [LEADERBOARD],
        "matches": [MATCH_LIST],
        "replay": replays,
    }
    results: dict[str, Any] = {}
    for workers in args.workers:
        with processes() as started:
            gateway_port, bare_port = free_port(), free_port()
            gateway = Proc(
                uvicorn_command("services.gateway.app:app", gateway_port, workers), work, "gateway"
            )
            started.append(gateway)
            bare = Proc(
                uvicorn_command("scripts.bench_gateway_load:bare_app", bare_port, workers, factory=True),
                work,
                "bare",
            )
            started.append(bare)
            wait_http(gateway_port, "/ready")
            wait_http(bare_port, BARE)
            levels = [(clients, 0.0) for clients in args.clients]
            if args.think > 0:
                levels.append((PACED_CLIENTS, args.think))
            for clients, think in levels:
                label = f"workers={workers} clients={clients}" + (f" think={think:g}s" if think else "")
                level: dict[str, list[dict[str, Any]]] = {name: [] for name in endpoints}
                for round_ in range(args.rounds):
                    names = list(endpoints)
                    shift = round_ % len(names)
                    for name in names[shift:] + names[:shift]:
                        port, server = (bare_port, bare) if name == "bare" else (gateway_port, gateway)
                        timing = (args.warmup, args.seconds)
                        outcome = run_load(port, endpoints[name], clients, think, timing, work, [server])
                        level[name].append(outcome)
                        print(
                            f"  {label}, {name:11s} round {round_ + 1}: "
                            f"{outcome['rps']:8.1f} req/s  p50 {outcome['p50_ms']:7.1f} ms  "
                            f"p99 {outcome['p99_ms']:7.1f} ms  errors {outcome['errors'] or 0}",
                            file=sys.stderr,
                            flush=True,
                        )
                results[label] = summarise_level(level)
    return results


def summarise_level(level: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for name, rounds in level.items():
        summary[name] = {
            "rps": round(statistics.median(r["rps"] for r in rounds), 1),
            "p50_ms": round(statistics.median(r["p50_ms"] for r in rounds), 2),
            "p99_ms": round(statistics.median(r["p99_ms"] for r in rounds), 2),
            "max_ms": round(max(r["max_ms"] for r in rounds), 2),
            "bytes_per_response": rounds[0]["bytes_per_response"],
            "errors": sum(sum(r["errors"].values()) for r in rounds),
            "server_cpu_ms_per_request": round(
                1000 * sum(r["server_cpu_s"] for r in rounds) / sum(r["requests"] for r in rounds), 3
            )
            if any(r["requests"] for r in rounds)
            else None,
            "client_cpu_s": round(sum(r["client_cpu_s"] for r in rounds), 2),
            "rounds": [{k: r[k] for k in ("rps", "p50_ms", "p99_ms")} for r in rounds],
        }
    ratios = [
        lb["rps"] / bare["rps"]
        for lb, bare in zip(level["leaderboard"], level["bare"], strict=True)
        if bare["rps"]
    ]
    summary["leaderboard_over_bare"] = round(statistics.median(ratios), 3) if ratios else None
    return summary


# -- part 2: live subscribers ----------------------------------------------------------------------


def register_example_bots(ports: list[int], secrets_by_bot: list[str]) -> list[uuid.UUID]:
    from shared.config import get_settings
    from shared.crypto import encrypt_secret
    from shared.db.models import Bot, User
    from shared.db.session import session_scope
    from shared.states import BotKind

    settings = get_settings()
    with session_scope() as session:
        user = User(name="live-bench")
        session.add(user)
        session.flush()
        ids = []
        for index, (port, secret) in enumerate(zip(ports, secrets_by_bot, strict=True)):
            bot = Bot(
                owner_id=user.id,
                name=f"live-example-{index}",
                game="podracing",
                kind=BotKind.HTTP,
                endpoint=f"http://127.0.0.1:{port}",
                secret_encrypted=encrypt_secret(settings, secret),
            )
            session.add(bot)
            session.flush()
            ids.append(bot.id)
    return ids


def play_one(bot_ids: list[uuid.UUID], seed: int, timeout: float, before_queue: Any = None) -> dict[str, Any]:
    """Create a match, run `before_queue(match_id)`, queue it and wait for the worker to finish it;
    the worker's own time for it (started_at to finished_at) and its turns."""
    from sqlalchemy import select

    from shared.db.models import Match
    from shared.db.session import session_scope
    from shared.matches import create_match, enqueue_match
    from shared.states import MatchKind, MatchStatus

    with session_scope() as session:
        order = bot_ids if seed % 2 == 0 else bot_ids[::-1]
        match_id = create_match(session, game="podracing", bot_ids=order, seed=seed, kind=MatchKind.LADDER).id
    if before_queue is not None:
        before_queue(match_id)
    enqueue_match(match_id)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with session_scope() as session:
            status, started_at, finished_at, turns = session.execute(
                select(Match.status, Match.started_at, Match.finished_at, Match.turns).where(
                    Match.id == match_id
                )
            ).one()
        if status not in MatchStatus.pending():
            if status != MatchStatus.FINISHED or started_at is None or finished_at is None:
                raise RuntimeError(f"match {match_id} ended {status}")
            seconds = (finished_at - started_at).total_seconds()
            return {"match_id": str(match_id), "seconds": seconds, "turns": turns}
        time.sleep(0.05)
    raise TimeoutError(f"match {match_id} did not finish in {timeout}s")


def bench_live(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from services.match_runner.commands import worker_command
    from shared.protocol.signing import generate_secret

    match_cpus, gateway_cpus = cpu_sides(args.pin)
    results: dict[str, Any] = {
        "subscribers": args.subscribers,
        "feed": args.feed,
        "cpus": {"match": match_cpus, "gateway_and_subscribers": gateway_cpus} if match_cpus else "shared",
    }
    with processes() as started:
        secrets_by_bot = [generate_secret() for _ in EXAMPLE_BOTS]
        ports = []
        for module, secret in zip(EXAMPLE_BOTS, secrets_by_bot, strict=True):
            port = free_port()
            bot = Proc(
                [sys.executable, "-m", "shared.botsdk.run", "--module", module, "--port", str(port)],
                work,
                "bot",
                env={"ARENA_BOT_SECRET": secret},
                cpus=match_cpus,
            )
            started.append(bot)
            bot.wait_for("serving", timeout=30)
            ports.append(port)
        bot_ids = register_example_bots(ports, secrets_by_bot)
        gateway_port = free_port()
        gateway = Proc(
            uvicorn_command("services.gateway.app:app", gateway_port, 1),
            work,
            "gateway-live",
            cpus=gateway_cpus,
        )
        started.append(gateway)
        worker = Proc(
            [*worker_command(concurrency=1, name="bench-load@%h"), "--without-heartbeat"],
            work,
            "worker",
            cpus=match_cpus,
        )
        started.append(worker)
        wait_http(gateway_port, "/ready")
        worker.wait_for("ready.", timeout=90)
        command = [sys.executable, "-m", "scripts.bench_gateway_load", "_subscribers"]
        command += ["--port", str(gateway_port), "--count", str(args.subscribers)]
        command += ["--feed", args.feed]
        if args.no_ws_compression:
            command.append("--no-compression")
        viewers = Proc(command, work, "subscribers", stdin=True, cpus=gateway_cpus)
        started.append(viewers)
        if viewers.read_line(60) != "listening":
            raise RuntimeError("the subscriber process did not start")
        timeout = 120.0
        stats: list[dict[str, Any]] = []
        cpu = {"gateway_s": 0.0, "subscribers_s": 0.0, "worker_watched_s": 0.0, "worker_off_s": 0.0}
        connect_s: list[float] = []

        def watch(match_id: uuid.UUID) -> None:
            viewers.send(f"watch {match_id}")
            line = viewers.read_line(timeout)
            if not line.startswith("ready"):
                raise RuntimeError(f"the subscribers said {line!r}")
            connect_s.append(float(line.split()[1]))

        def one(seed: int, watched: bool) -> dict[str, Any]:
            gateway_cpu, viewers_cpu, worker_cpu = gateway.cpu(), viewers.cpu(), worker.cpu()
            if watched:
                # The fan-out's CPU counts from `ready` (everyone connected) until every subscriber
                # has its close: the match and the delivery of everything it published.
                def before(match_id: uuid.UUID) -> None:
                    nonlocal gateway_cpu, viewers_cpu
                    watch(match_id)
                    gateway_cpu, viewers_cpu = gateway.cpu(), viewers.cpu()

                played = play_one(bot_ids, seed, timeout, before)
                line = viewers.read_line(timeout)
                if not line.startswith("done"):
                    raise RuntimeError(f"the subscribers said {line!r}")
                stats.append(json.loads(line.split(" ", 1)[1]))
                cpu["gateway_s"] += gateway.cpu() - gateway_cpu
                cpu["subscribers_s"] += viewers.cpu() - viewers_cpu
                cpu["worker_watched_s"] += worker.cpu() - worker_cpu
            else:
                played = play_one(bot_ids, seed, timeout)
                cpu["worker_off_s"] += worker.cpu() - worker_cpu
            return played

        one(90_000, watched=False)  # warm up: the worker's connections, the gateway's feed
        one(90_001, watched=True)
        stats.clear()
        connect_s.clear()
        cpu = dict.fromkeys(cpu, 0.0)
        pairs: list[dict[str, Any]] = []
        for index in range(args.pairs):
            seed = 1000 + index
            order = (False, True) if index % 2 == 0 else (True, False)
            played = {watched: one(seed, watched) for watched in order}
            off, on = played[False], played[True]
            if off["turns"] != on["turns"]:
                raise RuntimeError(f"seed {seed}: {off['turns']} turns unwatched, {on['turns']} watched")
            pairs.append(
                {
                    "seed": seed,
                    "turns": off["turns"],
                    "off_s": round(off["seconds"], 3),
                    "watched_s": round(on["seconds"], 3),
                    "ratio": round(on["seconds"] / off["seconds"], 3),
                }
            )
            print(
                f"  live seed {seed}: {off['turns']} turns, unwatched {off['seconds']:.3f} s, "
                f"watched by {args.subscribers} {on['seconds']:.3f} s ({pairs[-1]['ratio']:.3f}x)",
                file=sys.stderr,
                flush=True,
            )
        viewers.send("quit")
    turns = sum(p["turns"] for p in pairs)
    off_total = sum(p["off_s"] for p in pairs)
    on_total = sum(p["watched_s"] for p in pairs)
    messages = sum(s["messages"] for s in stats)
    ratio = statistics.median(p["ratio"] for p in pairs)
    results.update(
        {
            "matches_per_case": len(pairs),
            "turns_per_s_unwatched": round(turns / off_total, 1),
            "turns_per_s_watched": round(turns / on_total, 1),
            "median_ratio_watched_over_unwatched": round(ratio, 3),
            "slowdown_pct": round(100 * (ratio - 1), 1),
            "slowdown_pct_total_time": round(100 * (on_total / off_total - 1), 1),
            "viewers_per_match": min(s["viewers"] for s in stats),
            "messages_per_viewer_per_s": round(messages / args.subscribers / on_total, 1),
            "messages_delivered": messages,
            "gateway_cpu_ms_per_message": round(1000 * cpu["gateway_s"] / messages, 3) if messages else None,
            "megabytes_delivered": round(sum(s["bytes"] for s in stats) / 1e6, 1),
            "close_codes": dict(sum((Counter(s["closes"]) for s in stats), Counter())),
            "failures": dict(sum((Counter(s["failures"]) for s in stats), Counter())),
            "connect_all_s_median": round(statistics.median(connect_s), 2),
            "cpu_s_while_watched": {
                "gateway": round(cpu["gateway_s"], 2),
                "subscriber_process": round(cpu["subscribers_s"], 2),
                "worker_watched": round(cpu["worker_watched_s"], 2),
                "worker_unwatched": round(cpu["worker_off_s"], 2),
                "watched_match_seconds": round(on_total, 2),
            },
            "pairs": pairs,
        }
    )
    return results


# -- the report ------------------------------------------------------------------------------------


def verdicts(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    level = report["http"].get("workers=1 clients=200")
    if level is not None:
        board, bare = level["leaderboard"], level["bare"]
        failed = f"; {board['errors']} requests failed" if board["errors"] else ""
        answered = board["p99_ms"] == board["p99_ms"]  # not NaN: some requests were answered
        rows.append(
            {
                "target": f"leaderboard p99 < {LEADERBOARD_P99_MS:.0f} ms, "
                "200 clients, no think time (1 worker)",
                "value": (f"{board['p99_ms']:.1f} ms" if answered else "no answer")
                + f" (bare endpoint: {bare['p99_ms']:.1f} ms){failed}",
                "pass": answered and board["p99_ms"] < LEADERBOARD_P99_MS and not board["errors"],
            }
        )
        ratio = level["leaderboard_over_bare"] or 0.0
        rates = f"{board['rps']:.0f} vs {bare['rps']:.0f} req/s"
        rows.append(
            {
                "target": f"leaderboard req/s >= {BARE_RATIO:.1f} x bare at 200 clients (1 worker)",
                "value": f"{ratio:.2f} x ({rates}){failed}",
                "pass": ratio >= BARE_RATIO and not board["errors"],
            }
        )
    for label, paced in report["http"].items():
        if label.startswith("workers=1 ") and "think=" in label:
            board, bare = paced["leaderboard"], paced["bare"]
            answered = board["p99_ms"] == board["p99_ms"]
            rows.append(
                {
                    "target": f"leaderboard p99 < {LEADERBOARD_P99_MS:.0f} ms, "
                    + label.removeprefix("workers=1 ").replace("think=", "think time ")
                    + " (1 worker)",
                    "value": (f"{board['p99_ms']:.1f} ms" if answered else "no answer")
                    + f" at {board['rps']:.0f} req/s (bare endpoint: {bare['p99_ms']:.1f} ms)",
                    "pass": answered and board["p99_ms"] < LEADERBOARD_P99_MS and not board["errors"],
                }
            )
    live = report.get("live")
    if live:
        rows.append(
            {
                "target": f"{live['subscribers']} subscribers to the {live['feed']} feed slow a match by "
                f"<= {100 * SLOWDOWN:.0f}%"
                + (" (match and gateway on separate CPUs)" if isinstance(live["cpus"], dict) else ""),
                "value": f"{live['slowdown_pct']:+.1f}% (median of {live['matches_per_case']} pairs)",
                "pass": live["slowdown_pct"] <= 100 * SLOWDOWN and not live["failures"],
            }
        )
    return rows


def print_summary(report: dict[str, Any]) -> None:
    machine = report["machine"]
    print(
        f"\ngateway load  ({machine['cpus']} CPUs, load average {machine['load_before']:.2f} before, "
        f"{machine['load_after']:.2f} after; took {report['seconds']:.0f} s)"
    )
    print(f"{'level / endpoint':44s} {'req/s':>9s} {'p50 ms':>8s} {'p99 ms':>8s} {'srv CPU ms/req':>15s}")
    for level, figures in report["http"].items():
        for name in ("bare", "health", "leaderboard", "matches", "replay"):
            row = figures[name]
            print(
                f"{level + ' ' + name:44s} {row['rps']:9.1f} {row['p50_ms']:8.1f} {row['p99_ms']:8.1f} "
                + (
                    f"{row['server_cpu_ms_per_request']:15.3f}"
                    if row["server_cpu_ms_per_request"] is not None
                    else f"{'-':>15s}"
                )
                + (f"  errors {row['errors']}" if row["errors"] else "")
            )
        if "think=" not in level:
            print(f"{level + ' leaderboard / bare':44s} {figures['leaderboard_over_bare']:9.3f}")
    live = report.get("live")
    if live:
        print(
            f"live: {live['subscribers']} subscribers to the {live['feed']} feed per match, "
            f"{live['matches_per_case']} seeds: "
            f"{live['turns_per_s_unwatched']} turns/s unwatched, {live['turns_per_s_watched']} watched; "
            f"{live['messages_per_viewer_per_s']} messages/s per subscriber"
        )
    for row in report["verdicts"]:
        print(f"{'PASS' if row['pass'] else 'FAIL'}  {row['target']}: {row['value']}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    name = f"arena_bench_load_{os.getpid()}_{secrets.token_hex(3)}"
    work = ROOT / ".arena-data" / "bench" / name
    redis_url = f"redis://127.0.0.1:6379/{os.environ.get('ARENA_BENCH_REDIS_DB', '12')}"
    os.environ.update(
        {
            "ARENA_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
            "ARENA_REDIS_URL": redis_url,
            "ARENA_DEV_MODE": "1",
            "ARENA_SECRET_KEY": "bench-" + secrets.token_hex(16),
            "ARENA_REPLAY_STORE": "filesystem",
            "ARENA_REPLAY_DIR": str(work / "replays"),
        }
    )
    for variable in ("ARENA_EVENTS_REDIS_URL", "ARENA_BOOTSTRAP_ADMIN_KEY"):
        os.environ.pop(variable, None)
    import redis

    files = raise_file_limit()
    redis.Redis.from_url(redis_url).flushdb()
    began = time.perf_counter()
    load_before = os.getloadavg()[0]
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "open_files_limit": files}}
    try:
        work.mkdir(parents=True, exist_ok=True)
        create_database(name)
        data = seed_data(args.users, {"podracing": args.bots, "battle": max(2, args.bots // 3)}, args.matches)
        report["data"] = {k: v for k, v in data.items() if k != "replay_ids"}
        print(f"  data: {report['data']}", file=sys.stderr, flush=True)
        report["http"] = bench_http(args, data, work) if args.only != "live" else {}
        if args.subscribers and args.only != "http":
            report["live"] = bench_live(args, work)
    finally:
        drop_database(name)
        redis.Redis.from_url(redis_url).flushdb()
        if args.keep_logs:
            print(f"  logs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    report["machine"].update({"load_before": load_before, "load_after": os.getloadavg()[0]})
    report["seconds"] = round(time.perf_counter() - began, 1)
    report["settings"] = {
        k: getattr(args, k)
        for k in (
            "seconds",
            "warmup",
            "rounds",
            "clients",
            "think",
            "workers",
            "subscribers",
            "pairs",
            "pin",
            "feed",
        )
    }
    report["verdicts"] = verdicts(report)
    return report


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # every finally block stops processes and drops the database


def _numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_load"]:
        return load_main(argv[1:])
    if argv[:1] == ["_subscribers"]:
        return subscribers_main(argv[1:])
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one round, 1 worker, 200 clients, 3 s phases")
    parser.add_argument(
        "--seconds", type=float, default=None, help="measured seconds per phase [10; quick 3]"
    )
    parser.add_argument("--warmup", type=float, default=None, help="warm-up seconds per phase [2; quick 1]")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per level [2; quick 1]")
    parser.add_argument(
        "--clients", type=_numbers, default=None, help="concurrency levels [200,50; quick 200]"
    )
    parser.add_argument("--workers", type=_numbers, default=None, help="uvicorn workers [1,2; quick 1]")
    parser.add_argument(
        "--think",
        type=float,
        default=None,
        help=f"also a paced level: {PACED_CLIENTS} clients, each pausing about this long (0.5-1.5x) "
        "between requests [1.0; quick 0: none]",
    )
    parser.add_argument(
        "--subscribers", type=int, default=1000, help="WebSocket subscribers (0: no live part)"
    )
    parser.add_argument(
        "--pairs", type=int, default=None, help="seeds played unwatched and watched [6; quick 2]"
    )
    parser.add_argument(
        "--no-ws-compression", action="store_true", help="subscribers refuse per-message deflate"
    )
    parser.add_argument(
        "--feed",
        choices=FEEDS,
        default="match",
        help="live part: the subscribers follow the match's own feed (/ws/matches/{id}: every frame "
        "batch) or the events feed (/ws/events: every match's start and end) [match]",
    )
    parser.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="live part: let the match (worker, bots) share every CPU with the gateway and the "
        "subscribers, instead of half the CPUs each",
    )
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--bots", type=int, default=36, help="podracing bots (a third as many battle bots)")
    parser.add_argument("--matches", type=int, default=3000)
    parser.add_argument("--only", choices=("http", "live"), help="run one part only")
    parser.add_argument("--keep-logs", action="store_true")
    parser.add_argument("--json", action="store_true", help="print only the JSON report")
    args = parser.parse_args(argv)
    quick = args.quick
    args.seconds = args.seconds or (3.0 if quick else 10.0)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if quick else 2.0)
    args.rounds = args.rounds or (1 if quick else 2)
    args.clients = args.clients or ([200] if quick else [200, 50])
    args.workers = args.workers or ([1] if quick else [1, 2])
    args.pairs = args.pairs or (2 if quick else 6)
    args.think = args.think if args.think is not None else (0.0 if quick else 1.0)
    report = run(args)
    print(json.dumps(report, indent=2, default=str))
    if not args.json:
        print_summary(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
