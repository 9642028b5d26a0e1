"""Per-user rate limits kept in Redis, so every gateway process counts against the same window.

A fixed window: the first request of a window creates a counter that expires with the window, each
request increments it, and a request over the limit is answered 429 with Retry-After set to the
seconds left in the window. If Redis cannot be reached the request is refused with 503 (with
Retry-After, logged once per interval) rather than let through: the limit exists to stop floods, and
a match could not be queued without Redis anyway.
"""

from __future__ import annotations

import logging
import uuid
from functools import cache

import redis
from fastapi import HTTPException, status

from services.gateway.errors import outage_headers
from shared.logging_throttle import LogThrottle
from shared.outages import describe

log = logging.getLogger("services.gateway.rate_limit")
_outage_log = LogThrottle()


@cache
def _redis(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)


def hit(redis_url: str, action: str, user_id: uuid.UUID, limit: int, window_s: int) -> None:
    """Count one `action` by the user; raise 429 once the window's count exceeds `limit`."""
    key = f"arena:rate:{action}:{user_id}"
    try:
        pipe = _redis(redis_url).pipeline(transaction=True)
        pipe.set(key, 0, ex=window_s, nx=True)
        pipe.incr(key)
        pipe.ttl(key)
        _, count, ttl = pipe.execute()
    except redis.RedisError as exc:
        _outage_log.log(log, logging.ERROR, type(exc).__name__, "rate limiter unavailable: %s", describe(exc))
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "the rate limiter (Redis) is unreachable; try again later",
            headers=outage_headers(),
        ) from None
    if count > limit:
        retry_after = max(int(ttl), 1)
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"too many {action}: at most {limit} per {window_s} s per user; try again in {retry_after} s",
            headers={"Retry-After": str(retry_after)},
        )
