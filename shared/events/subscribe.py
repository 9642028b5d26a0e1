"""Subscribing to events: an async iterator of typed events that survives Redis restarts.

    async with EventStream([TOPIC_MATCHES]) as stream:
        async for event in stream:
            ...

Entering the stream subscribes (and waits, up to the connect timeout, for Redis to confirm), so an
event published after `async with` returns is received. Iterating yields events in the order Redis
delivered them; messages that are not events this process knows are skipped and counted. When the
connection breaks the stream reconnects and subscribes again, waiting longer between attempts while
Redis stays away; events published meanwhile are missed (pub/sub keeps nothing). A topic with `*`
is a pattern: `training:*` is every training run.

A WebSocket endpoint is a thin wrapper: open a stream for the topics asked, send
`event.model_dump_json()` for each event, and leave the `async with` when the client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Self

import redis.asyncio as aioredis
from prometheus_client import Counter
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from shared.config import get_settings
from shared.events.models import (
    Event,
    MalformedEvent,
    channel,
    channel_prefix,
    namespace_of,
    parse_event,
    topic_family,
)
from shared.events.publish import RateLimitedLog

log = logging.getLogger(__name__)

RECEIVED = Counter(
    "arena_events_received_total",
    "Messages read by event subscribers, by topic family and outcome (event, malformed)",
    ["topic", "outcome"],
)


class EventStream:
    """Typed events from some topics, for as long as it is iterated (see the module docstring), on
    the channels of `namespace` (default: this deployment's for that Redis, `namespace_of`)."""

    def __init__(
        self,
        topics: Iterable[str],
        *,
        redis_url: str | None = None,
        namespace: str | None = None,
        connect_timeout_s: float = 2.0,
        poll_s: float = 1.0,
        retry_delay_s: float = 0.2,
        max_retry_delay_s: float = 5.0,
        health_check_interval_s: int = 15,
    ) -> None:
        topics = list(dict.fromkeys(topics))
        if not topics:
            raise ValueError("subscribe to at least one topic")
        if redis_url is None:
            settings = get_settings()
            redis_url = settings.events_redis_url or settings.redis_url
        self.redis_url = redis_url
        self.namespace = namespace_of(get_settings(), redis_url) if namespace is None else namespace
        self._prefix = channel_prefix(self.namespace)
        names = [channel(topic, self.namespace) for topic in topics]
        self.topics = topics
        self._channels = [name for name in names if "*" not in name]
        self._patterns = [name for name in names if "*" in name]
        self._connect_timeout_s = connect_timeout_s
        self._poll_s = poll_s
        self._retry_delay_s = retry_delay_s
        self._max_retry_delay_s = max_retry_delay_s
        self._health_check_interval_s = health_check_interval_s
        self._delay = retry_delay_s
        self._client: aioredis.Redis | None = None
        self._pubsub: Any = None  # redis.asyncio's PubSub is untyped
        self._confirmed = 0
        self._attempts = 0
        self._buffer: deque[Event] = deque()
        self._closed = False
        self._problems = RateLimitedLog(log)
        self.ready = asyncio.Event()
        """Set while every topic is subscribed; cleared while reconnecting."""
        self.skipped = 0
        """Messages that were not events this process knows."""
        self.reconnects = 0

    async def __aenter__(self) -> Self:
        deadline = time.monotonic() + self._connect_timeout_s
        try:
            await self._connect()
            while not self.ready.is_set() and (left := deadline - time.monotonic()) > 0:
                event = await self._read(left)
                if event is not None:
                    self._buffer.append(event)
        except Exception as exc:  # not fatal: iterating reconnects
            await self._disconnect(exc)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        while not self._closed:
            if self._buffer:
                return self._buffer.popleft()
            if self._pubsub is None and self._attempts:  # lost or refused: wait, then try again
                await asyncio.sleep(self._delay)
                self._delay = min(self._delay * 2, self._max_retry_delay_s)
                self.reconnects += 1
            try:
                if self._pubsub is None:
                    await self._connect()
                event = await self._read(self._poll_s)
            except Exception as exc:  # Redis went away (or worse): start again on a new connection
                await self._disconnect(exc)
                continue
            if event is not None:
                return event
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self._closed = True
        await self._disconnect(None)

    async def _connect(self) -> None:
        """Subscribe on a new connection; on any failure (cancellation too) nothing is left half-made."""
        self._attempts += 1
        client = aioredis.Redis.from_url(
            self.redis_url,
            socket_connect_timeout=self._connect_timeout_s,
            health_check_interval=self._health_check_interval_s,
            retry=Retry(NoBackoff(), 0),
        )
        pubsub = client.pubsub()
        try:
            if self._channels:
                await pubsub.subscribe(*self._channels)
            if self._patterns:
                await pubsub.psubscribe(*self._patterns)
        except BaseException:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
                await client.aclose()
            raise
        self._client, self._pubsub, self._confirmed = client, pubsub, 0

    async def _disconnect(self, problem: BaseException | None) -> None:
        self.ready.clear()
        if problem is not None and not self._closed:
            self._problems.warning(
                "event subscription to %s lost: %s: %s", self.topics, type(problem).__name__, problem
            )
        pubsub, client, self._pubsub, self._client = self._pubsub, self._client, None, None
        with contextlib.suppress(Exception):
            if pubsub is not None:
                await pubsub.aclose()
        with contextlib.suppress(Exception):
            if client is not None:
                await client.aclose()

    async def _read(self, timeout_s: float) -> Event | None:
        """One message: its event, or None (timeout, a confirmation, a skipped message)."""
        message = await self._pubsub.get_message(timeout=timeout_s)
        if message is None:
            return None
        kind = message["type"]
        if kind in ("subscribe", "psubscribe"):
            self._confirmed += 1
            if self._confirmed >= len(self._channels) + len(self._patterns):
                self.ready.set()
                self._delay = self._retry_delay_s
            return None
        if kind not in ("message", "pmessage"):
            return None
        name = message["channel"]
        topic = (name.decode(errors="replace") if isinstance(name, bytes) else str(name)).removeprefix(
            self._prefix
        )
        try:
            event = parse_event(message["data"])
        except MalformedEvent as exc:
            self.skipped += 1
            RECEIVED.labels(topic_family(topic), "malformed").inc()
            self._problems.warning("skipping a message on %s: %s", topic, exc)
            return None
        RECEIVED.labels(topic_family(topic), "event").inc()
        return event


def subscribe(topics: Iterable[str], **options: Any) -> EventStream:
    """`async with subscribe([TOPIC_MATCHES]) as stream: async for event in stream: ...`"""
    return EventStream(topics, **options)
