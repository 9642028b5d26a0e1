"""Lost play messages: a queued match whose message vanished from the broker is sent again by the
reaper once it has waited `lost_match_after_s`, and is then played once and rated once; a message
that was not lost makes the resend a harmless duplicate.

The reaper works on the whole matches table, so these tests backdate their own matches by days and
reap with thresholds of days: leftovers of other test modules are never touched.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis
from sqlalchemy import select, update

from services.match_runner.store import ReapedMatches, reap_stale
from services.match_runner.tasks import TASK_REAP_STALE, reap_matches
from shared.db.models import Match, Replay
from shared.db.session import session_scope
from shared.matches import TASK_PLAY_MATCH
from shared.queue import QUEUE_MATCHES, send_task
from shared.states import MatchStatus
from tests.support.bot_processes import RunningBot
from tests.support.broker import list_items, remove_from_list
from tests.support.environment import TEST_REDIS_URL
from tests.support.match_runner import assert_rated_exactly_once, queue_match, start_worker, wait_for_match
from tests.support.processes import ManagedProcess

pytestmark = pytest.mark.slow

DAY = timedelta(days=1).total_seconds()
THRESHOLD_S = 5 * DAY
"""Stale and lost thresholds of the reaper rounds in these tests: only backdated rows qualify."""
WORKER_LOST_AFTER_S = 3600
"""The module worker's own `lost_match_after_s`, for the beat task's round."""


def _reap() -> ReapedMatches:
    return reap_matches(THRESHOLD_S, 3, THRESHOLD_S)


def _broker() -> redis.Redis:
    return redis.Redis.from_url(TEST_REDIS_URL)


def _messages(match_id: uuid.UUID) -> list[tuple[str, bytes]]:
    """(list key, raw message) of every play message for this match waiting in the broker. Found by
    the match id a message carries, in whichever list the transport keeps the queue."""
    client = _broker()
    needle = str(match_id).encode()
    found: list[tuple[str, bytes]] = []
    for key in client.scan_iter():
        if client.type(key) == b"list":
            name = key.decode()
            found += [(name, raw) for raw in list_items(client, name) if needle in raw]
    return found


def _lose_message(match_id: uuid.UUID) -> None:
    """Delete the match's play message from the broker, as a Redis restart without persistence would."""
    messages = _messages(match_id)
    assert len(messages) == 1, messages
    key, raw = messages[0]
    assert remove_from_list(_broker(), key, raw) == 1
    assert _messages(match_id) == []


def _sent_ago(match_id: uuid.UUID, age: timedelta) -> None:
    with session_scope() as session:
        session.execute(update(Match).where(Match.id == match_id).values(sent_at=datetime.now(UTC) - age))


def _assert_played_and_rated_once(match_id: uuid.UUID) -> None:
    """Finished by its first claim, one replay, and each bot's rating exactly one update from the
    default (bots are registered fresh for each match, so this match is their only one)."""
    with session_scope() as session:
        match = session.get(Match, match_id)
        assert match is not None
        assert (match.status, match.attempts) == (MatchStatus.FINISHED, 1), match.error
        assert session.scalar(select(Replay.frames).where(Replay.match_id == match_id))
    participants = assert_rated_exactly_once(match_id)
    assert all(p.rank is not None for p in participants)


def _cancel(match_id: uuid.UUID) -> None:
    """Take a DB-only test's match out of every later reaper round."""
    with session_scope() as session:
        session.execute(update(Match).where(Match.id == match_id).values(status=MatchStatus.CANCELLED))


@pytest.fixture(scope="module")
def start_player(database_url: str, redis_url: str) -> Iterator[Callable[[], ManagedProcess]]:  # noqa: ARG001 (requested for its side effect)
    """Starts the module's worker when first called: until then, messages wait in the broker for
    the tests to delete or duplicate."""
    started: list[ManagedProcess] = []

    def _start() -> ManagedProcess:
        if not started:
            env = {"ARENA_LOST_MATCH_AFTER_S": str(WORKER_LOST_AFTER_S)}
            started.append(start_worker("lost-messages-worker", env))
        return started[0]

    yield _start
    for process in started:
        process.stop()


@pytest.fixture
def pair(good_bot: RunningBot, register_bot: Callable[..., uuid.UUID]) -> Callable[[], list[uuid.UUID]]:
    """Two new bot rows (one bot process behind both): a match of their own, so their ratings show
    exactly how often that match was rated."""
    return lambda: [register_bot(good_bot), register_bot(good_bot)]


def test_a_lost_message_is_resent_once_overdue_then_played_and_rated_once(
    start_player: Callable[[], ManagedProcess], pair: Callable[[], list[uuid.UUID]]
) -> None:
    lost = queue_match(pair(), seed=31)
    overdue = queue_match(pair(), seed=32)  # its message is NOT lost: the resend is a duplicate
    with session_scope() as session:
        created = session.get(Match, lost)
        assert created is not None
        assert created.sent_at > datetime.now(UTC) - timedelta(minutes=1)
    _lose_message(lost)

    # Just younger than the threshold: lost or not, the reaper cannot tell yet and waits.
    _sent_ago(lost, timedelta(seconds=THRESHOLD_S - 60))
    _sent_ago(overdue, timedelta(seconds=THRESHOLD_S - 60))
    assert not {lost, overdue} & set(_reap().resent)
    assert _messages(lost) == []
    assert len(_messages(overdue)) == 1

    # Past it: both are sent again, once; the next round finds them freshly sent.
    _sent_ago(lost, timedelta(seconds=THRESHOLD_S + 60))
    _sent_ago(overdue, timedelta(seconds=THRESHOLD_S + 60))
    reaped = _reap()
    assert {lost, overdue} <= set(reaped.resent)
    assert not {lost, overdue} & set(reaped.requeued)
    assert len(_messages(lost)) == 1
    assert len(_messages(overdue)) == 2
    assert not {lost, overdue} & set(_reap().resent)
    with session_scope() as session:
        assert session.get(Match, lost).status == MatchStatus.QUEUED  # type: ignore[union-attr]

    worker = start_player()
    assert wait_for_match(lost, worker).status == MatchStatus.FINISHED
    assert wait_for_match(overdue, worker).status == MatchStatus.FINISHED
    worker.wait_log(f"match {overdue} is not ours to play", timeout=30)  # the duplicate: skipped
    _assert_played_and_rated_once(lost)
    _assert_played_and_rated_once(overdue)

    # Finished: no reaper round sends it again, and a stray duplicate replays and rates nothing.
    _sent_ago(lost, timedelta(seconds=THRESHOLD_S + 60))
    assert lost not in _reap().resent
    send_task(TASK_PLAY_MATCH, QUEUE_MATCHES, args=[str(lost)])
    worker.wait_log(f"match {lost} is not ours to play", timeout=30)
    assert f"playing match {lost} (podracing, attempt 2)" not in worker.log()
    _assert_played_and_rated_once(lost)


def test_the_beat_reaper_task_resends_a_match_whose_message_never_arrived(
    start_player: Callable[[], ManagedProcess], pair: Callable[[], list[uuid.UUID]]
) -> None:
    """Through the real task on a worker (its `lost_match_after_s` is an hour): a match committed
    but never sent (a failed send, a broker restart right after) is played once the reaper runs."""
    worker = start_player()
    match_id = queue_match(pair(), seed=33, send=False)
    _sent_ago(match_id, timedelta(seconds=WORKER_LOST_AFTER_S + 600))
    send_task(TASK_REAP_STALE, QUEUE_MATCHES)
    assert wait_for_match(match_id, worker).status == MatchStatus.FINISHED
    assert "lost match messages" in worker.log()
    _assert_played_and_rated_once(match_id)


@pytest.mark.usefixtures("database_url")
def test_a_requeued_match_is_not_also_resent_in_the_same_round(
    register_bot: Callable[..., uuid.UUID],
) -> None:
    match_id = queue_match([register_bot(), register_bot()], send=False)
    long_ago = datetime.now(UTC) - timedelta(days=10)
    with session_scope() as session:
        session.execute(
            update(Match)
            .where(Match.id == match_id)
            .values(status=MatchStatus.RUNNING, attempts=1, heartbeat_at=long_ago, sent_at=long_ago)
        )
    reaped = reap_stale(THRESHOLD_S, 3, THRESHOLD_S)
    assert match_id in reaped.requeued
    assert match_id not in reaped.resent
    assert reaped.to_send().count(match_id) == 1
    with session_scope() as session:
        match = session.get(Match, match_id)
        assert match is not None
        assert match.status == MatchStatus.QUEUED
        assert match.sent_at > datetime.now(UTC) - timedelta(minutes=1)
    assert match_id not in reap_stale(THRESHOLD_S, 3, THRESHOLD_S).resent
    _cancel(match_id)


@pytest.mark.usefixtures("database_url")
def test_concurrent_reapers_resend_a_match_once(register_bot: Callable[..., uuid.UUID]) -> None:
    match_id = queue_match([register_bot(), register_bot()], send=False)
    _sent_ago(match_id, timedelta(days=10))
    barrier = threading.Barrier(4)
    rounds: list[ReapedMatches] = []

    def reaper() -> None:
        barrier.wait()
        rounds.append(reap_stale(THRESHOLD_S, 3, THRESHOLD_S))

    threads = [threading.Thread(target=reaper) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(r.resent.count(match_id) for r in rounds) == 1
    _cancel(match_id)
