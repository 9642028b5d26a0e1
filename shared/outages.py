"""Which errors mean that a backing service is unreachable (PostgreSQL, Redis) rather than a bug.

An outage is answered differently from a bug everywhere: the gateway answers 503 with Retry-After
instead of 500, tasks are retried instead of acknowledged away, and logs say it in one line per
interval instead of a traceback per request or tick (shared/logging_throttle.py).
"""

from __future__ import annotations

from enum import StrEnum

import redis.exceptions
from kombu.exceptions import OperationalError as BrokerOperationalError
from sqlalchemy import exc as sa_exc


class Dependency(StrEnum):
    DATABASE = "database"
    REDIS = "redis"


DATABASE_ERRORS: tuple[type[Exception], ...] = (
    sa_exc.OperationalError,  # refused, reset, server shutting down, recovery, statement timeout
    sa_exc.InterfaceError,  # a connection closed under us
    sa_exc.TimeoutError,  # the pool had no connection to give within its timeout
)
"""SQLAlchemy's errors for a database that cannot be reached or cannot answer now; a retry later
may pass. Not IntegrityError, DataError or ProgrammingError: those are the request's or a bug."""

REDIS_ERRORS: tuple[type[Exception], ...] = (
    BrokerOperationalError,  # kombu: a send to the broker failed after its retries
    redis.exceptions.ConnectionError,  # refused, reset, loading its dataset after a restart
    redis.exceptions.TimeoutError,
)

_CHAIN_DEPTH = 8
"""How far down `__cause__`/`__context__` to look: a failure while handling an outage is one too."""


def unreachable(exc: BaseException | None) -> Dependency | None:
    """The dependency `exc` (or an error it was raised from or while handling) says is unreachable;
    None when it is not an outage."""
    for _ in range(_CHAIN_DEPTH):
        if exc is None:
            return None
        if isinstance(exc, DATABASE_ERRORS) or (
            isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated
        ):
            return Dependency.DATABASE
        if isinstance(exc, REDIS_ERRORS):
            return Dependency.REDIS
        exc = exc.__cause__ or exc.__context__
    return None


def describe(exc: BaseException) -> str:
    """`Type: first line of the message`, for one-line logs (driver messages run over lines)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
