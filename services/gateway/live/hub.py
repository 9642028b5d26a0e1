"""One Redis subscription per topic per gateway process, fanned out to every WebSocket client.

A browser watching a match or the front page ticker is a `Subscription` of the process's `LiveHub`:
the hub opens one `EventStream` per topic while anyone wants it (reference counted: the first
subscriber opens it, the last one to leave closes it), serialises each event once and offers the
text to every subscriber of the topic. Offering never waits: each subscriber has a bounded queue
(messages and bytes), and a subscriber whose queue is full is dropped at once (its subscription is
closed with code 1013, "try again later"), so one slow or frozen browser costs the others nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from shared.events import Event, EventStream, EventType
from shared.events.publish import RateLimitedLog

log = logging.getLogger(__name__)
_problems = RateLimitedLog(log)

MAX_MESSAGES = 1024
"""Messages one client may have waiting: a match sends at most about ten `match.frames` batches a
second and the `matches` topic a few events per finished match, so this is many seconds of slack."""
MAX_BYTES = 8 * 1024 * 1024
"""Bytes one client may have waiting (the texts are shared between clients, but a frozen client
must not keep many megabytes of old frames alive)."""

CLOSE_TOO_SLOW = 1013
"""WebSocket "try again later": the client did not keep up and was dropped; it may reconnect."""
CLOSE_FEED_FAILED = 1011


@dataclass(frozen=True)
class Closed:
    """Why a subscription ended: the WebSocket close code and reason to send."""

    code: int
    reason: str


@dataclass(frozen=True)
class Delivery:
    """One event for one client: its type and its JSON text (shared by every client)."""

    type: EventType
    text: str


class SubscriptionClosed(Exception):
    def __init__(self, closed: Closed) -> None:
        super().__init__(closed.reason)
        self.closed = closed


Wants = Callable[[Event], bool]
"""Which of a topic's events a subscriber wants (e.g. only its own match's `match.finished`)."""


class Subscription:
    """One client's bounded queue of event texts, filled by the hub without ever waiting."""

    def __init__(self, wants: dict[str, Wants | None], max_messages: int, max_bytes: int) -> None:
        self.wants = wants
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self._texts: deque[Delivery] = deque()
        self._bytes = 0
        self._arrived = asyncio.Event()
        self.ended = asyncio.Event()
        """Set when the hub dropped this subscriber (too slow) or its feed failed."""
        self.closed: Closed | None = None
        self.received = 0

    @property
    def waiting(self) -> int:
        return len(self._texts)

    def offer(self, delivery: Delivery) -> bool:
        """Queue a delivery; False (and the subscription is closed) when the queue is full."""
        if self.closed is not None:
            return False
        size = len(delivery.text)
        if len(self._texts) >= self._max_messages or self._bytes + size > self._max_bytes:
            self.close(Closed(CLOSE_TOO_SLOW, "too slow: the client did not keep up; reconnect"))
            return False
        self._texts.append(delivery)
        self._bytes += size
        self.received += 1
        self._arrived.set()
        return True

    def close(self, closed: Closed) -> None:
        if self.closed is None:
            self.closed = closed
            self._texts.clear()
            self._bytes = 0
            self.ended.set()
            self._arrived.set()

    async def next(self) -> Delivery:
        """The next delivery; raises SubscriptionClosed once the subscription was closed."""
        while True:
            if self.closed is not None:
                raise SubscriptionClosed(self.closed)
            if self._texts:
                delivery = self._texts.popleft()
                self._bytes -= len(delivery.text)
                return delivery
            self._arrived.clear()
            await self._arrived.wait()


class _Feed:
    """One topic's EventStream and the subscribers it fans out to."""

    def __init__(self, topic: str, stream_options: dict[str, Any]) -> None:
        self.topic = topic
        self.subscribers: set[Subscription] = set()
        self.entered = asyncio.Event()
        """Set once the stream is subscribed (or gave up waiting for Redis, which it keeps trying)."""
        self.stream = EventStream([topic], **stream_options)
        self.task = asyncio.create_task(self._run(), name=f"live-feed:{topic}")

    async def _run(self) -> None:
        try:
            async with self.stream:
                self.entered.set()
                async for event in self.stream:
                    self._fan_out(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug, not Redis (the stream survives Redis): tell the clients
            _problems.warning("live feed %s failed: %s: %s", self.topic, type(exc).__name__, exc)
            for subscriber in list(self.subscribers):
                subscriber.close(Closed(CLOSE_FEED_FAILED, "live feed failed; reconnect"))
            self.subscribers.clear()
        finally:
            self.entered.set()

    def _fan_out(self, event: Event) -> None:
        delivery: Delivery | None = None  # serialised once, and only if someone wants it
        for subscriber in list(self.subscribers):
            wants = subscriber.wants.get(self.topic)
            if wants is not None and not wants(event):
                continue
            if delivery is None:
                delivery = Delivery(event.type, event.model_dump_json())
            if not subscriber.offer(delivery):
                self.subscribers.discard(subscriber)

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


class LiveHub:
    """The process's shared subscriptions (see the module docstring). Lives on one event loop."""

    def __init__(
        self,
        *,
        max_messages: int = MAX_MESSAGES,
        max_bytes: int = MAX_BYTES,
        **stream_options: Any,
    ) -> None:
        self.max_messages = max_messages
        self.max_bytes = max_bytes
        self._stream_options = stream_options
        self._feeds: dict[str, _Feed] = {}

    def topics(self) -> dict[str, int]:
        """Every open topic with its number of subscribers (for tests and diagnostics)."""
        return {topic: len(feed.subscribers) for topic, feed in self._feeds.items()}

    def stream(self, topic: str) -> EventStream | None:
        feed = self._feeds.get(topic)
        return feed.stream if feed else None

    @contextlib.asynccontextmanager
    async def subscribe(self, topics: Iterable[str] | dict[str, Wants | None]) -> AsyncIterator[Subscription]:
        """Subscribe to some topics (optionally filtering each one's events) for the `async with`.

        Returns once every topic's stream is subscribed (or, if Redis is away, has given up waiting
        for it: it keeps trying in the background), so events published after that are received.
        """
        wants = dict(topics) if isinstance(topics, dict) else dict.fromkeys(topics)
        subscription = Subscription(wants, self.max_messages, self.max_bytes)
        feeds = []
        try:
            for topic in wants:
                feed = self._feeds.get(topic)
                if feed is None or feed.task.done():  # none yet, or one that failed: a fresh one
                    feed = self._feeds[topic] = _Feed(topic, self._stream_options)
                feed.subscribers.add(subscription)
                feeds.append(feed)
            for feed in feeds:
                await feed.entered.wait()
            yield subscription
        finally:
            for feed in feeds:
                feed.subscribers.discard(subscription)
                if not feed.subscribers and self._feeds.get(feed.topic) is feed:
                    del self._feeds[feed.topic]
                    await feed.stop()

    async def aclose(self) -> None:
        feeds, self._feeds = list(self._feeds.values()), {}
        for feed in feeds:
            await feed.stop()
