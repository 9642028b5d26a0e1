"""Which task messages the broker holds for a queue: waiting in it, or taken by a worker and not yet
acknowledged, read with plain Redis commands on the keys kombu's Redis transport documents.

kombu keeps a queue as Redis lists, one per priority step (`<queue>`, then `<queue><sep><step>`),
and a message a worker has taken (late acks: until its task ends; a retry with a countdown: until
it runs) in the hash `unacked`, as JSON `[message, exchange, routing_key]`, with the time it was
taken in the sorted set `unacked_index`. shared.queue sets these transport options (`unacked_key`,
`unacked_index_key`, `sep`, `priority_steps`) to the values below explicitly, so the two sides
name the same keys by construction rather than by a default that could change.

A message is Celery's protocol 2 (docs.celeryq.dev, "Message Protocol"): `headers.task` names the
task, `headers.eta` the time a countdown ends (ISO 8601, or null), and the body (base64 in Redis)
is the JSON `[args, kwargs, embed]`.

Whoever reads these to find lost messages (services/match_runner/lost.py for play messages,
shared/jobs/lost.py for long-job chunk messages) asks the same two questions: is a message one a
worker will run (`is_live`), and is a message missing in two looks (`missing_twice`)? And both
then do the same with what is missing (`resend_lost`).
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, TypeVar

import redis

from shared.logging_throttle import LogThrottle
from shared.outages import describe

UNACKED_KEY = "unacked"
"""The hash of taken, unacknowledged messages by delivery tag (kombu's `unacked_key`)."""
UNACKED_INDEX_KEY = "unacked_index"
"""When each of them was taken: delivery tag -> Unix time (kombu's `unacked_index_key`)."""
PRIORITY_SEP = "\x06\x16"
"""Between a queue's name and a priority step in the name of that step's list (kombu's `sep`)."""
PRIORITY_STEPS = (0, 3, 6, 9)
"""kombu's default priority steps: a message of any priority lands in one of these lists."""
TRANSPORT_OPTIONS: dict[str, Any] = {
    "unacked_key": UNACKED_KEY,
    "unacked_index_key": UNACKED_INDEX_KEY,
    "sep": PRIORITY_SEP,
    "priority_steps": list(PRIORITY_STEPS),
}
"""What shared.queue passes to kombu, so that the keys read here are the keys kombu writes."""
CONFIRM_AFTER_S = 0.5
"""The second look at the broker, for messages the first did not find: far longer than kombu takes
to move a message from the queue to its unacked hash (a pop, then one pipelined write, in the same
process); taken only when something seems lost."""
REDIS_TIMEOUT_S = 5.0

Key = TypeVar("Key", bound=Hashable)
Sent = TypeVar("Sent")


class UnreadableBroker(Exception):
    """The broker's contents cannot be told now: too many messages to read, or one that is not a
    Celery protocol 2 message. Whoever asked must not conclude that a message is missing."""


@dataclass(frozen=True, slots=True)
class HeldMessage:
    task: str
    args: tuple[Any, ...]
    eta: datetime | None = None
    """When its countdown ends (None: it has none)."""
    taken_at: float | None = None
    """For a message a worker has taken and not acknowledged yet: when (Unix time; None while it
    waits in the queue)."""

    @property
    def reserved(self) -> bool:
        return self.taken_at is not None


def queue_keys(queue: str) -> list[str]:
    """The Redis lists that hold `queue`'s waiting messages, one per priority step."""
    return [queue if step == 0 else f"{queue}{PRIORITY_SEP}{step}" for step in PRIORITY_STEPS]


def parse_message(raw: bytes | str | dict[str, Any], taken_at: float | None = None) -> HeldMessage:
    """One Celery protocol 2 message; UnreadableBroker for anything else."""
    try:
        message = json.loads(raw) if isinstance(raw, bytes | str) else raw
        headers = message["headers"]
        task, eta = headers["task"], headers.get("eta")
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        when = datetime.fromisoformat(eta) if isinstance(eta, str) else None
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise UnreadableBroker(f"a message that is not a Celery protocol 2 message: {exc!r}") from None
    if not isinstance(task, str) or not isinstance(args, list):
        raise UnreadableBroker("a message whose task or args are malformed")
    if when is not None and when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return HeldMessage(task, tuple(args), when, taken_at)


def held_messages(client: redis.Redis, queue: str, limit: int) -> list[HeldMessage]:
    """Every message waiting in `queue` and every message taken and not yet acknowledged (from any
    queue: the hash is shared), read in one round trip after a count. Raises UnreadableBroker when
    they are more than `limit` or one cannot be read, and redis errors when Redis cannot be reached.

    A message on its way from the queue to a worker is in neither place for an instant (kombu pops
    it, then records it as unacked): a caller that finds a message missing looks again before it
    concludes anything."""
    keys = queue_keys(queue)
    counting = client.pipeline(transaction=False)
    for key in keys:
        counting.llen(key)
    counting.hlen(UNACKED_KEY)
    total = sum(int(n) for n in counting.execute())
    if total > limit:
        raise UnreadableBroker(f"{total} messages in {queue} and taken by workers (more than {limit})")
    reading = client.pipeline(transaction=True)  # one snapshot: lists and hash read at one instant
    for key in keys:
        reading.lrange(key, 0, -1)
    reading.hgetall(UNACKED_KEY)
    reading.zrange(UNACKED_INDEX_KEY, 0, -1, withscores=True)
    *waiting_lists, unacked, index = reading.execute()
    found = [parse_message(raw) for raw in _chain(waiting_lists)]
    taken = dict(index)
    for tag, raw in unacked.items():
        try:
            message = json.loads(raw)[0]
        except (ValueError, IndexError, TypeError) as exc:
            raise UnreadableBroker(f"an unacked entry that kombu did not write: {exc!r}") from None
        found.append(parse_message(message, float(taken.get(tag, time.time()))))
    return found


def _chain(lists: Iterable[list[bytes]]) -> Iterable[bytes]:
    for items in lists:
        yield from items


@cache
def broker_client(url: str) -> redis.Redis:
    """One client per broker URL for the checks that read it, with short timeouts."""
    return redis.Redis.from_url(url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S)


def is_live(message: HeldMessage, reserved_s: float, now: float) -> bool:
    """Whether a worker will run `message`: it waits in the queue, or a worker took it (or its
    countdown ended) less than `reserved_s` ago. A worker starts what it takes at once; one that
    has held a message longer let go of it."""
    if message.taken_at is None:
        return True
    since = max(message.taken_at, message.eta.timestamp() if message.eta else 0.0)
    return now - since < reserved_s


def missing_twice(
    wanted: Iterable[Key],
    held: Callable[[], set[Key]],
    confirm_after_s: float = CONFIRM_AFTER_S,
    sleep: Callable[[float], None] = time.sleep,
) -> set[Key]:
    """Those of `wanted` that `held()` (a read of the broker) lacks in two looks `confirm_after_s`
    apart: a message on its way from the queue to a worker is in neither place for an instant."""
    missing = set(wanted) - held()
    if missing:
        sleep(confirm_after_s)
        missing -= held()
    return missing


@dataclass(frozen=True)
class LostMessages:
    """What one lost-message check resends, in the words of its log lines."""

    message: str
    """The kind of message, e.g. "play message"."""
    holders: str
    """What such messages belong to, e.g. "queued matches"."""
    log: logging.Logger
    unreadable_log: LogThrottle
    """One line per kind of broker failure and interval, however often the check runs."""


def resend_lost(
    kind: LostMessages,
    find: Callable[[], set[Key]],
    mark: Callable[[list[Key]], list[Sent]],
    send: Callable[[Sent], None],
    name: Callable[[Sent], str],
) -> list[Sent]:
    """Send again what `find()` says the broker lost, after `mark` records the resend in the
    database (which returns what to send: those another check did not take first); returns them.

    Nothing is sent when the broker cannot be read (Redis down: sends would fail too; `find` raises
    UnreadableBroker or a Redis error). A send that fails stays marked as sent now: the check finds
    it again one grace period later."""
    try:
        lost = find()
    except (UnreadableBroker, redis.RedisError) as exc:
        kind.unreadable_log.log(
            kind.log,
            logging.WARNING,
            type(exc).__name__,
            "cannot tell which %ss the broker holds (%s); none resent this round",
            kind.message,
            describe(exc),
        )
        return []
    resent = mark(sorted(lost, key=str))
    for item in resent:
        try:
            send(item)
        except Exception as exc:
            kind.log.warning(
                "could not send %s again (%s); the next check retries", name(item), describe(exc)
            )
    if resent:
        kind.log.warning(
            "sent again the %s of %d %s the broker no longer held: %s",
            kind.message,
            len(resent),
            kind.holders,
            ", ".join(name(item) for item in resent),
        )
    return resent
