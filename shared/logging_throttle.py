"""One log line per failure kind per interval, with a count of the repeats it held back.

While PostgreSQL or Redis is down, the same failure happens on every request, every beat tick and
every task; a traceback each time buries the one line an operator needs. `LogThrottle` decides per
kind: the first occurrence is logged at once, repeats within `interval_s` are only counted, and the
first one after the interval is logged with that count. `OutageLogFilter` applies it to log
records whose exception is an outage (shared/outages.py): one line each, without the traceback.
Everything else, the unexpected, passes untouched, traceback and all.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from shared.outages import describe, unreachable

DEFAULT_INTERVAL_S = 60.0
"""An outage is said once a minute: often enough to see that it lasts, rare enough to read."""


@dataclass
class _Kind:
    logged_at: float
    held: int = 0


class LogThrottle:
    """Per kind: log the first, count the repeats within `interval_s`, log the next with the count.
    Thread-safe (gateway endpoints run on worker threads)."""

    def __init__(self, interval_s: float = DEFAULT_INTERVAL_S, clock: Callable[[], float] = time.monotonic):
        self.interval_s = interval_s
        self._clock = clock
        self._kinds: dict[Hashable, _Kind] = {}
        self._lock = threading.Lock()

    def admit(self, kind: Hashable) -> int | None:
        """None: hold this occurrence back (it is counted). Otherwise log it now; the number is how
        many of this kind were held back since its last line."""
        now = self._clock()
        with self._lock:
            seen = self._kinds.get(kind)
            if seen is None or now - seen.logged_at >= self.interval_s:
                held = seen.held if seen is not None else 0
                self._kinds[kind] = _Kind(now)
                return held
            seen.held += 1
            return None

    def log(self, logger: logging.Logger, level: int, kind: Hashable, msg: str, *args: object) -> bool:
        """`logger.log(level, msg, *args)` if `kind` is admitted, with the repeats held back before
        it appended; False when held back."""
        held = self.admit(kind)
        if held is None:
            return False
        logger.log(level, msg + self.repeats(held), *args)
        return True

    def repeats(self, held: int) -> str:
        """The suffix that counts what was held back (empty for none)."""
        return f" (and {held} more like it in the last {self.interval_s:g} s)" if held else ""


class OutageLogFilter(logging.Filter):
    """A logging filter for records that carry an outage error (`exc_info` an error of
    shared.outages): one line per logger, message and error type per interval, the error's first
    line instead of its traceback, the repeats counted. Other records pass unchanged."""

    def __init__(self, interval_s: float = DEFAULT_INTERVAL_S, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.throttle = LogThrottle(interval_s, clock)

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        dependency = unreachable(exc)
        if exc is None or dependency is None:
            return True
        held = self.throttle.admit((record.name, str(record.msg), type(exc).__name__))
        if held is None:
            return False
        first_line = (record.getMessage().splitlines() or [""])[0]
        record.msg = f"{first_line} [{dependency} unreachable: {describe(exc)}]{self.throttle.repeats(held)}"
        record.args = None
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return True


class RepeatLogFilter(logging.Filter):
    """A logging filter for records that say the same thing on every try of a loop that has no
    exception to show (a worker reconnecting to its broker logs each attempt): `kind_of` names the
    kind of such a record (None for any other record, which passes unchanged); one line per kind
    per interval, its lines joined, the repeats counted."""

    def __init__(
        self,
        kind_of: Callable[[logging.LogRecord], Hashable | None],
        interval_s: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__()
        self.kind_of = kind_of
        self.throttle = LogThrottle(interval_s, clock)

    def filter(self, record: logging.LogRecord) -> bool:
        kind = self.kind_of(record)
        if kind is None:
            return True
        held = self.throttle.admit(kind)
        if held is None:
            return False
        one_line = " ".join(part.strip() for part in record.getMessage().splitlines() if part.strip())
        record.msg = one_line + self.throttle.repeats(held)
        record.args = None
        return True


def install_outage_filter(
    logger: logging.Logger | None = None,
    interval_s: float = DEFAULT_INTERVAL_S,
    repeats: Callable[[logging.LogRecord], Hashable | None] | None = None,
) -> None:
    """Put one `OutageLogFilter` (and, given `repeats`, one `RepeatLogFilter` of those kinds) on
    every handler of `logger` (the root logger by default), so they see the records of every logger
    that propagates there; once per handler."""
    target = logger or logging.getLogger()
    shared_filters: list[logging.Filter] = [OutageLogFilter(interval_s)]
    if repeats is not None:
        shared_filters.append(RepeatLogFilter(repeats, interval_s))
    for handler in target.handlers:
        for shared_filter in shared_filters:
            if not any(isinstance(f, type(shared_filter)) for f in handler.filters):
                handler.addFilter(shared_filter)
