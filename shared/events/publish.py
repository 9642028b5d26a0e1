"""Publishing events without ever slowing down or failing the caller.

`publish(event)` only appends the event to a bounded in-memory queue (when full, dropping the
oldest droppable event, a live frame, or else the oldest event) and wakes a background thread; that
thread serialises the events and sends them to Redis with PUBLISH, in pipelined batches, on a client
of its own with short timeouts. A Redis that is down, slow or silent therefore costs the caller
nothing but the append. When an attempt fails, its batch and every event waiting behind it are lost
(counted), never retried, and the thread waits longer and longer before the next attempt while
Redis stays unreachable; events never wait for Redis longer than that delay.

Delivery is at most once and best effort: Redis pub/sub keeps nothing for subscribers that are not
connected at the moment of publishing. Anything that must not be lost lives in the database.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import threading
import time
import weakref
from collections import deque
from enum import StrEnum

import redis
from prometheus_client import Counter
from redis.backoff import NoBackoff
from redis.retry import Retry

from shared.config import get_settings
from shared.events.models import Event, channel, channel_prefix, namespace_of, topic_family

log = logging.getLogger(__name__)

MAX_PENDING = 1000
"""Events waiting for the background thread; beyond this the oldest are dropped."""
BATCH = 32
"""Events sent in one pipelined round trip."""
MAX_TOPICS_REMEMBERED = 256
"""Topics whose last subscriber count `listeners()` keeps (the oldest are forgotten)."""
LINGER_S = 0.05
"""How long droppable events (live frames, one per turn) wait for more to share a round trip: a
sender that woke for every turn would cost a match far more than its frames do. An event that is
not droppable is sent at once, with whatever is waiting."""
CONNECT_TIMEOUT_S = 0.25
TIMEOUT_S = 0.5
RETRY_DELAY_S = 0.5
MAX_RETRY_DELAY_S = 10.0
LOG_INTERVAL_S = 60.0


class PublishOutcome(StrEnum):
    SENT = "sent"
    """Redis took it and at least one subscriber received it."""
    UNHEARD = "unheard"
    """Redis took it and nobody was subscribed."""
    FAILED = "failed"
    """Redis was unreachable, refused or timed out (or the event did not serialise): lost."""
    DROPPED = "dropped"
    """The pending queue was full: the oldest event made room for a newer one."""
    DISABLED = "disabled"
    """Events are switched off (`ARENA_EVENTS_ENABLED=0`)."""


PUBLISHED = Counter(
    "arena_events_published_total",
    "Events handed to publish(), by topic family (matches, training, ...) and outcome",
    ["topic", "outcome"],
)


@functools.cache
def _count(family: str, outcome: PublishOutcome) -> Counter:
    """The counter of one (topic family, outcome); cached, as `labels()` costs more than `inc()`."""
    return PUBLISHED.labels(family, outcome)


class RateLimitedLog:
    """Warn at most once per interval; the next warning says how many were held back."""

    def __init__(self, logger: logging.Logger, interval_s: float = LOG_INTERVAL_S) -> None:
        self._logger = logger
        self._interval_s = interval_s
        self._last = -interval_s
        self._held = 0

    def warning(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._last < self._interval_s:
            self._held += 1
            return
        held, self._held, self._last = self._held, 0, now
        suffix = f" ({held} similar messages held back)" if held else ""
        self._logger.warning(message + suffix, *args)


_publishers: weakref.WeakSet[EventPublisher] = weakref.WeakSet()


class EventPublisher:
    """A queue and a sender thread for one Redis; see the module docstring for the guarantees.
    Events go to the channels of `namespace` (default: this deployment's for that Redis,
    `shared.events.namespace_of`)."""

    def __init__(
        self,
        redis_url: str,
        *,
        namespace: str | None = None,
        enabled: bool = True,
        max_pending: int = MAX_PENDING,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        timeout_s: float = TIMEOUT_S,
        retry_delay_s: float = RETRY_DELAY_S,
        max_retry_delay_s: float = MAX_RETRY_DELAY_S,
        linger_s: float = LINGER_S,
    ) -> None:
        self.redis_url = redis_url
        self.namespace = namespace_of(get_settings(), redis_url) if namespace is None else namespace
        channel_prefix(self.namespace)  # a namespace that cannot name channels fails here, not in the thread
        self.enabled = enabled
        self._max_pending = max(1, max_pending)
        self._connect_timeout_s = connect_timeout_s
        self._timeout_s = timeout_s
        self._retry_delay_s = retry_delay_s
        self._max_retry_delay_s = max_retry_delay_s
        self._linger_s = linger_s
        self._problems = RateLimitedLog(log)
        self._reset()
        _publishers.add(self)

    def _reset(self) -> None:
        """Fresh state; also what a forked child starts from (the parent's thread does not exist
        there, and its lock may have been held at the moment of the fork)."""
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._idle = threading.Condition(self._lock)
        self._pending: deque[tuple[str, Event]] = deque()
        self._droppable = 0
        self._listeners: dict[str, int] = {}
        """How many of the pending events are droppable (see `Event.droppable`)."""
        self._in_flight = 0
        self._closing = False
        self._thread: threading.Thread | None = None
        self._client: redis.Redis | None = None

    def publish(self, event: Event, topic: str | None = None) -> bool:
        """Queue the event for its topic (or `topic`); True if queued. Never blocks, never raises."""
        try:
            if not self.enabled:
                _count(topic_family(topic or event.topic), PublishOutcome.DISABLED).inc()
                return False
            item = (topic or event.topic, event)
            dropped: str | None = None
            queued = True
            with self._lock:
                if self._closing:
                    return False
                if len(self._pending) >= self._max_pending:
                    victim = self._oldest_droppable()
                    if victim is not None:
                        dropped = self._pending[victim][0]
                        del self._pending[victim]
                        self._droppable -= 1
                    elif event.droppable:  # only news is queued: the new frame gives way
                        dropped, queued = item[0], False
                    else:
                        dropped = self._pending.popleft()[0]
                if queued:
                    self._pending.append(item)
                    self._droppable += event.droppable
                if self._thread is None:
                    self._start_thread()
                if not event.droppable or len(self._pending) in (1, BATCH):
                    self._wake.notify()  # droppable ones in between: the lingering sender comes back
            if dropped is not None:
                _count(topic_family(dropped), PublishOutcome.DROPPED).inc()
                self._problems.warning(
                    "event queue full (%d): dropping the oldest (droppable first)", self._max_pending
                )
            return queued
        except Exception as exc:  # publishing must never fail the caller
            self._problems.warning("cannot queue an event: %s: %s", type(exc).__name__, exc)
            return False

    def _batch_ready(self) -> bool:
        return self._closing or len(self._pending) >= BATCH or self._droppable < len(self._pending)

    def _oldest_droppable(self) -> int | None:
        """Where the oldest droppable event waits (under the lock). The scan is short: the queue is
        only full while Redis is away, and a match then queues frames, droppable, at the front."""
        if not self._droppable:
            return None
        for index, (_, queued) in enumerate(self._pending):
            if queued.droppable:
                return index
        return None

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending) + self._in_flight

    def flush(self, timeout_s: float = 1.0) -> bool:
        """Wait until every queued event was sent or given up; False if the time ran out."""
        with self._lock:
            return self._idle.wait_for(lambda: not self._pending and not self._in_flight, timeout_s)

    def close(self, timeout_s: float = 1.0) -> None:
        """Send what is queued (one attempt) and stop the thread; later publishes are refused."""
        with self._lock:
            self._closing = True
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def _start_thread(self) -> None:
        self._thread = threading.Thread(target=self._run, name="arena-events", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        delay = self._retry_delay_s
        while True:
            with self._lock:
                self._wake.wait_for(lambda: bool(self._pending) or self._closing)
                if self._droppable == len(self._pending):  # only live frames: gather a batch first
                    self._wake.wait_for(self._batch_ready, self._linger_s)
                if not self._pending:
                    self._idle.notify_all()
                    return
                batch = [self._pending.popleft() for _ in range(min(BATCH, len(self._pending)))]
                self._droppable -= sum(event.droppable for _, event in batch)
                self._in_flight = len(batch)
            healthy = self._send(batch)
            with self._lock:
                self._in_flight = 0
                lost = [] if healthy else [topic for topic, _ in self._pending]
                if lost:  # they would only grow stale while Redis is away: lost with the batch
                    self._pending.clear()
                    self._droppable = 0
                if not self._pending:
                    self._idle.notify_all()
            for topic in lost:
                _count(topic_family(topic), PublishOutcome.FAILED).inc()
            if not healthy:  # wait before the next attempt; newer events queue up meanwhile
                with self._lock:
                    self._wake.wait_for(lambda: self._closing, delay)
            delay = self._retry_delay_s if healthy else min(delay * 2, self._max_retry_delay_s)

    def _redis(self) -> redis.Redis:
        if self._client is None:
            self._client = redis.Redis.from_url(
                self.redis_url,
                socket_connect_timeout=self._connect_timeout_s,
                socket_timeout=self._timeout_s,
                retry=Retry(NoBackoff(), 0),
            )
        return self._client

    def _send(self, batch: list[tuple[str, Event]]) -> bool:
        """PUBLISH a batch in one round trip; False when Redis failed (the batch is then lost)."""
        messages: list[tuple[str, str, bytes]] = []
        for topic, event in batch:
            try:
                messages.append((topic, channel(topic, self.namespace), event.to_json()))
            except Exception as exc:
                _count(topic_family(topic), PublishOutcome.FAILED).inc()
                self._problems.warning("cannot serialise %s: %s", type(event).__name__, exc)
        if not messages:
            return True
        try:
            with self._redis().pipeline(transaction=False) as pipe:
                for _, name, data in messages:
                    pipe.publish(name, data)
                receivers = pipe.execute()
        except Exception as exc:
            for topic, _, _ in messages:
                _count(topic_family(topic), PublishOutcome.FAILED).inc()
            self._problems.warning(
                "cannot publish %d events to Redis: %s: %s", len(messages), type(exc).__name__, exc
            )
            return False
        for (topic, _, _), heard in zip(messages, receivers, strict=True):
            outcome = PublishOutcome.SENT if heard else PublishOutcome.UNHEARD
            _count(topic_family(topic), outcome).inc()
            self._listeners[topic] = int(heard)
        while len(self._listeners) > MAX_TOPICS_REMEMBERED:
            self._listeners.pop(next(iter(self._listeners)))
        return True

    def listeners(self, topic: str) -> int | None:
        """How many subscribers received the last event sent on `topic`; None when none was sent
        yet (or too long ago). Lets a publisher of frames stay quiet while nobody watches."""
        return self._listeners.get(topic)


def _after_fork_in_child() -> None:
    global _default_lock
    _default_lock = threading.Lock()
    for publisher in list(_publishers):
        publisher._reset()


os.register_at_fork(after_in_child=_after_fork_in_child)

_default: EventPublisher | None = None
_default_lock = threading.Lock()


def get_publisher() -> EventPublisher:
    """The process's publisher, configured from Settings (`events_redis_url` or `redis_url`, and the
    deployment's namespace)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                settings = get_settings()
                _default = EventPublisher(
                    settings.events_redis_url or settings.redis_url,
                    namespace=namespace_of(settings),
                    enabled=settings.events_enabled,
                )
    return _default


def publish(event: Event, topic: str | None = None) -> bool:
    """Queue an event on the process's publisher; never blocks, never raises (see EventPublisher)."""
    try:
        return get_publisher().publish(event, topic)
    except Exception as exc:  # e.g. settings that do not validate: still not the caller's problem
        _setup_problems.warning("events are unavailable: %s: %s", type(exc).__name__, exc)
        return False


_setup_problems = RateLimitedLog(log)


@atexit.register
def _flush_at_exit() -> None:
    """A short grace for events queued just before a script ends; daemon threads die with it."""
    if _default is not None:
        _default.flush(0.5)
