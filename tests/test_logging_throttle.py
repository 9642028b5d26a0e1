"""shared.logging_throttle and shared.outages: one line per failure kind per interval, with the
count of repeats; tracebacks only for what is not an outage."""

from __future__ import annotations

import logging

import pytest
import redis.exceptions
from celery.worker.consumer import consumer as celery_consumer
from kombu.exceptions import OperationalError as BrokerError
from sqlalchemy import exc as sa_exc

from shared.logging_throttle import LogThrottle, OutageLogFilter, RepeatLogFilter
from shared.outages import Dependency, unreachable
from shared.queue import broker_reconnect

# The worker consumer's logger and reconnection templates (celery-types' stub of the module leaves
# them out).
CONSUMER_LOGGER: str = celery_consumer.logger.name  # type: ignore[attr-defined]
CONNECTION_RETRY: str = celery_consumer.CONNECTION_RETRY  # type: ignore[attr-defined]
CONNECTION_ERROR: str = celery_consumer.CONNECTION_ERROR  # type: ignore[attr-defined]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def database_down() -> sa_exc.OperationalError:
    driver = ConnectionRefusedError("connection refused\n\tIs the server running on that host?")
    return sa_exc.OperationalError("SELECT 1", {}, driver)


def record_with(
    exc: BaseException, msg: str = "ladder tick failed for %s", *args: object
) -> logging.LogRecord:
    try:
        raise exc
    except BaseException as raised:
        info = (type(raised), raised, raised.__traceback__)
    return logging.LogRecord("arena.test", logging.ERROR, __file__, 1, msg, args or ("podracing",), info)


def test_throttle_logs_the_first_counts_repeats_and_reports_them_after_the_interval() -> None:
    clock = Clock()
    throttle = LogThrottle(interval_s=60, clock=clock)
    assert throttle.admit("db") == 0
    for _ in range(99):
        clock.now += 0.5
        assert throttle.admit("db") is None
    assert throttle.admit("redis") == 0  # kinds are counted apart
    clock.now = 60.0
    assert throttle.admit("db") == 99
    assert throttle.admit("db") is None


def test_throttle_log_appends_the_count(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    throttle = LogThrottle(interval_s=10, clock=clock)
    logger = logging.getLogger("arena.test.throttle")
    with caplog.at_level(logging.WARNING, logger=logger.name):
        for second in range(25):
            clock.now = float(second)
            throttle.log(logger, logging.WARNING, "db", "database unreachable (%s)", "refused")
    assert caplog.messages == [
        "database unreachable (refused)",
        "database unreachable (refused) (and 9 more like it in the last 10 s)",
        "database unreachable (refused) (and 9 more like it in the last 10 s)",
    ]


def test_outage_filter_turns_tracebacks_into_one_counted_line_per_interval() -> None:
    clock = Clock()
    outage_filter = OutageLogFilter(interval_s=60, clock=clock)
    first = record_with(database_down())
    assert outage_filter.filter(first)
    assert first.exc_info is None
    assert first.getMessage() == (
        "ladder tick failed for podracing [database unreachable: OperationalError: "
        "(builtins.ConnectionRefusedError) connection refused]"
    )
    kept = [outage_filter.filter(record_with(database_down(), "ladder tick failed for %s", "battle"))]
    for _ in range(9):
        clock.now += 1
        kept.append(outage_filter.filter(record_with(database_down())))
    assert kept == [False] * 10  # the same template and error type: one kind, whichever game
    clock.now = 60.0
    later = record_with(database_down())
    assert outage_filter.filter(later)
    assert later.getMessage().endswith("(and 10 more like it in the last 60 s)")


def test_outage_filter_keeps_the_traceback_of_the_unexpected() -> None:
    outage_filter = OutageLogFilter(interval_s=60, clock=Clock())
    for _ in range(3):
        record = record_with(KeyError("bot"))
        assert outage_filter.filter(record)
        assert record.exc_info is not None
        assert record.getMessage() == "ladder tick failed for podracing"
    plain = logging.LogRecord("arena.test", logging.INFO, __file__, 1, "hello", None, None)
    assert outage_filter.filter(plain)


def _reconnect_record(msg: str, *args: object, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord(CONSUMER_LOGGER, level, __file__, 1, msg, args, None)


def test_a_workers_reconnection_attempts_are_said_once_per_interval_on_one_line() -> None:
    """Celery logs every try (2 to 30 s apart, for as long as Redis is away) as two lines, with no
    exception to recognise it by: the records are told apart by Celery's own templates."""
    clock = Clock()
    repeat_filter = RepeatLogFilter(broker_reconnect, interval_s=60, clock=clock)
    url, error = "redis://:**@127.0.0.1:6379/0", "Error 111 connecting to 127.0.0.1:6379. Connection refused."
    lost = _reconnect_record("%s (%r)", CONNECTION_RETRY, ConnectionError(error), level=logging.WARNING)
    assert repeat_filter.filter(lost)
    tries = [
        _reconnect_record(CONNECTION_ERROR, url, error, f"Trying again in {n * 2}.00 seconds... ({n}/None)")
        for n in range(1, 30)
    ]
    kept = []
    for attempt in tries:
        clock.now += 4
        kept.append(repeat_filter.filter(attempt))
    assert kept == [False] * 14 + [True] + [False] * 14  # the one said a minute after the loss
    said = tries[14].getMessage()
    assert "\n" not in said
    assert said.startswith(f"consumer: Cannot connect to {url}: {error}. Trying again in 30.00 seconds")
    assert said.endswith("(and 14 more like it in the last 60 s)")
    other = _reconnect_record("consumer: something else entirely")
    assert repeat_filter.filter(other)
    assert other.getMessage() == "consumer: something else entirely"
    elsewhere = _reconnect_record(CONNECTION_ERROR, "a", "b", "c")
    elsewhere.name = "arena.test"
    assert broker_reconnect(elsewhere) is None


def test_beat_style_multiline_message_becomes_one_line() -> None:
    """celery.beat logs 'Message Error: %s\\n%s' with the whole stack in the second argument."""
    record = record_with(
        BrokerError("Error 111 connecting to 127.0.0.1:6379."), "Message Error: %s\n%s", "x", "stack"
    )
    assert OutageLogFilter(clock=Clock()).filter(record)
    assert "\n" not in record.getMessage()
    assert record.getMessage().startswith("Message Error: x [redis unreachable: OperationalError: Error 111")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (database_down(), Dependency.DATABASE),
        (sa_exc.InterfaceError("SELECT 1", {}, Exception("connection already closed")), Dependency.DATABASE),
        (sa_exc.TimeoutError("QueuePool limit reached"), Dependency.DATABASE),
        (redis.exceptions.ConnectionError("Error 111"), Dependency.REDIS),
        (BrokerError("Error 111"), Dependency.REDIS),
        (sa_exc.IntegrityError("INSERT", {}, Exception("duplicate key")), None),
        (ValueError("a bug"), None),
    ],
)
def test_unreachable_names_the_dependency(error: BaseException, expected: Dependency | None) -> None:
    assert unreachable(error) is expected


def _load_match_while_the_database_is_down() -> None:
    try:
        raise database_down()
    except sa_exc.OperationalError as outage:
        raise RuntimeError("cannot load the match") from outage


def test_unreachable_looks_at_what_an_error_was_raised_from() -> None:
    with pytest.raises(RuntimeError, match="cannot load the match") as wrapped:
        _load_match_while_the_database_is_down()
    assert unreachable(wrapped.value) is Dependency.DATABASE
