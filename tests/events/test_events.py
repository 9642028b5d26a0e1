"""Live events: typed round trips through real Redis pub/sub, malformed messages, and a publisher
that never blocks or raises, whether Redis is healthy, absent, silent or restarting."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import socket
import statistics
import time
import uuid
from collections.abc import Iterator

import pytest
import redis
from prometheus_client import REGISTRY

from shared.events import (
    Event,
    EventPublisher,
    EventStream,
    EventType,
    MalformedEvent,
    MatchFinished,
    MatchSeat,
    MatchStarted,
    RatingSnapshot,
    SeatResult,
    channel,
    event_classes,
    parse_event,
)
from shared.ports import free_port
from shared.states import MatchKind, MatchStatus
from tests.support.owned_services import redis_server_command
from tests.support.processes import ManagedProcess

SLOWEST_CALL_S = 0.1
"""The most any single publish may take, on a loaded test machine too (typically a few us). A call
that waited for Redis would take at least the client's connect or read timeout (0.25 s, 0.5 s)."""


def _seat(slot: int) -> MatchSeat:
    return MatchSeat(slot=slot, bot_id=uuid.uuid4(), name=f"bot-{slot}")


def sample_events() -> list[Event]:
    """One of each event type and status, with every optional field in use somewhere."""
    seats = [_seat(0), _seat(1)]
    match_id = uuid.uuid4()
    before = RatingSnapshot(mu=25.0, sigma=25 / 3, ordinal=0.0)
    return [
        MatchStarted(
            match_id=match_id,
            game="podracing",
            kind=MatchKind.LADDER,
            rated=True,
            attempt=1,
            participants=seats,
        ),
        MatchFinished(
            match_id=match_id,
            game="podracing",
            kind=MatchKind.LADDER,
            status=MatchStatus.FINISHED,
            rated=True,
            turns=57,
            end_reason="race_finished",
            participants=[
                SeatResult(
                    **seat.model_dump(),
                    rank=rank,
                    score=1.5 - rank,
                    rating_before=before,
                    rating_after=RatingSnapshot(
                        mu=27.6 - 5 * rank, sigma=7.2, ordinal=27.6 - 5 * rank - 21.6
                    ),
                )
                for rank, seat in enumerate(seats)
            ],
        ),
        MatchFinished(
            match_id=uuid.uuid4(),
            game="battle",
            kind=MatchKind.CHALLENGE,
            status=MatchStatus.FAILED,
            rated=False,
            error="no bot could be reached: slot 0 ('a'): unreachable",
            participants=[SeatResult(**seat.model_dump()) for seat in seats],
        ),
    ]


def _topic() -> str:
    """A topic of this test's own: pub/sub channels are shared by every Redis database."""
    return f"test:{uuid.uuid4().hex}"


def _counter(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers: a stalled Redis."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield sock.getsockname()[1]


async def _collect(stream: EventStream, into: asyncio.Queue[Event]) -> None:
    async for event in stream:
        await into.put(event)


def test_every_event_type_has_one_class_and_a_second_one_is_refused() -> None:
    assert set(event_classes()) == set(EventType)
    for event in sample_events():
        assert event.topic == "matches"
        assert parse_event(event.to_json()) == event
    with pytest.raises(TypeError, match="taken"):

        class Impostor(MatchStarted):
            pass


def test_round_trip_every_event_type_and_skip_malformed_messages(redis_url: str) -> None:
    topic = _topic()
    events = sample_events()
    junk: list[bytes] = [
        b"not json",
        b"[1, 2]",
        b'{"type": "match.unheard_of"}',
        b'{"type": "match.started", "game": "podracing"}',
        b"\xff\xfe",
        events[1].to_json().replace(b'"finished"', b'"running"'),
    ]
    publisher = EventPublisher(redis_url)
    raw = redis.Redis.from_url(redis_url)
    malformed_before = _counter("arena_events_received_total", topic="test", outcome="malformed")

    async def scenario() -> tuple[list[Event], EventStream]:
        async with EventStream([topic], redis_url=redis_url) as stream:
            assert stream.ready.is_set()
            for bad in junk:
                raw.publish(channel(topic), bad)
            for event in events:
                assert publisher.publish(event, topic)
            assert publisher.flush(5)
            got = [await asyncio.wait_for(anext(stream), 5) for _ in events]
        return got, stream

    try:
        received, stream = asyncio.run(scenario())
    finally:
        publisher.close()
    assert received == events
    assert [type(e) for e in received] == [MatchStarted, MatchFinished, MatchFinished]
    assert stream.skipped == len(junk)
    assert _counter(
        "arena_events_received_total", topic="test", outcome="malformed"
    ) - malformed_before == len(junk)
    for bad in junk:
        with pytest.raises(MalformedEvent):
            parse_event(bad)


def test_a_pattern_topic_receives_every_matching_topic(redis_url: str) -> None:
    family = f"test{uuid.uuid4().hex[:8]}"
    publisher = EventPublisher(redis_url)
    first, second, _ = sample_events()

    async def scenario() -> list[Event]:
        async with EventStream([f"{family}:*"], redis_url=redis_url) as stream:
            publisher.publish(first, f"{family}:one")
            publisher.publish(second, f"{family}:two")
            publisher.publish(second, f"other{family}:two")
            return [await asyncio.wait_for(anext(stream), 5) for _ in range(2)]

    try:
        assert asyncio.run(scenario()) == [first, second]
    finally:
        publisher.close()


def _timed_publishes(publisher: EventPublisher, count: int, topic: str) -> list[float]:
    event = sample_events()[1]
    costs = []
    for _ in range(count):
        start = time.perf_counter()
        queued = publisher.publish(event, topic)
        costs.append(time.perf_counter() - start)
        assert queued
    return costs


def _assert_fast(costs: list[float]) -> None:
    p99 = sorted(costs)[int(len(costs) * 0.99)]
    median, worst = statistics.median(costs), max(costs)
    print(f"publish: median {median * 1e6:.1f} us, p99 {p99 * 1e6:.0f} us, max {worst * 1e6:.0f} us")
    assert median < 25e-6  # a round trip to Redis, even on loopback, takes longer
    assert p99 < 0.01
    assert max(costs) < SLOWEST_CALL_S


def test_publishing_with_no_subscriber_is_quick_and_counted(redis_url: str) -> None:
    unheard = _counter("arena_events_published_total", topic="test", outcome="unheard")
    publisher = EventPublisher(redis_url)
    try:
        _assert_fast(_timed_publishes(publisher, 200, _topic()))
        assert publisher.flush(5)
    finally:
        publisher.close()
    assert _counter("arena_events_published_total", topic="test", outcome="unheard") - unheard == 200


def test_publishing_to_an_unreachable_redis_is_quick_and_raises_nothing() -> None:
    dead_url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    failed = _counter("arena_events_published_total", topic="test", outcome="failed")
    publisher = EventPublisher(dead_url, retry_delay_s=0.05)
    try:
        _assert_fast(_timed_publishes(publisher, 200, _topic()))
        start = time.monotonic()
        assert publisher.flush(5)
        print(f"200 events given up in {time.monotonic() - start:.3f} s")
    finally:
        publisher.close()
    assert _counter("arena_events_published_total", topic="test", outcome="failed") - failed == 200
    assert publisher.publish(sample_events()[0]) is False  # closed: refused, still no exception


def test_a_silent_redis_cannot_slow_the_caller_and_the_queue_stays_bounded() -> None:
    dropped = _counter("arena_events_published_total", topic="test", outcome="dropped")
    with silent_server() as port:
        publisher = EventPublisher(f"redis://127.0.0.1:{port}/0", max_pending=10, timeout_s=0.3)
        try:
            _assert_fast(_timed_publishes(publisher, 300, _topic()))
            assert publisher.pending <= 10 + 10  # the queue, plus a batch stuck in the thread
        finally:
            publisher.close(0.1)
    assert _counter("arena_events_published_total", topic="test", outcome="dropped") - dropped >= 270


def test_disabled_events_are_not_sent(redis_url: str) -> None:
    publisher = EventPublisher(redis_url, enabled=False)
    assert publisher.publish(sample_events()[0], _topic()) is False
    assert publisher.pending == 0


def test_a_stream_opened_while_redis_is_down_waits_for_it_without_raising() -> None:
    dead_url = f"redis://127.0.0.1:{free_port()}/0"

    async def scenario() -> EventStream:
        started = time.monotonic()
        async with EventStream([_topic()], redis_url=dead_url, retry_delay_s=0.01) as stream:
            assert time.monotonic() - started < 1.0
            assert not stream.ready.is_set()
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(anext(stream), 0.5)
            return stream

    assert asyncio.run(scenario()).reconnects >= 2


def test_the_subscriber_reconnects_when_redis_restarts(tmp_path: os.PathLike[str]) -> None:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    command = [*redis_server_command(port), "--dir", str(tmp_path)]
    server = ManagedProcess(command, "events-redis")
    publisher = EventPublisher(url, retry_delay_s=0.05)
    before, after, _ = sample_events()
    topic = _topic()

    def answers() -> bool:
        return bool(redis.Redis.from_url(url).ping())

    async def scenario() -> EventStream:
        nonlocal server
        server.wait_until(answers, 15, "redis answering")
        async with EventStream([topic], redis_url=url, retry_delay_s=0.05, poll_s=0.2) as stream:
            received: asyncio.Queue[Event] = asyncio.Queue()
            reader = asyncio.create_task(_collect(stream, received))
            publisher.publish(before, topic)
            assert await asyncio.wait_for(received.get(), 5) == before
            server.stop()  # Redis goes away: publishing still never raises
            assert publisher.publish(after, topic)
            await asyncio.sleep(0.5)
            assert not stream.ready.is_set()
            server = ManagedProcess(command, "events-redis-again")
            await asyncio.to_thread(server.wait_until, answers, 15, "redis answering")
            await asyncio.wait_for(stream.ready.wait(), 15)
            publisher.publish(after, topic)
            assert await asyncio.wait_for(received.get(), 5) == after
            reader.cancel()
            return stream

    try:
        stream = asyncio.run(scenario())
    finally:
        publisher.close(0.5)
        server.stop()
    assert stream.reconnects >= 1


def test_a_forked_child_publishes_on_its_own_thread(redis_url: str) -> None:
    """Celery's pool processes are forked: the parent's sender thread does not exist in a child."""
    publisher = EventPublisher(redis_url)
    first, second, _ = sample_events()
    topic = _topic()

    def child() -> None:
        os._exit(0 if publisher.publish(second, topic) and publisher.flush(5) else 1)

    async def scenario() -> list[Event]:
        async with EventStream([topic], redis_url=redis_url) as stream:
            publisher.publish(first, topic)
            got = [await asyncio.wait_for(anext(stream), 5)]
            process = multiprocessing.get_context("fork").Process(target=child)
            process.start()
            await asyncio.to_thread(process.join, 10)
            assert process.exitcode == 0
            got.append(await asyncio.wait_for(anext(stream), 5))
            return got

    try:
        assert asyncio.run(scenario()) == [first, second]
    finally:
        publisher.close()
