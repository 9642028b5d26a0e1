"""Hosted-bot timings: cold start to first answered turn, warm-pool hit, the cost of the Unix
socket against loopback TCP for the same bot, and the per-turn cost of freezing the sandbox
between turns (cgroup freezer: thaw before the request, freeze after).

    .venv/bin/python -m scripts.bench_sandbox [--starts 10] [--turns 400]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from shared.protocol.signing import Signer, generate_secret
from shared.sandbox.backends import SandboxedBot
from shared.sandbox.cgroups import SandboxCgroup, detect
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.pool import WarmPool

ROOT = Path(__file__).resolve().parents[1]
BOT_FILE = ROOT / "examples" / "bots" / "podracing_follower_bot.py"


def _pod(x: int, y: int) -> dict[str, object]:
    return {
        "x": x,
        "y": y,
        "vx": 10,
        "vy": -5,
        "angle": 30,
        "next_checkpoint": 1,
        "checkpoints_passed": 0,
        "boost_available": True,
        "shield_cooldown": 0,
    }


OBSERVATION = {
    "turn": 1,
    "player": 0,
    "laps": 3,
    "checkpoint_count": 4,
    "checkpoints": [[1000, 1000], [8000, 2000], [12000, 7000], [5000, 7000]],
    "max_thrust": 100,
    "pods": [_pod(1000, 1200), _pod(1000, 800)],
    "opponents": [_pod(1100, 1500), _pod(1100, 500)],
}


def _body(turn: int) -> bytes:
    return json.dumps(
        {
            "protocol": 1,
            "match_id": "bench",
            "game": "podracing",
            "player": 0,
            "turn": turn,
            "timeout_ms": 1000,
            "observation": OBSERVATION,
        }
    ).encode()


def _turn(client: httpx.Client, signer: Signer, url: str, turn: int) -> None:
    body = _body(turn)
    response = client.post(
        url,
        content=body,
        headers=signer.headers(f"bench-{turn}-{time.monotonic_ns()}", body, method="POST", path="/turn"),
    )
    if response.status_code != 200:
        raise RuntimeError(f"turn failed: {response.status_code} {response.text}")


def _uds_client(path: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=path, verify=False), timeout=5)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _require_started(bot: SandboxedBot) -> None:
    if not bot.alive or bot.start_error:
        raise RuntimeError(f"the sandbox did not start: {bot.start_error or 'it exited'}")


def cold_starts(source: str, secret: str, signer: Signer, n: int) -> tuple[list[float], list[float]]:
    ready, first = [], []
    for i in range(n):
        started = time.perf_counter()
        with SandboxedBot(source, secret=secret) as bot:
            _require_started(bot)
            ready.append(time.perf_counter() - started)
            with _uds_client(bot.socket_path) as client:
                _turn(client, signer, "http://bot/turn", i)
            first.append(time.perf_counter() - started)
    return ready, first


def pool_hits(source: str, secret: str, signer: Signer, n: int) -> list[float]:
    pool = WarmPool(per_key=1)
    times = []
    try:
        for i in range(n):
            pool.prewarm("bench", source, secret=secret)
            started = time.perf_counter()
            bot = pool.acquire("bench", source, secret=secret)
            _require_started(bot)
            with _uds_client(bot.socket_path) as client:
                _turn(client, signer, "http://bot/turn", i)
            times.append(time.perf_counter() - started)
            bot.close()
    finally:
        pool.close()
    return times


def round_trips(client: httpx.Client, signer: Signer, url: str, n: int) -> list[float]:
    for i in range(20):
        _turn(client, signer, url, i)
    times = []
    for i in range(n):
        started = time.perf_counter()
        _turn(client, signer, url, i)
        times.append(time.perf_counter() - started)
    return times


def frozen_round_trips(bot: SandboxedBot, client: httpx.Client, signer: Signer, n: int) -> list[float]:
    """Turn round trips with the sandbox thawed before and frozen after each, as in a match."""
    times = []
    for i in range(n):
        started = time.perf_counter()
        bot.thaw()
        _turn(client, signer, "http://bot/turn", i)
        bot.freeze()
        times.append(time.perf_counter() - started)
    bot.thaw()
    return times


def freeze_thaw_pairs(bot: SandboxedBot, n: int) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        bot.freeze()
        bot.thaw()
        times.append(time.perf_counter() - started)
    return times


def cgroup_lifecycle(n: int) -> tuple[list[float], list[float]]:
    """(create and configure a sandbox's groups, kill and remove them) with no process inside."""
    support = detect()
    if support is None:
        return [], []
    made, removed = [], []
    for _ in range(n):
        started = time.perf_counter()
        group = SandboxCgroup(support, SandboxLimits())
        made.append(time.perf_counter() - started)
        started = time.perf_counter()
        group.destroy()
        removed.append(time.perf_counter() - started)
    return made, removed


def _serve_plain(secret: str, where: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BENCH_SECRET": secret}
    command = [
        sys.executable,
        "-m",
        "shared.botsdk.run",
        "--module",
        str(BOT_FILE),
        "--secret-env",
        "BENCH_SECRET",
    ]
    return subprocess.Popen(command + where, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)


def _wait_for(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError("the bot did not come up")
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--turns", type=int, default=400)
    args = parser.parse_args()
    secret = generate_secret()
    signer = Signer(secret)
    source = BOT_FILE.read_text()
    SandboxedBot(source, secret=secret).close()  # resolve the runtime and stage files once

    rows: list[tuple[str, list[float]]] = []
    ready, first = cold_starts(source, secret, signer, args.starts)
    rows += [("cold start: sandbox ready", ready), ("cold start: first answered turn", first)]
    rows.append(("warm pool hit: first answered turn", pool_hits(source, secret, signer, args.starts)))

    with SandboxedBot(source, secret=secret) as bot, _uds_client(bot.socket_path) as client:
        sandbox_uds = round_trips(client, signer, "http://bot/turn", args.turns)
        if bot.cgroup is not None:
            frozen = frozen_round_trips(bot, client, signer, args.turns)
            rows.append(("turn: sandboxed, frozen between turns", frozen))
            rows.append(("freeze + thaw (cgroup freezer), no turn", freeze_thaw_pairs(bot, args.turns)))
    made, removed = cgroup_lifecycle(args.starts * 5)
    if made:
        rows += [("cgroups: create and configure", made), ("cgroups: kill and remove", removed)]
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "bot.sock")
        proc = _serve_plain(secret, ["--unix-socket", sock])
        try:
            _wait_for(lambda: os.path.exists(sock))
            with _uds_client(sock) as client:
                plain_uds = round_trips(client, signer, "http://bot/turn", args.turns)
        finally:
            proc.kill()
            proc.wait()
    port = 18000 + os.getpid() % 1000
    proc = _serve_plain(secret, ["--port", str(port)])
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    try:
        with httpx.Client(transport=httpx.HTTPTransport(socket_options=nodelay), timeout=5) as client:

            def up() -> bool:
                try:
                    client.get(f"http://127.0.0.1:{port}/health")
                    return True
                except httpx.TransportError:
                    return False

            _wait_for(up)
            plain_tcp = round_trips(client, signer, f"http://127.0.0.1:{port}/turn", args.turns)
    finally:
        proc.kill()
        proc.wait()
    rows += [
        ("turn: sandboxed bot, Unix socket", sandbox_uds),
        ("turn: same bot unsandboxed, Unix socket", plain_uds),
        ("turn: same bot unsandboxed, loopback TCP", plain_tcp),
    ]

    print(f"{'measure':44} {'n':>5} {'median ms':>10} {'p95 ms':>8} {'p99 ms':>8}")
    for name, values in rows:
        ms = [v * 1000 for v in values]
        median, p95, p99 = statistics.median(ms), _pct(ms, 0.95), _pct(ms, 0.99)
        print(f"{name:44} {len(ms):5d} {median:10.2f} {p95:8.2f} {p99:8.2f}")
    ratio = statistics.median(sandbox_uds) / statistics.median(plain_tcp)
    ratio_plain = statistics.median(plain_uds) / statistics.median(plain_tcp)
    print(f"median ratio sandboxed-UDS / TCP: {ratio:.2f}; unsandboxed-UDS / TCP: {ratio_plain:.2f}")
    target = statistics.median(first) * 1000
    verdict = "OK" if target < 300 else "MISSED"
    print(f"cold start to first turn median {target:.0f} ms (target < 300 ms): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
