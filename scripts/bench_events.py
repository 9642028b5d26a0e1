"""What publishing a live event costs the caller (the match runner), per call.

Run: `.venv/bin/python -m scripts.bench_events [--redis-url URL] [--calls N]`. Times `publish()` of a
finished-match event, call by call, against a no-op function with the same signature (the baseline,
measured in the same run), in three states of Redis: healthy, down (a closed loopback port) and
stalled (a port that accepts connections and never answers). For contrast it times a plain
synchronous PUBLISH, the design the background thread avoids. It also prints what building the event
costs and how fast the background thread drains a burst. Events go to a topic nobody listens to.
"""

from __future__ import annotations

import argparse
import functools
import socket
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from shared.config import Settings, get_settings, installed_settings
from shared.events import (
    Event,
    EventPublisher,
    MatchFinished,
    RatingSnapshot,
    SeatResult,
    channel,
)
from shared.ports import free_port
from shared.states import MatchKind, MatchStatus

TOPIC = f"bench:{uuid.uuid4().hex}"


def finished_event() -> MatchFinished:
    """A two-player rated result, the largest event the runner publishes today."""
    rating = RatingSnapshot(mu=25.0, sigma=8.3, ordinal=0.1)
    return MatchFinished(
        match_id=uuid.uuid4(),
        game="podracing",
        kind=MatchKind.LADDER,
        status=MatchStatus.FINISHED,
        rated=True,
        turns=180,
        end_reason="race_finished",
        participants=[
            SeatResult(
                slot=slot,
                bot_id=uuid.uuid4(),
                name=f"bot-{slot}",
                rank=slot,
                score=3.0 - slot,
                rating_before=rating,
                rating_after=rating,
            )
            for slot in range(2)
        ],
    )


def per_call(
    call: Callable[[Event, str], object],
    event: Event,
    calls: int,
    pause: Callable[[], object] | None = None,
    every: int = 500,
) -> list[float]:
    """Each call's duration; `pause` (untimed) runs after every `every` calls."""
    costs = []
    clock = time.perf_counter
    for index in range(calls):
        start = clock()
        call(event, TOPIC)
        costs.append(clock() - start)
        if pause is not None and index % every == every - 1:
            pause()
    return costs


def noop(_event: Event, _topic: str) -> bool:
    return True


def summary(costs: list[float]) -> tuple[float, float, float, float]:
    """(median, mean, p99, max) in microseconds."""
    ordered = sorted(costs)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (statistics.median(costs) * 1e6, statistics.fmean(costs) * 1e6, p99 * 1e6, ordered[-1] * 1e6)


@contextmanager
def stalled_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1024)
        yield sock.getsockname()[1]


def sync_publisher(url: str) -> Callable[[Event, str], object]:
    """PUBLISH on the caller's thread with the same short timeouts; errors swallowed."""
    client = redis.Redis.from_url(
        url, socket_connect_timeout=0.25, socket_timeout=0.5, retry=Retry(NoBackoff(), 0)
    )

    def call(event: Event, topic: str) -> object:
        try:
            return client.publish(channel(topic), event.to_json())
        except redis.RedisError:
            return None

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    settings = get_settings()
    parser.add_argument("--redis-url", default=settings.events_redis_url or settings.redis_url)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    event = finished_event()

    started = time.perf_counter()
    for _ in range(1000):
        finished_event()
    build_us = (time.perf_counter() - started) * 1e3
    print(f"live events: per-call cost of publish(), {args.calls} calls each, in microseconds")
    print(f"  building the event (2 players, rated): {build_us:.1f} us")

    base = summary(per_call(noop, event, args.calls))
    header = (
        f"  {'case':52s} {'median':>8s} {'mean':>8s} {'p99':>8s} {'max':>9s}   ratio vs no-op (median, mean)"
    )
    print(header)

    def row(name: str, figures: tuple[float, float, float, float]) -> None:
        median, mean, p99, worst = figures
        ratio = f"{median / base[0]:6.1f}x {mean / base[1]:7.1f}x" if name != "no-op" else ""
        print(f"  {name:52s} {median:8.2f} {mean:8.2f} {p99:8.2f} {worst:9.0f}   {ratio}")

    row("no-op", base)
    with stalled_port() as stalled:
        urls = {
            "healthy": args.redis_url,
            "down (closed port)": f"redis://127.0.0.1:{free_port()}/0",
            "stalled (accepts, never answers)": f"redis://127.0.0.1:{stalled}/0",
        }
        for state, url in urls.items():
            publisher = EventPublisher(url)
            first = time.perf_counter()
            publisher.publish(event, TOPIC)  # starts the sender thread
            first_us = (time.perf_counter() - first) * 1e6
            if state == "healthy":  # the queue always has room: flushed (untimed) every 500 calls
                costs = per_call(publisher.publish, event, args.calls, functools.partial(publisher.flush, 5))
                row("publish(), Redis healthy", summary(costs))
            else:  # the queue fills up: from then on every call drops the oldest event
                row(f"publish(), Redis {state}", summary(per_call(publisher.publish, event, args.calls)))
            print(f"  {'':52s} first call (starts the sender thread): {first_us:.0f} us")
            publisher.close(0.2)
        sync_calls = max(1, args.calls // 10)
        row(
            "plain sync PUBLISH, Redis healthy",
            summary(per_call(sync_publisher(args.redis_url), event, sync_calls)),
        )
        row(
            "plain sync PUBLISH, Redis down",
            summary(per_call(sync_publisher(urls["down (closed port)"]), event, 200)),
        )
        stalled_calls = 4
        row(
            f"plain sync PUBLISH, Redis stalled ({stalled_calls} calls)",
            summary(per_call(sync_publisher(urls["stalled (accepts, never answers)"]), event, stalled_calls)),
        )

    publisher = EventPublisher(args.redis_url, max_pending=args.calls)
    started = time.perf_counter()
    for _ in range(args.calls):
        publisher.publish(event, TOPIC)
    publisher.flush(30)
    elapsed = time.perf_counter() - started
    publisher.close()
    print(
        f"  burst of {args.calls} events queued and sent by the thread: {args.calls / elapsed:,.0f} events/s"
    )


if __name__ == "__main__":
    # Only the Redis URLs and the events namespace are read: no secret key is needed, and the
    # publishers (which read get_settings()) must not ask for one either.
    with installed_settings(Settings(dev_mode=True)):
        main()
