"""Platform benchmarks of the match runner, measured on this machine:

(a) per-turn cost of the runner's bot connection (SSRF-pinned transport, signing, size cap, JSON
    checks) against a bare keep-alive httpx POST of the same signed body to the same SDK bot,
    as a ratio (target <= 1.5); plus the whole turn loop (game + two bots in parallel) per turn;
(b) matches per minute with ONE worker (a real celery worker; a scratch PostgreSQL database and
    Redis database), at celery concurrency 1 (-c 1, the figure the target is about) and 2, each
    run with a fresh worker and the game's default config, for
      - HTTP bots: two SDK bot processes (podracing: the example bots; battle: the built-in
        aggressive and defensive bots);
      - hosted bots: the same two policies uploaded as "decide" bots in bubblewrap sandboxes;
    with, per run, the worker's CPU per match and per bot request (one request per player per
    turn), and the bots' CPU per match (the SDK processes; for hosted bots, the sandboxes: the
    worker's figure is then its own processes only). Podracing's -c 1 target: >= 60 matches/min.
    With --baseline every run is repeated with the worker on the previous bot client (the httpx
    path, shared/botclient/httpx_client.py: ARENA_BOT_CLIENT=httpx), and every hosted run once more
    with a sandbox started for every match (ARENA_SANDBOX_REUSE_MATCHES=1, "fresh"; by default a
    worker keeps each bot's sandbox between its matches), alternating with the current code, so all
    meet the same load. Targets: podracing HTTP -c 1 >= 60 matches/min with the worker's CPU per
    match <= 170 ms, -c 2 >= 300 matches/min, and hosted bots at -c 2 at least as fast as HTTP bots.

    .venv/bin/python -m scripts.bench_platform [--quick] [--baseline] [--games podracing,battle]

Needs PostgreSQL and Redis as configured for the tests (ARENA_TEST_PG_ADMIN, 127.0.0.1:6379).
Everything it starts is stopped, and its database dropped, whatever happens. The machine's load
average is printed with the figures: on a shared machine they move with it.
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
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.bench_procs import LoggedProcess, process_tree_cpu, processes
from shared.ports import free_port
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
    from shared.botclient import HttpBotConnection
    from shared.config import get_settings
    from shared.games.registry import get_game
    from shared.play.prometheus import PrometheusTurnMetrics
    from shared.play.turns import play_match

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
                metrics=PrometheusTurnMetrics,
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


BATTLE_SOURCE = (ROOT / "shared/games/battle/bots.py").read_text()


@dataclass(frozen=True)
class Pair:
    """The two bots of a game's matches: HTTP bot modules and the same policies as hosted sources."""

    http_modules: tuple[str, str]
    hosted_sources: tuple[str, str]


def _pairs() -> dict[str, Pair]:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    battle_modules = []
    for policy in ("aggressive", "defensive"):
        module = LOG_DIR / f"battle_{policy}_bot.py"
        module.write_text(f"from shared.games.battle.bots import {policy} as decide  # noqa: F401\n")
        battle_modules.append(str(module))
    return {
        "podracing": Pair(
            EXAMPLE_BOTS,
            (
                (ROOT / "shared/games/podracing/bots.py").read_text()
                + "\n\ndef decide(observation):\n    return runner(observation)\n",
                (ROOT / EXAMPLE_BOTS[1]).read_text(),
            ),
        ),
        "battle": Pair(
            (battle_modules[0], battle_modules[1]),
            tuple(  # type: ignore[arg-type]
                BATTLE_SOURCE + f"\n\ndef decide(observation):\n    return {policy}(observation)\n"
                for policy in ("aggressive", "defensive")
            ),
        ),
    }


CLIENTS = ("httptools", "httpx")
"""The runner's bot client (ARENA_BOT_CLIENT) and the previous one, the baseline of --baseline."""


@dataclass(frozen=True)
class Run:
    game: str
    kind: BotKind
    concurrency: int
    client: str
    matches: int
    fresh_sandboxes: bool = False
    """Hosted bots only: a sandbox started for every match (ARENA_SANDBOX_REUSE_MATCHES=1), the
    baseline of --baseline; otherwise the worker keeps each bot's sandbox between its matches."""

    @property
    def label(self) -> str:
        return f"{self.client}, fresh" if self.fresh_sandboxes else self.client

    @property
    def current(self) -> bool:
        """The current code: the current client, sandboxes kept (not a --baseline row)."""
        return self.client == CLIENTS[0] and not self.fresh_sandboxes


def _start_worker(run: Run) -> Proc:
    from services.match_runner.commands import worker_command

    name = f"bench-{secrets.token_hex(3)}@%h"
    env = {"ARENA_BOT_CLIENT": run.client}
    if run.fresh_sandboxes:
        env["ARENA_SANDBOX_REUSE_MATCHES"] = "1"
    return Proc([*worker_command(concurrency=run.concurrency, name=name), "--without-heartbeat"], env=env)


def _register_bots(game: str, kind: str, ports: list[int], secrets_by_bot: list[str]) -> list[uuid.UUID]:
    from shared.config import get_settings
    from shared.crypto import encrypt_secret
    from shared.db.models import Bot, BotVersion, User
    from shared.db.session import session_scope

    settings = get_settings()
    sources = _pairs()[game].hosted_sources
    with session_scope() as session:
        user = User(name=f"bench-{game}-{kind}-{secrets.token_hex(3)}")
        session.add(user)
        session.flush()
        bot_ids = []
        for index, secret in enumerate(secrets_by_bot):
            bot = Bot(
                owner_id=user.id,
                name=f"example-{kind}-{index}",
                game=game,
                kind=kind,
                endpoint=f"http://127.0.0.1:{ports[index]}" if kind == BotKind.HTTP else None,
                secret_encrypted=encrypt_secret(settings, secret),
            )
            session.add(bot)
            session.flush()
            if kind == BotKind.HOSTED:
                version = BotVersion(
                    bot_id=bot.id, number=1, source=sources[index], contract=HostedContract.DECIDE
                )
                session.add(version)
                session.flush()
                bot.current_version_id = version.id
            bot_ids.append(bot.id)
    return bot_ids


def _is_sandbox(pid: int) -> bool:
    """A hosted bot's process: bubblewrap, or the `process` backend's runner."""
    try:
        if Path(f"/proc/{pid}/comm").read_text().strip() == "bwrap":
            return True
        return b"hosted_runner" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def worker_own_cpu(pid: int) -> float:
    """CPU seconds of a worker's own processes (its sandboxes left out: see SandboxCpu)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pending = [pid]
    while pending:
        current = pending.pop()
        if current != pid and _is_sandbox(current):
            continue
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


class SandboxCpu:
    """CPU of the hosted bots' sandboxes while a run lasts: the usage of their cgroups, sampled every
    SAMPLE_S (a sandbox is killed with its cgroup, so no process is left to account for it); what a
    sandbox does after the last sample before its group is removed is missed. None without cgroups."""

    SAMPLE_S = 0.05

    def __init__(self) -> None:
        from shared.sandbox.cgroups import detect

        support = detect()
        parents = support.parents if support is not None else {}
        self._v1 = "cpuacct" in parents
        self._parent = parents.get("cpuacct") or parents.get("unified")
        self._first: dict[str, float] = {}
        """Usage of the groups already there when the run began; a later group counts from 0."""
        self._last: dict[str, float] = {}
        self._began = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _usage(self, group: Path) -> float:
        if self._v1:
            return int((group / "cpuacct.usage").read_text()) / 1e9
        for line in (group / "cpu.stat").read_text().splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
        return 0.0

    def _sample(self) -> None:
        from shared.sandbox.cgroups import OWNED_GROUP

        if self._parent is None:
            return
        for group in self._parent.iterdir():
            if OWNED_GROUP.fullmatch(group.name):
                with contextlib.suppress(OSError, ValueError):
                    usage = self._usage(group)
                    self._last[group.name] = max(usage, self._last.get(group.name, 0.0))
                    if not self._began:
                        self._first[group.name] = usage

    def _run(self) -> None:
        while not self._stop.wait(self.SAMPLE_S):
            self._sample()

    def __enter__(self) -> SandboxCpu:
        self._sample()  # the groups there already (a warm pool's) count from now on
        self._began = True
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def seconds(self) -> float | None:
        if self._parent is None:
            return None
        return sum(last - self._first.get(name, 0.0) for name, last in self._last.items())


def _measure_run(run: Run, timeout_s: float, bot_ids: list[uuid.UUID], bots: list[Proc]) -> dict[str, float]:
    """Queue `run.matches` default matches for one fresh worker and time them."""
    from sqlalchemy import func, select

    from shared.db.models import Match
    from shared.db.session import session_scope
    from shared.matches import create_match, enqueue_match

    with processes() as started:
        worker = _start_worker(run)
        started.append(worker)
        with session_scope() as session:
            match_ids: list[uuid.UUID] = []
            for seed in range(run.matches):
                order = bot_ids if seed % 2 == 0 else bot_ids[::-1]
                match_ids.append(create_match(session, game=run.game, bot_ids=order, seed=1000 + seed).id)
        worker.wait_for("ready.", timeout=60)  # we measure playing, not booting
        sandboxes = SandboxCpu().__enter__()
        worker0 = worker_own_cpu(worker.proc.pid)
        bots0 = sum(process_tree_cpu(p.proc.pid) for p in bots)
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
                failed = (
                    session.scalar(
                        select(func.count()).where(
                            Match.id.in_(match_ids), Match.status == MatchStatus.FAILED
                        )
                    )
                    or 0
                )
            if done == run.matches:
                break
            time.sleep(0.2)
        worker1 = worker_own_cpu(worker.proc.pid)
        bots_cpu = sum(process_tree_cpu(p.proc.pid) for p in bots) - bots0
        sandboxes.__exit__()
    if run.kind == BotKind.HOSTED:
        bots_cpu = sandboxes.seconds if sandboxes.seconds is not None else float("nan")
    # Matches per minute over the time the finished ones took (from queueing to the last finish).
    elapsed = (last_finish.timestamp() - started_wall) if last_finish is not None else timeout_s
    elapsed = max(elapsed, 1e-6)
    worker_cpu = worker1 - worker0
    return {
        "matches": float(done),
        "failed": float(failed or 0),
        "seconds": elapsed,
        "per_minute": done / elapsed * 60,
        "avg_turns": turns / done if done else 0.0,
        "worker_cpu_per_match": worker_cpu / done if done else 0.0,
        "worker_cpu_per_request": worker_cpu / (2 * turns) if turns else 0.0,
        "bots_cpu_per_match": bots_cpu / done if done else 0.0,
    }


def bench_throughput(runs: list[Run], timeout_s: float) -> list[dict[str, float]]:
    """One measurement per run, each with a fresh worker, on one scratch database."""
    import redis

    from shared.protocol.signing import generate_secret

    redis_client = redis.Redis.from_url(BENCH_REDIS_URL)
    redis_client.flushdb()
    _create_database()
    pairs = _pairs()
    results = []
    try:
        with processes() as http_bots:
            bot_ids: dict[tuple[str, str], list[uuid.UUID]] = {}
            bots: dict[str, list[Proc]] = {}
            for game in dict.fromkeys(run.game for run in runs):
                secrets_by_bot = [generate_secret() for _ in pairs[game].http_modules]
                first = len(http_bots)
                ports = [
                    start_bot(http_bots, module, secret)
                    for module, secret in zip(pairs[game].http_modules, secrets_by_bot, strict=True)
                ]
                bots[game] = http_bots[first:]
                for kind in BotKind:
                    bot_ids[game, kind] = _register_bots(game, kind, ports, secrets_by_bot)
            for run in runs:
                serving = bots[run.game] if run.kind == BotKind.HTTP else []
                results.append(_measure_run(run, timeout_s, bot_ids[run.game, run.kind], serving))
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


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # so that every finally block stops processes and drops the database


def main() -> int:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer turns and matches (a few minutes)")
    parser.add_argument("--turns", type=int, default=None, help="turns per round in (a) [300; quick 100]")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds in (a) [5; quick 3]")
    parser.add_argument("--matches", type=int, default=None, help="HTTP matches per run in (b) [20; quick 8]")
    parser.add_argument(
        "--hosted-matches", type=int, default=None, help="hosted matches per run in (b) [10; quick 4]"
    )
    parser.add_argument(
        "--games", default="podracing,battle", help="games of (b), comma-separated [podracing,battle]"
    )
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="also run every (b) measurement with the previous bot client (httpx), and hosted ones with "
        "a sandbox per match, alternating",
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="give up on one run after this many seconds"
    )
    parser.add_argument("--keep-logs", action="store_true", help=f"keep the processes' logs in {LOG_DIR}")
    args = parser.parse_args()
    quick = args.quick
    args.turns = args.turns or (100 if quick else 300)
    args.rounds = args.rounds or (3 if quick else 5)
    args.matches = args.matches or (8 if quick else 20)
    args.hosted_matches = args.hosted_matches or (4 if quick else 10)
    args.games = [game for game in args.games.split(",") if game]
    unknown = set(args.games) - {"podracing", "battle"}
    if unknown:
        parser.error(f"unknown game(s): {', '.join(sorted(unknown))}")
    try:
        return run(args)
    finally:
        if not args.keep_logs:
            shutil.rmtree(LOG_DIR, ignore_errors=True)
            with contextlib.suppress(OSError):
                LOG_DIR.parent.rmdir()


def _plan(args: argparse.Namespace) -> list[Run]:
    clients = CLIENTS if args.baseline else CLIENTS[:1]
    runs = []
    for game in args.games:
        for kind, matches in ((BotKind.HTTP, args.matches), (BotKind.HOSTED, args.hosted_matches)):
            for concurrency in (1, 2):
                variants = [Run(game, kind, concurrency, client, matches) for client in clients]
                if kind == BotKind.HOSTED and args.baseline:
                    variants.append(Run(game, kind, concurrency, CLIENTS[0], matches, fresh_sandboxes=True))
                runs += variants if concurrency == 1 else variants[::-1]  # each variant first in turn
    return runs


TARGETS: dict[tuple[str, BotKind, int], tuple[str, Callable[[dict[str, float]], bool]]] = {
    ("podracing", BotKind.HTTP, 1): (
        ">= 60; worker <= 170 ms",
        lambda result: result["per_minute"] >= 60 and result["worker_cpu_per_match"] <= 0.170,
    ),
    ("podracing", BotKind.HTTP, 2): (">= 300", lambda result: result["per_minute"] >= 300),
}
"""The targets of the current code's rows, by (game, bots, -c); hosted >= HTTP is checked apart."""


def _load() -> str:
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    load_at_start = _load()
    overhead = bench_overhead(args.turns, args.rounds)
    runs = _plan(args)
    results = bench_throughput(runs, args.timeout)
    print(
        f"\nplatform benchmark  (cpus: {os.cpu_count()}; load average 1/5/15 min at start {load_at_start}, "
        f"at end {_load()}; took {time.perf_counter() - started:.0f} s)"
    )
    rows = [
        ("(a) bare httpx keep-alive POST, ms/turn", f"{overhead['bare_ms']:.3f}", ""),
        ("(a) runner connection layer, ms/turn", f"{overhead['runner_ms']:.3f}", ""),
        ("(a) overhead ratio runner / bare", f"{overhead['ratio']:.2f}", "<= 1.5"),
        (
            f"(a) full turn loop, 2 bots, ms/turn ({int(overhead['loop_turns'])} turns)",
            f"{overhead['loop_ms']:.3f}",
            "",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  {'value':>9}  target")
    print("-" * (width + 20))
    for name, value, target in rows:
        print(f"{name.ljust(width)}  {value:>9}  {target}")
    print(
        "\n(b) one worker, default config, a fresh worker per row; '-c N': its celery concurrency; "
        "CPU per request: per bot request (2 a turn); bots' CPU: SDK processes, or sandboxes for hosted"
    )
    header = (
        f"{'game':<10}{'bots':<8}{'client':<18}{'-c':>3}{'matches/min':>13}{'matches':>9}{'turns':>7}"
        f"{'worker ms/match':>17}{'worker us/request':>19}{'bots ms/match':>15}  target"
    )
    print(header)
    print("-" * len(header))
    current = {
        (spec.game, spec.kind, spec.concurrency): result
        for spec, result in zip(runs, results, strict=True)
        if spec.current
    }
    ok = overhead["ratio"] <= 1.5
    for spec, result in zip(runs, results, strict=True):
        target = ""
        if spec.current and (goal := TARGETS.get((spec.game, spec.kind, spec.concurrency))):
            target, met = goal
            ok = ok and met(result)
        missing = spec.matches - int(result["matches"])
        notes = (f"  {int(result['failed'])} failed" if result["failed"] else "") + (
            f"  {missing} unfinished" if missing else ""
        )
        print(
            f"{spec.game:<10}{spec.kind:<8}{spec.label:<18}{spec.concurrency:>3}"
            f"{result['per_minute']:>13.1f}{int(result['matches']):>9}{result['avg_turns']:>7.0f}"
            f"{result['worker_cpu_per_match'] * 1e3:>17.0f}{result['worker_cpu_per_request'] * 1e6:>19.0f}"
            f"{result['bots_cpu_per_match'] * 1e3:>15.0f}  {target}{notes}"
        )
    for game in args.games:
        http, hosted = current.get((game, BotKind.HTTP, 2)), current.get((game, BotKind.HOSTED, 2))
        if http and hosted and http["per_minute"] > 0:
            ratio = hosted["per_minute"] / http["per_minute"]
            print(
                f"{game} -c 2, hosted / HTTP matches/min: {ratio:.2f}"
                + ("  (target >= 1)" if game == "podracing" else "")
            )
            if game == "podracing":
                ok = ok and ratio >= 1.0
    for game in args.games:
        if (single := current.get((game, BotKind.HTTP, 1))) is not None:
            idle = ceiling(single)
            print(f"{game} HTTP -c 1: CPU-bound ceiling on this machine if idle: {idle:.1f} matches/min")
    print("\nall targets met" if ok else "\nsome targets missed (see above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
