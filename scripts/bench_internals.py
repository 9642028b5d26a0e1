"""What the speed shortcuts buy end to end, each measured with and without it in the same run:

(a) battle: whole matches of the built-in bots in process (one core), with the direct chipmunk calls
    of shared/games/battle/pymunk_fast.py and with pymunk's public API only; matches per minute, and
    a check that both play every match bit for bit the same;
(b) HTTP match: whole podracing matches through the runner's turn loop (`play_match`, on uvloop as
    in the worker) against two SDK bot processes over loopback, with the runner's bot client
    (`shared.botclient.http1`: httptools on an asyncio protocol) and with the httpx path it replaced
    (`shared.botclient.httpx_client.SocketTransport`: httpcore's pool on a plain asyncio socket
    backend); turns per second and CPU per turn (runner, and runner plus bots);
(c) SDK bot server: sequential turns from the runner's client to the SDK's asyncio server
    (shared.botsdk.server) and to the thread-per-connection http.server it replaced
    (shared.botsdk.threaded); turns per second and server CPU per turn (user and system);
(d) access log: CPU per request line of the gateway's access log (services/gateway/access_log.py:
    the line built from the ASGI scope, batched writes) and of uvicorn's own access logger as
    uvicorn configures it (a write and a flush per line), both to a file with the secret-masking
    record factory installed, as in the gateway;
(e) bot client: the runner's CPU per turn request (`HttpBotConnection.turn`: JSON, signing, the
    HTTP exchange, strict decoding), sequential turns against one SDK bot process over loopback,
    process CPU time (time.process_time) over each round: the httptools client, the httpx path it
    replaced, aiohttp's client when aiohttp is installed (the other C-parser candidate, measured,
    not used), and the same turns with no I/O at all (a canned answer: the floor); on uvloop, as
    in the worker, and on asyncio's own loop.

    .venv/bin/python -m scripts.bench_internals [--quick] [--only battle|http|sdk|log|client]

Needs nothing but this machine (no database, no Redis); about 2 minutes (--quick, about 30 s, only
checks that it runs: too few matches for steady ratios). The variants alternate match by match (or
round by round of 300 turns), so load from other jobs hits both alike; figures still move between
runs on a shared machine, the ratios less.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from shared.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_BOTS = ("examples/bots/podracing_runner_bot.py", "examples/bots/podracing_follower_bot.py")
os.environ.setdefault("ARENA_DEV_MODE", "1")
os.environ.setdefault("ARENA_SECRET_KEY", "bench-" + secrets.token_hex(16))


def ratio_line(label: str, with_: float, without: float, unit: str, higher_is_better: bool) -> str:
    gain = (with_ / without - 1) if higher_is_better else (without / with_ - 1)
    return f"  {label:<34}{with_:12.2f}{without:12.2f} {unit:<14}gain {100 * gain:+6.1f}%"


# ----------------------------------------------------------------------------------- (a) battle
BATTLE_SCENARIOS = {
    "3v3": {},
    "10v10": {"units_per_player": 10, "map_width": 60.0, "map_height": 36.0},
}
BATTLE_PAIRS = [("aggressive", "defensive"), ("sniper", "aggressive"), ("defensive", "sniper")]


def _battle_match(seed: int, config: dict[str, Any], pair: tuple[str, str]) -> tuple[float, float, str]:
    """(CPU s, wall s, digest of everything the match produced); the digest is not timed."""
    from shared.games.battle.bots import BOTS
    from shared.games.battle.game import BattleGame

    digest = hashlib.sha256()
    bots = [BOTS[pair[0]], BOTS[pair[1]]]
    cpu, wall = time.process_time(), time.perf_counter()
    match = BattleGame().create_match(seed, config)
    while not match.finished:
        observations = [match.observation(p) for p in range(2)]
        result = match.step([bot(o) for bot, o in zip(bots, observations, strict=True)])
        cpu, wall = cpu - time.process_time(), wall - time.perf_counter()  # pause the clocks
        events = [e.to_json() for e in result.events]
        digest.update(json.dumps([observations, events, result.frames], sort_keys=True).encode())
        cpu, wall = cpu + time.process_time(), wall + time.perf_counter()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    digest.update(repr(match.result()).encode())
    return cpu, wall, digest.hexdigest()


def bench_battle(matches: dict[str, int]) -> None:
    from shared.games.battle import pymunk_fast

    print(f"\n(a) battle, built-in bots in process, one core; direct chipmunk calls: {pymunk_fast.active()}")
    if not pymunk_fast.active():
        print("  this pymunk is not the one pymunk_fast was written for: both variants are the public API")
    print(f"  {'':<34}{'direct':>12}{'public':>12}")
    for name, config in BATTLE_SCENARIOS.items():
        totals = {"direct": [0.0, 0.0], "public": [0.0, 0.0]}
        ratios = []  # per seed: public CPU / direct CPU, steadier than the totals on a busy machine
        same = True
        for i in range(matches[name]):
            seed, pair = 1000 + i, BATTLE_PAIRS[i % len(BATTLE_PAIRS)]
            order = ("direct", "public") if i % 2 == 0 else ("public", "direct")
            digests, cpus = {}, {}
            for variant in order:
                context = pymunk_fast.public_api_only() if variant == "public" else contextlib.nullcontext()
                with context:
                    cpus[variant], wall, digests[variant] = _battle_match(seed, config, pair)
                totals[variant][0] += cpus[variant]
                totals[variant][1] += wall
            ratios.append(cpus["public"] / cpus["direct"])
            same = same and digests["direct"] == digests["public"]
        n = matches[name]
        (dc, dw), (pc, pw) = totals["direct"], totals["public"]
        print(f"  {name}: {n} matches each way, identical results: {same}")
        print(ratio_line("matches/min (CPU time)", 60 * n / dc, 60 * n / pc, "", True))
        print(ratio_line("matches/min (wall clock)", 60 * n / dw, 60 * n / pw, "", True))
        print(f"  {'median match, public/direct CPU':<58}gain {100 * (statistics.median(ratios) - 1):+6.1f}%")


# ----------------------------------------------------------------------------------- bot processes
def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def _bot_process(args: list[str], secret: str) -> Iterator[tuple[int, int]]:
    """A bot server on a free loopback port: yields (port, pid); killed on exit whatever happens."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, *args, "--port", str(port)],
        cwd=ROOT,
        env={**os.environ, "ARENA_BOT_SECRET": secret, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        if "serving" not in line:
            raise RuntimeError(f"bot did not start: {line}{proc.stderr.read().decode()[-2000:]}")
        yield port, proc.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class AiohttpTransport:
    """aiohttp's client (its C HTTP parser) with the runner's rules, for (e): measured, not used.
    Plain HTTP to a loopback address only."""

    def __init__(self) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=100, keepalive_timeout=5.0, use_dns_cache=False),
            auto_decompress=False,
            trust_env=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            timeout=aiohttp.ClientTimeout(total=None),
        )

    async def exchange(
        self,
        method: str,
        url: Any,
        _target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        max_bytes: int,
    ) -> tuple[int, bytes]:
        from shared.botclient.http1 import ExchangeError

        pairs = [(name.decode(), value.decode()) for name, value in headers]
        async with self._session.request(
            method, str(url), data=body or None, headers=pairs, allow_redirects=False
        ) as response:
            if 300 <= response.status < 400:
                raise ExchangeError(f"HTTP {response.status} redirect (redirects are not followed)")
            if response.content_length is not None and response.content_length > max_bytes:
                raise ExchangeError(f"answer is larger than {max_bytes} bytes")
            data = b""
            async for chunk in response.content.iter_any():
                data += chunk
                if len(data) > max_bytes:
                    raise ExchangeError(f"answer is larger than {max_bytes} bytes")
            return response.status, data

    async def aclose(self) -> None:
        await self._session.close()


class CannedTransport:
    """No I/O: every request gets the same answer at once, for the floor of (e)."""

    def __init__(self, answer: bytes) -> None:
        self._answer = answer

    async def exchange(self, *_request: Any) -> tuple[int, bytes]:
        return 200, self._answer

    async def aclose(self) -> None:
        pass


CLIENTS = ("httptools", "httpx")
"""The runner's bot client and the httpx path it replaced (shared/botclient/httpx_client.py)."""


def _connection(port: int, secret: str, client: str = "httptools") -> Any:
    from shared.botclient import HttpBotConnection
    from shared.botclient.http1 import Http1Transport, TcpDialer
    from shared.botclient.httpx_client import SocketTransport
    from shared.config import get_settings

    transports: dict[str, Callable[[], Any]] = {
        "httptools": lambda: Http1Transport(TcpDialer("127.0.0.1", port)),
        "httpx": SocketTransport,
        "aiohttp": AiohttpTransport,
        "no I/O": lambda: CannedTransport(b'{"action": {"pods": [{"x": 8000, "y": 4500, "thrust": 100}]}}'),
    }
    return HttpBotConnection(
        f"http://127.0.0.1:{port}",
        secret,
        transports[client](),
        max_response_bytes=get_settings().max_response_bytes,
    )


def _run_on_uvloop(coro_fn: Callable[[], Any]) -> Any:
    """As the worker plays matches: on uvloop when it is installed."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro_fn())
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro_fn())


# ----------------------------------------------------------------------------------- (b) HTTP match
def bench_http(matches: int) -> None:
    from shared.config import get_settings
    from shared.games.registry import get_game
    from shared.play.prometheus import PrometheusTurnMetrics
    from shared.play.turns import play_match
    from shared.protocol.signing import generate_secret

    secret = generate_secret()
    settings = get_settings()
    game = get_game("podracing")
    bot_args = [["-m", "shared.botsdk.run", "--module", module] for module in EXAMPLE_BOTS]
    totals = {client: [0.0, 0.0, 0.0, 0] for client in CLIENTS}  # wall, runner CPU, bots CPU, turns
    with (
        _bot_process(bot_args[0], secret) as (port_a, pid_a),
        _bot_process(bot_args[1], secret) as (
            port_b,
            pid_b,
        ),
    ):

        async def one_match(seed: int, variant: str, timed: bool = True) -> None:
            clients = [_connection(p, secret, variant) for p in (port_a, port_b)]
            try:
                for client in clients:  # connect and warm up outside the timed part
                    await client.health(5.0)
                bots0 = _cpu_seconds(pid_a) + _cpu_seconds(pid_b)
                cpu0, wall0 = time.process_time(), time.perf_counter()
                played = await play_match(
                    game,
                    match_id=f"bench-{seed}",
                    seed=seed,
                    config={},
                    clients=clients,
                    settings=settings,
                    metrics=PrometheusTurnMetrics,
                )
                if not timed:
                    return
                row = totals[variant]
                row[0] += time.perf_counter() - wall0
                row[1] += time.process_time() - cpu0
                row[2] += _cpu_seconds(pid_a) + _cpu_seconds(pid_b) - bots0
                row[3] += played.turns
            finally:
                for client in clients:
                    await client.aclose()

        for variant in CLIENTS:  # first-use costs (imports, caches) in neither variant's figures
            _run_on_uvloop(functools.partial(one_match, -1, variant, timed=False))
        for seed in range(matches):
            for variant in CLIENTS if seed % 2 == 0 else CLIENTS[::-1]:
                _run_on_uvloop(functools.partial(one_match, seed, variant))
    (sw, sc, sb, st), (dw, dc, db, dt) = totals["httptools"], totals["httpx"]
    print(f"\n(b) HTTP match: podracing, 2 SDK bots over loopback, {matches} matches each way ({st} turns)")
    print(f"  {'':<34}{'httptools':>12}{'httpx':>12}")
    print(ratio_line("turns/s (wall clock)", st / sw, dt / dw, "", True))
    print(ratio_line("runner CPU per turn", 1000 * sc / st, 1000 * dc / dt, "ms", False))
    print(ratio_line("runner + bots CPU per turn", 1000 * (sc + sb) / st, 1000 * (dc + db) / dt, "ms", False))


# ----------------------------------------------------------------------------------- (c) SDK server
def _podracing_observations(count: int) -> list[Any]:
    from shared.games.podracing.bots import runner
    from shared.games.registry import get_game

    game, seed = get_game("podracing"), 1
    observations: list[Any] = []
    while len(observations) < count:
        match = game.create_match(seed, {}, 2)
        while not match.finished and len(observations) < count:
            observations.append(match.observation(0))
            match.step([runner(match.observation(0)), runner(match.observation(1))])
        seed += 1
    return observations


def serve_threaded(port: int) -> None:
    """The SDK's previous server (a thread per connection) with the built-in runner policy."""
    from shared.botsdk.threaded import make_threaded_server
    from shared.games.podracing.bots import runner

    httpd = make_threaded_server(runner, secret=os.environ["ARENA_BOT_SECRET"], port=port)
    print("serving", file=sys.stderr, flush=True)
    httpd.serve_forever()


def _cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK"), int(fields[12]) / os.sysconf("SC_CLK_TCK")


def bench_sdk(turns: int, rounds: int) -> None:
    from shared.protocol.signing import generate_secret

    secret = generate_secret()
    observations = _podracing_observations(turns)
    servers = {
        "asyncio": ["-m", "shared.botsdk.run", "--module", EXAMPLE_BOTS[0]],
        "threaded": ["-m", "scripts.bench_internals", "--serve-threaded"],
    }
    totals = {name: [0.0, 0.0, 0.0, 0] for name in servers}  # wall, server user and system CPU, turns
    with _bot_process(servers["asyncio"], secret) as new, _bot_process(servers["threaded"], secret) as old:
        processes = {"asyncio": new, "threaded": old}

        async def turns_against(port: int, pid: int, row: list[Any]) -> None:
            connection = _connection(port, secret)
            async with connection:
                await connection.health(5.0)
                (user0, system0), wall0 = _cpu_split(pid), time.perf_counter()
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
                (user1, system1), wall1 = _cpu_split(pid), time.perf_counter()
                row[0] += wall1 - wall0
                row[1] += user1 - user0
                row[2] += system1 - system0
                row[3] += len(observations)

        for port, pid in processes.values():  # warm-up rounds, not counted
            _run_on_uvloop(functools.partial(turns_against, port, pid, [0.0, 0.0, 0.0, 0]))
        for i in range(rounds):
            for name in ("asyncio", "threaded") if i % 2 == 0 else ("threaded", "asyncio"):
                port, pid = processes[name]
                _run_on_uvloop(functools.partial(turns_against, port, pid, totals[name]))
    (nw, nu, ns, nt), (ow, ou, os_, ot) = totals["asyncio"], totals["threaded"]
    print(f"\n(c) SDK bot server, sequential turns from the runner's client, {nt:.0f} turns each way")
    print(f"  {'':<34}{'asyncio':>12}{'threaded':>12}")
    print(ratio_line("turns/s (wall clock)", nt / nw, ot / ow, "", True))
    print(ratio_line("server CPU per turn", 1e6 * (nu + ns) / nt, 1e6 * (ou + os_) / ot, "us", False))
    print(ratio_line("  of which user", 1e6 * nu / nt, 1e6 * ou / ot, "us", False))
    print(ratio_line("  of which system", 1e6 * ns / nt, 1e6 * os_ / ot, "us", False))


# ----------------------------------------------------------------------------------- (d) access log
def _uvicorn_access_logger(stream: Any) -> logging.Logger:
    """uvicorn's access logger with uvicorn's own logging configuration, writing to `stream`."""
    import copy
    import logging.config

    from uvicorn.config import LOGGING_CONFIG

    logging.config.dictConfig(copy.deepcopy(LOGGING_CONFIG))
    logger = logging.getLogger("uvicorn.access")
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(stream)
    logger.setLevel(logging.INFO)
    return logger


def bench_access_log(lines: int, rounds: int) -> None:
    import tempfile

    from services.gateway.access_log import install_access_log, log_request, remove_access_log
    from services.gateway.logging_filter import install_secret_filter

    install_secret_filter()
    scope = {
        "type": "http",
        "client": ("203.0.113.9", 51234),
        "method": "GET",
        "path": "/api/v1/leaderboard/battle",
        "query_string": b"limit=50&offset=0",
        "http_version": "1.1",
    }
    with tempfile.TemporaryDirectory() as tmp:
        ours_out = open(Path(tmp) / "ours.log", "w")  # noqa: SIM115 (closed below)
        theirs_out = open(Path(tmp) / "uvicorn.log", "w")  # noqa: SIM115
        theirs = _uvicorn_access_logger(theirs_out)

        def uvicorn_lines() -> float:
            theirs.setLevel(logging.INFO)  # install_access_log quiets it, as in the gateway
            started = time.process_time()
            for _ in range(lines):
                theirs.info(
                    '%s - "%s %s HTTP/%s" %d',
                    f"{scope['client'][0]}:{scope['client'][1]}",
                    scope["method"],
                    "/api/v1/leaderboard/battle?limit=50&offset=0",
                    scope["http_version"],
                    200,
                )
            return time.process_time() - started

        def gateway_lines() -> float:
            started = time.process_time()
            for _ in range(lines):
                began = time.perf_counter()
                log_request(scope, 200, time.perf_counter() - began)
            return time.process_time() - started

        ours: list[float] = []
        uvicorn: list[float] = []
        for _ in range(rounds):  # alternating, so other load on the machine hits both alike
            uvicorn.append(uvicorn_lines())
            handler = install_access_log(flush_interval_s=1.0, stream=ours_out)
            ours.append(gateway_lines())
            remove_access_log(handler)
        ours_out.close()
        theirs_out.close()
    per_ours = statistics.median(ours) / lines * 1e6
    per_uvicorn = statistics.median(uvicorn) / lines * 1e6
    print(f"(d) access log, {lines} lines x {rounds} rounds     gateway     uvicorn")
    print(ratio_line("CPU per request line", per_ours, per_uvicorn, "us", higher_is_better=False))


# ----------------------------------------------------------------------------------- (e) bot client
def bench_client(turns: int, rounds: int) -> None:
    import importlib.util

    from shared.protocol.signing import generate_secret

    secret = generate_secret()
    observations = _podracing_observations(turns)
    clients = [*CLIENTS, *(["aiohttp"] if importlib.util.find_spec("aiohttp") else []), "no I/O"]
    loops: dict[str, Callable[[Callable[[], Any]], Any]] = {
        "uvloop": _run_on_uvloop,
        "asyncio": lambda coro_fn: asyncio.run(coro_fn()),
    }
    cpu: dict[tuple[str, str], list[float]] = {(loop, client): [] for loop in loops for client in clients}
    wall: dict[tuple[str, str], list[float]] = {key: [] for key in cpu}
    module = ["-m", "shared.botsdk.run", "--module", EXAMPLE_BOTS[0]]
    with _bot_process(module, secret) as (port, _pid):

        async def round_of_turns(client: str, key: tuple[str, str] | None) -> None:
            async with _connection(port, secret, client) as connection:
                for turn in range(3):  # connected and warm before the clock starts
                    await connection.turn(
                        match_id="warm",
                        game="podracing",
                        player=0,
                        turn=turn,
                        timeout_ms=5000,
                        observation=observations[turn],
                    )
                cpu0, wall0 = time.process_time(), time.perf_counter()
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
                        raise RuntimeError(f"{client}: bot failed: {reply.error}")
                if key is not None:
                    cpu[key].append((time.process_time() - cpu0) / len(observations))
                    wall[key].append((time.perf_counter() - wall0) / len(observations))

        for run in loops.values():
            for client in clients:  # first-use costs (imports, caches) in no figure
                run(functools.partial(round_of_turns, client, None))
        for i in range(rounds):  # alternating, so other load on the machine hits every client alike
            for loop, run in loops.items():
                for client in clients if i % 2 == 0 else clients[::-1]:
                    run(functools.partial(round_of_turns, client, (loop, client)))
    print(f"\n(e) bot client: {turns} sequential turns x {rounds} rounds against one SDK bot over loopback;")
    print("  runner CPU per turn request, us (median of the rounds; min-max), and wall clock per turn")
    for loop in loops:
        base = statistics.median(cpu[(loop, "httptools")])
        for client in clients:
            samples = [1e6 * s for s in cpu[(loop, client)]]
            per_turn, wall_us = statistics.median(samples), 1e6 * statistics.median(wall[(loop, client)])
            print(
                f"  {loop:<8}{client:<10}{per_turn:9.1f} us CPU ({min(samples):.1f}-{max(samples):.1f})"
                f"  {wall_us:8.1f} us wall   x{per_turn / (1e6 * base):.2f} of httptools"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: too few matches to quote")
    parser.add_argument("--only", choices=("battle", "http", "sdk", "log", "client"), action="append")
    parser.add_argument("--serve-threaded", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_threaded:
        serve_threaded(args.port)
        return
    only = set(args.only or ("battle", "http", "sdk", "log", "client"))
    print("what each speed shortcut buys end to end, with and without it in the same run")
    if "battle" in only:
        cores = os.sched_getaffinity(0) if hasattr(os, "sched_setaffinity") else None
        if cores:
            os.sched_setaffinity(0, {min(cores)})  # the battle runs on one core; the bots need more
        bench_battle({"3v3": 6, "10v10": 2} if args.quick else {"3v3": 48, "10v10": 12})
        if cores:
            os.sched_setaffinity(0, cores)
    if "http" in only:
        bench_http(4 if args.quick else 16)
    if "sdk" in only:
        bench_sdk(300, 4 if args.quick else 20)
    if "log" in only:
        bench_access_log(2_000 if args.quick else 20_000, 3 if args.quick else 9)
    if "client" in only:
        bench_client(300 if args.quick else 1000, 2 if args.quick else 8)


if __name__ == "__main__":
    main()
