"""Refuse a signed request whose message id was already accepted within the freshness window.

A signature only proves who made a request, not that it is new: anyone who sees one request can
send it again until its timestamp goes stale. The cache remembers every accepted id until the
moment its timestamp leaves the window (after that `verify` refuses the request as stale anyway).

Ids are kept in time buckets by their expiry (`BUCKET_S` wide): a bucket is dropped whole once its
last id has expired, so forgetting costs nothing per request and the cache holds about the request
rate times (window + one bucket) ids. It is sized by the rate it must sustain (`max_rate`, default
`DEFAULT_MAX_RATE`), not by a count that a busy ladder outgrows: memory is about `BYTES_PER_ID` a
remembered id (docs/sdk.md gives the figures and the command that measures them).

Past that many live ids new requests are refused (503) rather than an old id forgotten:
forgetting would let that id be replayed. Only requests whose signature verified reach the cache,
so only someone holding the bot's secret can fill it. Standard library only (it runs inside the
hosted-bot sandbox).
"""

from __future__ import annotations

import math
import threading
import time

BUCKET_S = 5.0
"""Width of a time bucket: ids are forgotten at most this late."""
DEFAULT_MAX_RATE = 2_000.0
"""Requests a second the default cache sustains over the whole window: 300 matches a minute on a
ladder send a bot about 1,350."""
BYTES_PER_ID = 150
"""Memory per remembered id (a 40-character id, its set entry and its bucket's list slot),
measured by tests/test_signing.py; 2,000 requests a second over a 300 s window is about 90 MB."""


class ReplayCacheFull(Exception):
    """Every remembered id is still inside its window; the request cannot be checked for replay."""


class ReplayCache:
    """Thread-safe set of message ids, each kept until its expiry (timestamp + window)."""

    def __init__(
        self, window_s: float, capacity: int | None = None, *, max_rate: float = DEFAULT_MAX_RATE
    ) -> None:
        """`capacity` (live ids at most) defaults to `max_rate` x (window + one bucket)."""
        if capacity is None:
            capacity = math.ceil(max_rate * (window_s + BUCKET_S))
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._window_s = window_s
        self._capacity = capacity
        self._seen: set[str] = set()
        self._buckets: dict[int, list[str]] = {}
        """Ids by the bucket of their expiry; only these lists say when an id may go."""
        self._oldest = math.inf
        """The lowest bucket number held (inf: none)."""
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        return self._capacity

    def __len__(self) -> int:
        return len(self._seen)

    def first_use(self, msg_id: str, timestamp: float, now: float | None = None) -> bool:
        """Remember `msg_id`; False if it was already seen (a replay). Raises ReplayCacheFull."""
        current = time.time() if now is None else now
        with self._lock:
            self._expire(current)
            if msg_id in self._seen:
                return False
            if len(self._seen) >= self._capacity:
                raise ReplayCacheFull(f"{self._capacity} message ids are inside the replay window")
            bucket = math.floor((timestamp + self._window_s) / BUCKET_S)
            self._seen.add(msg_id)
            self._buckets.setdefault(bucket, []).append(msg_id)
            self._oldest = min(self._oldest, bucket)
            return True

    def _expire(self, now: float) -> None:
        """Drop every bucket whose ids have all expired: bucket k holds expiries in [k, k + 1) x
        BUCKET_S, so it goes once (k + 1) x BUCKET_S <= now."""
        last_gone = math.floor(now / BUCKET_S) - 1
        if self._oldest > last_gone:
            return
        for bucket in [b for b in self._buckets if b <= last_gone]:
            self._seen.difference_update(self._buckets.pop(bucket))
        self._oldest = min(self._buckets, default=math.inf)
