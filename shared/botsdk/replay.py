"""Refuse a signed request whose message id was already accepted within the freshness window.

A signature only proves who made a request, not that it is new: anyone who sees one request can
send it again until its timestamp goes stale. The cache remembers every accepted id until the
moment its timestamp leaves the window (after that `verify` refuses the request as stale anyway),
so memory is bounded by the request rate times the window.

When the cache is full of ids that are all still inside their window, new requests are refused
(503) rather than an old id forgotten: forgetting would let that id be replayed. Standard library
only (it runs inside the hosted-bot sandbox).
"""

from __future__ import annotations

import heapq
import threading
import time

DEFAULT_CAPACITY = 100_000
"""About 150 requests a second, sustained over the 300 s window; a few MB of memory."""


class ReplayCacheFull(Exception):
    """Every remembered id is still inside its window; the request cannot be checked for replay."""


class ReplayCache:
    """Thread-safe set of message ids, each kept until its expiry (timestamp + window)."""

    def __init__(self, window_s: float, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._window_s = window_s
        self._capacity = capacity
        self._expiry: dict[str, float] = {}
        self._queue: list[tuple[float, str]] = []  # (expiry, id), soonest first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._expiry)

    def first_use(self, msg_id: str, timestamp: float, now: float | None = None) -> bool:
        """Remember `msg_id`; False if it was already seen (a replay). Raises ReplayCacheFull."""
        current = time.time() if now is None else now
        with self._lock:
            self._expire(current)
            if msg_id in self._expiry:
                return False
            if len(self._expiry) >= self._capacity:
                raise ReplayCacheFull(f"{self._capacity} message ids are inside the replay window")
            expiry = timestamp + self._window_s
            self._expiry[msg_id] = expiry
            heapq.heappush(self._queue, (expiry, msg_id))
            return True

    def _expire(self, now: float) -> None:
        while self._queue and self._queue[0][0] < now:
            _, msg_id = heapq.heappop(self._queue)
            del self._expiry[msg_id]
