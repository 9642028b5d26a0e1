"""What live frames cost a match: podracing matches per minute with live publishing off and on,
measured in the same run (target: at most 5% apart).

The match runner's own turn loop (shared.play.turns.play_match, what a worker runs, with its metrics)
plays full podracing matches in this process between two SDK bot processes on loopback (the
example runner and follower bots, over HTTP, signed). Three cases, interleaved round by round so
that drift in the machine's load hits them alike:

- off: no turn observer (ARENA_LIVE_FRAMES_ENABLED=0);
- on, unheard: the runner's FrameAnnouncer publishes one `match.frames` per turn to Redis through
  the process's publisher (its queue and sender thread), nobody subscribed;
- on, watched: the same while a subscriber process reads and parses every frame (an EventStream on
  `match:*`, as the gateway's hub does for its WebSocket viewers).

    .venv/bin/python -m scripts.bench_live [--rounds 5] [--matches 4]

Needs Redis at 127.0.0.1:6379 (database ARENA_BENCH_REDIS_DB, default 10). Everything it starts is
stopped whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid

os.environ.setdefault("ARENA_DEV_MODE", "1")
os.environ["ARENA_REDIS_URL"] = f"redis://127.0.0.1:6379/{os.environ.get('ARENA_BENCH_REDIS_DB', '10')}"
os.environ.pop("ARENA_EVENTS_REDIS_URL", None)

from scripts.bench_platform import EXAMPLE_BOTS, Proc, start_bot
from scripts.bench_procs import processes

CASES = ("off", "on, unheard", "on, watched")


async def _matches(ports: list[int], secret: str, seeds: list[int], live: bool) -> tuple[float, float, int]:
    """Wall seconds and this process's CPU seconds (every thread: the sender's too) to play these
    matches back to back, and the turns played."""
    from services.match_runner.announce import FrameAnnouncer
    from shared.botclient import HttpBotConnection
    from shared.config import get_settings
    from shared.events import get_publisher
    from shared.games.registry import get_game
    from shared.play.prometheus import PrometheusTurnMetrics
    from shared.play.turns import play_match

    settings = get_settings()
    game = get_game("podracing")
    clients = [await HttpBotConnection.open(f"http://127.0.0.1:{p}", secret, settings) for p in ports]
    turns = 0
    try:
        started, cpu = time.perf_counter(), time.process_time()
        for seed in seeds:
            match_id = uuid.uuid4()
            announcer = FrameAnnouncer(match_id, game.name) if live else None
            played = await play_match(
                game,
                match_id=str(match_id),
                seed=seed,
                config={},
                clients=clients,
                settings=settings,
                on_turn=announcer,
                metrics=PrometheusTurnMetrics,
            )
            if announcer is not None:
                announcer.flush()
            turns += played.turns
        get_publisher().flush(5)  # sending what was queued is part of the cost
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        for client in clients:
            await client.aclose()
    return elapsed, cpu, turns


def _subscriber() -> Proc:
    """A process that reads every frame (parsed into typed events, as the gateway does)."""
    proc = Proc([sys.executable, "-u", "-c", SUBSCRIBER, "subscriber"])  # the last word names its log
    proc.wait_for("subscribed", timeout=20)
    return proc


SUBSCRIBER = """
import asyncio
from shared.events import EventStream

async def read_everything():
    async with EventStream(["match:*"]) as stream:
        print("subscribed", flush=True)
        count = 0
        async for event in stream:
            count += 1
            if count % 1000 == 0:
                print("read", count, flush=True)

asyncio.run(read_everything())
"""


def run(rounds: int, matches: int) -> int:
    from shared.protocol.signing import generate_secret

    secret = generate_secret()
    wall: dict[str, list[float]] = {case: [] for case in CASES}
    cpu: dict[str, float] = dict.fromkeys(CASES, 0.0)
    turns_played: dict[str, int] = dict.fromkeys(CASES, 0)
    with processes() as started:
        ports = [start_bot(started, module, secret) for module in EXAMPLE_BOTS]
        asyncio.run(_matches(ports, secret, [999], live=True))  # warm up: connections, sender thread
        for round_ in range(rounds):
            seeds = [round_ * matches + i for i in range(matches)]
            order = CASES[round_ % 3 :] + CASES[: round_ % 3]  # no case always runs first
            for case in order:
                subscriber = _subscriber() if case == "on, watched" else None
                try:
                    elapsed, used, turns = asyncio.run(_matches(ports, secret, seeds, live=case != "off"))
                finally:
                    if subscriber is not None:
                        subscriber.stop()
                wall[case].append(elapsed)
                cpu[case] += used
                turns_played[case] += turns
    print(f"podracing, default config, {rounds} rounds x {matches} matches per case (same seeds), cases")
    print("interleaved in rotating order; 'vs off' is the median of the per-round ratios")
    print(f"{'case':<12} {'matches/min':>12} {'vs off':>7} {'wall ms/turn':>13} {'CPU ms/turn':>12}")
    ratios: dict[str, float] = {}
    for case in CASES:
        per_minute = statistics.median(60 * matches / t for t in wall[case])
        ratios[case] = statistics.median(off / t for off, t in zip(wall["off"], wall[case], strict=True))
        print(
            f"{case:<12} {per_minute:>12.1f} {ratios[case]:>7.3f} "
            f"{1000 * sum(wall[case]) / turns_played[case]:>13.3f} "
            f"{1000 * cpu[case] / turns_played[case]:>12.3f}"
        )
    verdict = "within" if ratios["on, watched"] >= 0.95 else "OUTSIDE"
    print(f"matches/min with live publishing, watched, vs off: {ratios['on, watched']:.3f} ({verdict} 5%)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--matches", type=int, default=2)
    args = parser.parse_args()
    return run(args.rounds, args.matches)


if __name__ == "__main__":
    sys.exit(main())
