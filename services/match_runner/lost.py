"""Queued matches whose play message is gone from the broker: found within seconds, sent again.

A message can vanish between the database and the broker: Redis restarted without its append-only
file, the last second of writes before a Redis crash (appendfsync everysec), a send that failed
after its commit. The reaper resends a match still queued `lost_match_after_s` (ten minutes) after
its message was sent, because from the database alone it cannot tell a lost message from a long
queue. This check can: it reads what the broker holds (shared.broker_contents) — the messages
waiting in the matches queue and those a worker has taken and not yet acknowledged (a match being
claimed, a retry waiting out its countdown) — and sends again only the queued matches, sent at least
`lost_message_grace_s` ago, whose message is in neither place in two looks CONFIRM_AFTER_S apart (a
message a worker is taking is in neither for an instant). A message a worker took more than
`lost_message_reserved_s` ago (or whose countdown ended that long ago) while its match is still
queued counts as lost as well: a worker starts what it takes at once, so that worker let go of it
(a worker drops the messages it holds when it loses Redis, and one that died holds none; Redis
would hand it out again only after its visibility timeout, an hour). A resend that was not needed
after all would still be harmless: the claim makes the duplicate a no-op.

Run by the beat every `lost_message_check_s`, and by each ladder tick before it counts the pending
ladder matches (services/match_runner/tasks.py): a ladder match without a message never holds one
of `ladder_max_pending`'s slots past a tick.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable

import redis

from services.match_runner.store import mark_resent, queued_before
from shared.broker_contents import (
    CONFIRM_AFTER_S,
    HeldMessage,
    LostMessages,
    broker_client,
    held_messages,
    is_live,
    missing_twice,
    resend_lost,
)
from shared.config import Settings
from shared.logging_throttle import LogThrottle
from shared.matches import TASK_PLAY_MATCH, enqueue_match
from shared.queue import QUEUE_MATCHES

log = logging.getLogger(__name__)

_KIND = LostMessages("play message", "queued matches", log, LogThrottle())


def held_match_ids(messages: Iterable[HeldMessage], reserved_s: float, now: float) -> set[uuid.UUID]:
    """The matches whose play message is among `messages` and live (`is_live`)."""
    held = set()
    for message in messages:
        if message.task == TASK_PLAY_MATCH and message.args and is_live(message, reserved_s, now):
            try:
                held.add(uuid.UUID(str(message.args[0])))
            except ValueError:
                continue  # not a match id: the play task will refuse it, nothing to protect here
    return held


def find_lost(
    client: redis.Redis,
    candidates: Iterable[uuid.UUID],
    settings: Settings,
    confirm_after_s: float = CONFIRM_AFTER_S,
    sleep: Callable[[float], None] = time.sleep,
) -> set[uuid.UUID]:
    """The `candidates` whose play message the broker holds live neither in the queue nor as
    taken by a worker, in two looks `confirm_after_s` apart. UnreadableBroker when it cannot tell."""

    def held() -> set[uuid.UUID]:
        messages = held_messages(client, QUEUE_MATCHES, settings.lost_message_scan_limit)
        return held_match_ids(messages, settings.lost_message_reserved_s, time.time())

    return missing_twice(candidates, held, confirm_after_s, sleep)


def resend_lost_messages(
    settings: Settings,
    client: redis.Redis | None = None,
    send: Callable[[uuid.UUID], None] = enqueue_match,
    sleep: Callable[[float], None] = time.sleep,
) -> list[uuid.UUID]:
    """Send again the play message of every queued match the broker lost; returns those sent.
    The reaper remains the fallback for what the check cannot see (`resend_lost`)."""
    candidates = queued_before(settings.lost_message_grace_s)
    if not candidates:
        return []

    def find() -> set[uuid.UUID]:
        return find_lost(client or broker_client(settings.redis_url), candidates, settings, sleep=sleep)

    return resend_lost(
        _KIND,
        find,
        lambda lost: mark_resent(lost, settings.lost_message_grace_s),
        send,
        lambda match_id: f"match {match_id}",
    )
