"""The gateway's live hub against the test Redis: one subscription per topic whatever the number of
clients, fan-out in order, a client that never reads dropped (1013) while the others keep receiving,
and topics closed when their last client leaves."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis.asyncio as aioredis

from services.gateway.live.hub import CLOSE_TOO_SLOW, LiveHub, Subscription, SubscriptionClosed
from shared.events import (
    TOPIC_MATCHES,
    Event,
    MatchFinished,
    MatchFrames,
    MatchStarted,
    channel,
    match_topic,
    parse_event,
)
from tests.support.live_events import finished_event, frames, started_event


async def numsub(client: aioredis.Redis, topic: str) -> int:
    [(_, count)] = await client.pubsub_numsub(channel(topic))
    return int(count)


async def read(subscription: Subscription, count: int) -> list[Event]:
    return [parse_event((await subscription.next()).text) for _ in range(count)]


def test_one_redis_subscription_feeds_every_client_and_a_client_that_never_reads_is_dropped(
    redis_url: str,
) -> None:
    match_id = uuid.uuid4()
    topic = match_topic(match_id)

    async def scenario() -> None:
        hub = LiveHub(max_messages=50)
        publisher = aioredis.Redis.from_url(redis_url)
        try:
            async with (
                hub.subscribe([topic]) as first,
                hub.subscribe([topic]) as second,
                hub.subscribe([topic]) as frozen,
            ):
                assert hub.topics() == {topic: 3}
                assert await numsub(publisher, topic) == 1, "one Redis subscription for three clients"
                received: list[list[Event]] = [[], []]

                async def keep_reading(index: int, subscription: Subscription) -> None:
                    while len(received[index]) < 300:
                        received[index].append(parse_event((await subscription.next()).text))

                readers = [asyncio.create_task(keep_reading(i, s)) for i, s in enumerate((first, second))]
                for turn in range(300):
                    await publisher.publish(channel(topic), frames(match_id, turn).to_json())
                    if turn % 20 == 19:  # let the readers keep up; the frozen client never reads
                        await asyncio.sleep(0.01)
                async with asyncio.timeout(10):
                    await asyncio.gather(*readers)

                for got in received:
                    assert [e.turn for e in got if isinstance(e, MatchFrames)] == list(range(300))
                assert frozen.closed is not None
                assert frozen.closed.code == CLOSE_TOO_SLOW
                assert frozen.ended.is_set()
                with pytest.raises(SubscriptionClosed) as closed:
                    await frozen.next()
                assert closed.value.closed.code == CLOSE_TOO_SLOW
                assert hub.topics() == {topic: 2}, "the dropped client left the fan-out"

                await publisher.publish(channel(topic), frames(match_id, 300).to_json())
                async with asyncio.timeout(5):
                    later = [await read(first, 1), await read(second, 1)]
                turns = [[e.turn for e in got if isinstance(e, MatchFrames)] for got in later]
                assert turns == [[300], [300]]
            assert hub.topics() == {}, "the topic is closed with its last client"
            async with asyncio.timeout(5):
                while await numsub(publisher, topic):
                    await asyncio.sleep(0.05)
        finally:
            await hub.aclose()
            await publisher.aclose()

    asyncio.run(scenario())


def test_a_filtered_topic_is_shared_and_each_client_gets_only_what_it_wants(redis_url: str) -> None:
    """Match viewers share the `matches` topic with the ticker, each keeping its own match's end."""
    mine, other = uuid.uuid4(), uuid.uuid4()

    started = started_event(mine)

    async def scenario() -> None:
        hub = LiveHub()
        publisher = aioredis.Redis.from_url(redis_url)
        try:
            viewer_topics = {
                TOPIC_MATCHES: lambda e: isinstance(e, MatchFinished) and e.match_id == mine,
                match_topic(mine): None,
            }
            # Other Arena processes on this Redis server (a gateway's leaderboard cache follows the
            # same topic) subscribe too: pub/sub channels are server-wide. Count this hub's share.
            elsewhere = await numsub(publisher, TOPIC_MATCHES)
            async with hub.subscribe([TOPIC_MATCHES]) as ticker, hub.subscribe(viewer_topics) as viewer:
                assert await numsub(publisher, TOPIC_MATCHES) == elsewhere + 1
                for event in (started, finished_event(other), frames(mine, 0), finished_event(mine)):
                    await publisher.publish(channel(event.topic), event.to_json())
                async with asyncio.timeout(5):
                    ticker_got = await read(ticker, 3)
                    viewer_got = await read(viewer, 2)
                assert [(type(e), e.match_id) for e in ticker_got] == [  # type: ignore[attr-defined]
                    (MatchStarted, mine),
                    (MatchFinished, other),
                    (MatchFinished, mine),
                ]
                assert [type(e) for e in viewer_got] == [MatchFrames, MatchFinished]
                assert viewer_got[1].match_id == mine  # type: ignore[attr-defined]
                assert viewer.waiting == 0
                assert ticker.waiting == 0
        finally:
            await hub.aclose()
            await publisher.aclose()

    asyncio.run(scenario())
