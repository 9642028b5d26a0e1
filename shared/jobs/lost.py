"""Queued long jobs whose chunk message is gone from the broker: found within seconds, sent again.

The check of services/match_runner/lost.py, for chunk messages: a job's chunk message can vanish as
a match's play message can (Redis restarted without its append-only file, the last second of writes
before a crash, a send that failed after its commit, a retry a worker dropped with its connection),
and the reaper's `job_resend_after_s` (fifteen minutes) cannot tell a lost message from a long
queue. This check reads what the broker holds (shared.broker_contents) on the queue each job row
names, and sends again the chunk of every job queued for longer than `lost_message_grace_s` whose
message, for that job and that chunk, is neither waiting in the queue nor taken by a worker in two
looks apart (or was taken more than `lost_message_reserved_s` ago while the job stayed queued: a
worker claims what it takes at once). A needless resend is harmless: the chunk's claim makes a
duplicate a no-op.

It needs no trainer or evolver code, since each row names its chunk task and queue: the match
runner's beat runs it with the play-message check (`arena.matches.resend_lost`), as it runs the job
reaper.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable

import redis

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
from shared.jobs.store import ChunkMessage, mark_chunks_resent, queued_chunks_before
from shared.logging_throttle import LogThrottle

log = logging.getLogger(__name__)

_KIND = LostMessages("chunk message", "queued jobs", log, LogThrottle())

ChunkKey = tuple[str, uuid.UUID, int]
"""A chunk message as the check compares them: (task name, job id, chunk)."""


def _key(message: ChunkMessage) -> ChunkKey:
    return message.task_name, message.job_id, message.chunk


def held_chunks(messages: Iterable[HeldMessage], reserved_s: float, now: float) -> set[ChunkKey]:
    """The chunks whose message is among `messages` and live (`is_live`); a message for another
    chunk of the same job (a duplicate of one already run) protects nothing."""
    held = set()
    for message in messages:
        if len(message.args) < 2 or not is_live(message, reserved_s, now):
            continue
        try:
            held.add((message.task, uuid.UUID(str(message.args[0])), int(message.args[1])))
        except (ValueError, TypeError):
            continue  # not a chunk message: nothing of a job to protect here
    return held


def find_lost_chunks(
    client: redis.Redis,
    candidates: Iterable[ChunkMessage],
    settings: Settings,
    confirm_after_s: float = CONFIRM_AFTER_S,
    sleep: Callable[[float], None] = time.sleep,
) -> set[uuid.UUID]:
    """The jobs among `candidates` whose chunk message the broker holds live neither in the job's
    queue nor as taken by a worker, in two looks `confirm_after_s` apart. UnreadableBroker when it
    cannot tell."""
    wanted = {_key(message): message.job_id for message in candidates}
    queues = sorted({message.queue for message in candidates})

    def held() -> set[ChunkKey]:
        now = time.time()
        found: set[ChunkKey] = set()
        for queue in queues:
            messages = held_messages(client, queue, settings.lost_message_scan_limit)
            found |= held_chunks(messages, settings.lost_message_reserved_s, now)
        return found

    return {wanted[key] for key in missing_twice(wanted, held, confirm_after_s, sleep)}


def resend_lost_chunks(
    settings: Settings,
    client: redis.Redis | None = None,
    send: Callable[[ChunkMessage], None] = ChunkMessage.send,
    sleep: Callable[[float], None] = time.sleep,
) -> list[uuid.UUID]:
    """Send again the chunk message of every queued job the broker lost; returns those jobs.
    The reaper's `job_resend_after_s` remains the fallback for what the check cannot see
    (`resend_lost`)."""
    candidates = queued_chunks_before(settings.lost_message_grace_s)
    if not candidates:
        return []

    def find() -> set[uuid.UUID]:
        return find_lost_chunks(
            client or broker_client(settings.redis_url), candidates, settings, sleep=sleep
        )

    resent = resend_lost(
        _KIND,
        find,
        lambda lost: mark_chunks_resent(lost, settings.lost_message_grace_s),
        send,
        lambda message: f"chunk {message.chunk} of job {message.job_id}",
    )
    return [message.job_id for message in resent]
