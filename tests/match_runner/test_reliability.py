"""Crashes and duplicates: a worker killed mid-match, redelivered tasks, concurrent claims. Whatever
happens, a match finishes once and is rated once."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import pytest
from sqlalchemy import select

from services.match_runner.outcome import Outcome
from services.match_runner.play import run_match
from services.match_runner.store import claim_match
from services.match_runner.tasks import TASK_REAP_STALE
from shared.db.models import Match, MatchParticipant, Rating, Replay
from shared.db.session import session_scope
from shared.matches import TASK_PLAY_MATCH
from shared.queue import QUEUE_MATCHES, send_task
from shared.replay_store import load_replay
from tests.support.bot_processes import RunningBot
from tests.support.match_runner import (
    assert_rated_exactly_once,
    finished_ranks,
    queue_match,
    start_worker,
    wait_for_match,
)
from tests.support.processes import ManagedProcess


def _snapshot(match_id: uuid.UUID) -> dict[str, object]:
    """Everything a second run of a finished match could wrongly change."""
    with session_scope() as session:
        match = session.get(Match, match_id)
        assert match is not None
        participants = session.scalars(
            select(MatchParticipant)
            .where(MatchParticipant.match_id == match_id)
            .order_by(MatchParticipant.slot)
        ).all()
        bot_ids = [p.bot_id for p in participants]
        rating_rows = session.scalars(select(Rating).where(Rating.bot_id.in_(bot_ids))).all()
        replay = session.get(Replay, match_id)
        return {
            "match": (
                match.status,
                match.attempts,
                match.finished_at,
                match.turns,
                match.end_reason,
                match.worker,
            ),
            "participants": [
                (p.rank, p.score, p.mu_before, p.mu_after, p.sigma_after, p.errors, p.timeouts)
                for p in participants
            ],
            "ratings": sorted(
                (str(r.bot_id), r.mu, r.sigma, r.matches_played, r.wins, r.losses) for r in rating_rows
            ),
            "replay": load_replay(replay) if replay else None,
        }


@pytest.fixture
def slow_pair(
    bot_factory: Callable[..., RunningBot], register_bot: Callable[..., uuid.UUID]
) -> tuple[list[RunningBot], list[uuid.UUID]]:
    """Two healthy bots that take 40 ms a turn, so a 60-turn match lasts a few seconds."""
    bots = [bot_factory("ok", "--latency", "0.04") for _ in range(2)]
    return bots, [register_bot(bot) for bot in bots]


@pytest.mark.slow
@pytest.mark.usefixtures("database_url", "redis_url")
def test_worker_killed_mid_match_is_finished_and_rated_exactly_once(
    slow_pair: tuple[list[RunningBot], list[uuid.UUID]],
) -> None:
    bots, bot_ids = slow_pair
    first = start_worker("doomed-worker")
    second: ManagedProcess | None = None
    try:
        match_id = queue_match(bot_ids, seed=21)
        first.wait_until(lambda: bots[0].stats()["turns"] >= 8, 30, "the match to be under way")
        with session_scope() as session:
            running = session.get(Match, match_id)
            assert running is not None
            assert running.status == "running"
            assert running.attempts == 1
        first.kill()  # SIGKILL to the whole process group: no chance to clean up or ack
        first.proc.wait(timeout=10)
        turns_before = bots[0].stats()["turns"]

        second = start_worker("rescue-worker")
        time.sleep(2.5)  # longer than ARENA_STALE_MATCH_AFTER_S of the workers
        send_task(TASK_REAP_STALE, QUEUE_MATCHES)
        match = wait_for_match(match_id, second, timeout=60)
        assert "requeued 1 stale matches" in second.log()
    finally:
        first.stop()
        if second is not None:
            second.stop()

    assert match.status == "finished", match.error
    assert match.attempts == 2
    assert bots[0].stats()["turns"] > turns_before, "the match was replayed from the start"
    # Rated once: the stored ratings are exactly one update away from the default.
    participants = assert_rated_exactly_once(match_id)
    assert sorted(finished_ranks(participants)) in ([0, 1], [0, 0])


@pytest.mark.slow
def test_play_task_for_a_finished_match_changes_nothing(
    worker: ManagedProcess,
    good_bot: RunningBot,
    register_bot: Callable[..., uuid.UUID],
    bot_factory: Callable[..., RunningBot],
) -> None:
    other = bot_factory("ok")
    match_id = queue_match([register_bot(good_bot), register_bot(other)], seed=22)
    assert wait_for_match(match_id, worker).status == "finished"
    before = _snapshot(match_id)

    assert run_match(match_id) is Outcome.SKIPPED
    assert run_match(match_id) is Outcome.SKIPPED
    turns_seen = other.stats()["turns"]
    send_task(TASK_PLAY_MATCH, QUEUE_MATCHES, args=[str(match_id)])
    worker.wait_log(f"match {match_id} is not ours to play", timeout=30)

    assert _snapshot(match_id) == before
    assert other.stats()["turns"] == turns_seen, "a finished match was played again"


@pytest.mark.usefixtures("database_url")
def test_only_one_of_concurrent_claims_wins(register_bot: Callable[..., uuid.UUID]) -> None:
    match_id = queue_match([register_bot(), register_bot()], send=False)
    results: list[int | None] = []
    barrier = threading.Barrier(6)

    def claim() -> None:
        barrier.wait()
        results.append(claim_match(match_id, f"w-{threading.get_ident()}", stale_after_s=60))

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results, key=lambda r: r or 0) == [None] * 5 + [1]
    # A fresh heartbeat keeps the claim; a stale one lets exactly one new attempt take over.
    assert claim_match(match_id, "late", stale_after_s=60) is None
    with session_scope() as session:
        match = session.get(Match, match_id)
        assert match is not None
        assert match.heartbeat_at is not None
        match.heartbeat_at = match.heartbeat_at.replace(year=2000)
    assert claim_match(match_id, "rescuer", stale_after_s=60) == 2
    assert claim_match(match_id, "another", stale_after_s=60) is None
    with session_scope() as session:
        session.get(Match, match_id).status = "cancelled"  # type: ignore[union-attr]
