"""The workers' Celery consumer: Celery's own, made to outlive losing Redis while it holds messages.

Celery 5.7 with kombu 5.7's Redis transport closes a lost broker connection after collecting it.
When the worker holds unacknowledged messages at that moment (a match being played: late acks; a
retry waiting out its countdown), closing the channel tries to put them back on the queue through
the transport the collect already released, and the AttributeError that follows ends the worker
("Unrecoverable error") on any Redis outage, however short. Nothing needs putting back: the
messages are still in Redis's unacked hash (or were lost with Redis, which the lost-message check
of services/match_runner/lost.py recovers), and their tasks run on. So that error is caught, said
once per interval, and the consumer reconnects as it does after any lost connection.

It also caps the wait between reconnection tries at `Settings.broker_reconnect_max_s` (kombu
waits 2 s, 4 s, 6 s... up to 30 s): after an outage of minutes, a worker whose next try was 30 s
away would leave its matches waiting that long past Redis's return.

Installed through Celery's documented `worker_consumer` setting (shared.queue); it changes nothing
else. tests/match_runner/test_broker_outage.py loses Redis under a worker that holds messages.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from celery.worker.consumer import Consumer

from shared.config import get_settings
from shared.logging_throttle import LogThrottle

log = logging.getLogger(__name__)
_close_log = LogThrottle()


class ArenaConsumer(Consumer):
    def on_connection_error_after_connected(self, exc: Exception) -> None:
        try:
            super().on_connection_error_after_connected(exc)
        except AttributeError as error:
            _close_log.log(
                log,
                logging.WARNING,
                "close",
                "the lost broker connection could not be closed cleanly (%r); reconnecting anyway",
                error,
            )

    def ensure_connected(self, conn: Any) -> Any:
        """Celery's, with kombu's tries 1 s, 2 s, 3 s... apart, at most `broker_reconnect_max_s`
        (through kombu's documented `ensure_connection` parameters)."""
        cap = get_settings().broker_reconnect_max_s
        step = min(1.0, cap)
        conn.ensure_connection = functools.partial(
            conn.ensure_connection, interval_start=step, interval_step=step, interval_max=cap
        )
        return super().ensure_connected(conn)
