"""The evolver as a service: real evolver and match-runner worker processes on the test Redis.

- An evolver worker killed outright (kill -9) in the middle of a run: the reaper hands the run to
  another worker, which replays the chunk from its checkpoint and finds every LLM call, program and
  evaluation already recorded: nothing is paid, stored or evaluated twice.
- A promoted program is a new version of a hosted bot owned by the run's owner, and it plays a
  ladder match through a real match-runner worker.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
import redis
from sqlalchemy import select, update

from services.evolver.commands import worker_command
from shared.config import get_settings
from shared.db.models import Bot, BotVersion, EvolutionEvent, Match, User
from shared.db.session import session_scope
from shared.evolution import create_run
from shared.jobs import reap_stale_jobs
from shared.matches import create_match, enqueue_match
from shared.queue import QUEUE_MATCHES
from shared.states import BotOrigin, BotStatus, JobStatus, MatchKind, MatchStatus
from tests.support.evolver_engine import (
    PRICED_MODEL,
    PRICES,
    RUN_KEY,
    LlmStub,
    calls,
    config,
    drive,
    job_row,
    make_run,
    make_user,
    programs,
    run_row,
    stop_earlier_runs,
)
from tests.support.processes import PYTHON, ManagedProcess

HEARTBEAT_S = 0.25
STALE_AFTER_S = 2.0
WORKER_ENV = {
    "ARENA_JOB_HEARTBEAT_INTERVAL_S": str(HEARTBEAT_S),
    "ARENA_STALE_JOB_AFTER_S": str(STALE_AFTER_S),
    "ARENA_MAX_JOB_CHUNK_ATTEMPTS": "3",
}


def start_evolver(name: str) -> ManagedProcess:
    process = ManagedProcess(
        [*worker_command(name=f"{name}-{uuid.uuid4().hex[:6]}@%h", python=PYTHON), "--without-heartbeat"],
        name,
        env=WORKER_ENV,
    )
    process.wait_log("ready.", timeout=60)
    return process


def wait_for(check: Callable[[], bool], what: str, *workers: ManagedProcess, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        for worker in workers:
            if not worker.alive():
                raise AssertionError(f"{worker.name} died:\n{worker.log()[-3000:]}")
        time.sleep(0.1)
    logs = "\n".join(w.log()[-2000:] for w in workers)
    raise AssertionError(f"{what}: not within {timeout}s\n{logs}")


@pytest.fixture(autouse=True)
def _only_this_tests_work(database_url: str, redis_url: str) -> None:  # noqa: ARG001 (requested for its side effect)
    """The workers here take only what this test queues: no evolution run or match that an earlier
    test left queued (the API tests create them with no worker to take them) is played first, or
    resent by the reaper this test calls."""
    stop_earlier_runs()
    with session_scope() as session:
        session.execute(
            update(Match).where(Match.status.in_(["queued", "running"])).values(status="cancelled")
        )
    redis.Redis.from_url(redis_url).delete(QUEUE_MATCHES)


@pytest.fixture
def slow_stub() -> Iterator[LlmStub]:
    server = LlmStub(delay_s=0.4)
    yield server
    server.close()


@pytest.mark.slow
@pytest.mark.usefixtures("database_url", "redis_url")
def test_a_killed_worker_is_replaced_and_nothing_is_paid_stored_or_evaluated_twice(
    slow_stub: LlmStub,
) -> None:
    cfg = config(
        llm={
            "base_url": slow_stub.url,
            "root_model": PRICED_MODEL,
            "child_model": PRICED_MODEL,
            "prices": PRICES,
        },
        limits={"max_generations": 2, "max_children_per_generation": 2},
        chunk_seconds=120,
    )
    owner = make_user("killed")
    with session_scope() as session:
        user = session.get(User, owner)
        assert user is not None
        run = create_run(
            session, get_settings(), user, name="killed", game="battle", config=cfg, api_key=RUN_KEY
        )
        run_id, job_id = run.id, run.job_id
    doomed = start_evolver("evolver-doomed")
    rescue: ManagedProcess | None = None
    try:
        wait_for(lambda: len(calls(run_id)) >= 6, "six LLM calls recorded", doomed, timeout=120)
        doomed.kill()
        doomed.proc.wait(timeout=10)
        before = {c.key for c in calls(run_id)}
        spent_before = run_row(run_id).spent_usd
        assert job_row(job_id).status == JobStatus.RUNNING
        rescue = start_evolver("evolver-rescue")
        time.sleep(STALE_AFTER_S + 0.5)
        reap_stale_jobs(STALE_AFTER_S, 3)
        wait_for(
            lambda: job_row(job_id).status == JobStatus.FINISHED, "the run finished", rescue, timeout=240
        )
    finally:
        doomed.stop()
        if rescue is not None:
            rescue.stop()
    recorded = calls(run_id)
    keys = [c.key for c in recorded]
    assert len(keys) == len(set(keys))
    assert before <= set(keys)
    run_after = run_row(run_id)
    assert run_after.spent_usd == pytest.approx(sum(c.cost_usd for c in recorded))
    assert run_after.spent_usd >= spent_before
    assert slow_stub.count() <= len(recorded) + 1, "only the call in flight at the kill was asked again"
    rows = programs(run_id)
    assert len({p.code_hash for p in rows}) == len(rows)
    assert len({p.created_key for p in rows}) == len(rows)
    with session_scope() as session:
        event_keys = list(session.scalars(select(EvolutionEvent.key).where(EvolutionEvent.run_id == run_id)))
    assert not [k for k, n in Counter(event_keys).items() if n > 1]
    assert run_after.termination_reason is not None
    assert job_row(job_id).attempts == 0


@pytest.mark.slow
@pytest.mark.usefixtures("database_url", "redis_url")
def test_a_promoted_program_is_a_hosted_bot_that_plays_a_ladder_match() -> None:
    from tests.support.match_runner import start_worker, wait_for_match

    owner = make_user("promoter")
    run_id, job_id = make_run(
        config(limits={"max_generations": 1, "max_children_per_generation": 1}, promotion_threshold=0.0),
        owner=owner,
    )
    assert drive(job_id) == JobStatus.FINISHED
    run = run_row(run_id)
    assert run.bot_id is not None
    best = next(p for p in programs(run_id) if p.id == run.best_program_id)
    with session_scope() as session:
        bot = session.get(Bot, run.bot_id)
        assert bot is not None
        assert bot.owner_id == owner
        assert bot.origin == BotOrigin.EVOLVER
        assert bot.status == BotStatus.ACTIVE
        version = session.get(BotVersion, bot.current_version_id)
        assert version is not None
        assert version.source == best.code
        assert best.promoted_version_id == version.id
        rival = session.scalars(
            select(Bot).where(Bot.game == "battle", Bot.status == BotStatus.ACTIVE, Bot.id != bot.id)
        ).first()
        if rival is None:
            from shared import bots

            user = session.get(User, owner)
            assert user is not None
            rival = bots.register_hosted_bot(
                session,
                get_settings(),
                user,
                name=f"rival-{uuid.uuid4().hex[:6]}",
                game="battle",
                source=best.code,
            )
        match = create_match(
            session,
            game="battle",
            bot_ids=[bot.id, rival.id],
            kind=MatchKind.LADDER,
            rated=True,
            config={"time_limit_s": 4.0},
        )
        match_id = match.id
        session.commit()
    worker = start_worker("runner-for-promoted")
    try:
        enqueue_match(match_id)
        played: Match = wait_for_match(match_id, worker, timeout=90)
    finally:
        worker.stop()
    assert played.status == MatchStatus.FINISHED, played.error
    seat = next(p for p in played.participants if p.bot_id == run.bot_id)
    assert seat.bot_version_id == best.promoted_version_id
    assert not seat.forfeited


@pytest.mark.slow
@pytest.mark.usefixtures("database_url", "redis_url")
def test_the_tournament_plays_the_live_fleet_on_the_matches_queue_unrated() -> None:
    from services.evolver.seeds import seed_program
    from shared import bots
    from shared.db.models import EvolutionRun, MatchParticipant, Rating
    from tests.support.match_runner import start_worker

    owner = make_user("fleet")
    with session_scope() as session:
        user = session.get(User, owner)
        assert user is not None
        fleet = [
            bots.register_hosted_bot(
                session,
                get_settings(),
                user,
                name=f"fleet-{i}-{uuid.uuid4().hex[:6]}",
                game="battle",
                source=seed_program("battle"),
            ).id
            for i in range(2)
        ]
        played_before = {
            r.bot_id: r.matches_played
            for r in session.scalars(select(Rating).where(Rating.bot_id.in_(fleet)))
        }
    run_id, job_id = make_run(
        config(
            limits={"max_generations": 1, "max_children_per_generation": 1},
            evaluation={"tournament": "fleet", "tournament_matches": 2, "quick_matches": 1},
        ),
        owner=owner,
    )
    worker = start_worker("runner-for-tournament")
    try:
        assert drive(job_id) == JobStatus.FINISHED
    finally:
        worker.stop()
    rows = [p for p in programs(run_id) if p.status == "evaluated"]
    assert rows
    assert all(len(p.tournament_matches) == 2 for p in rows)
    with session_scope() as session:
        run = session.get(EvolutionRun, run_id)
        assert run is not None
        assert run.candidate_bot_id is not None
        candidate = session.get(Bot, run.candidate_bot_id)
        assert candidate is not None
        assert candidate.status == BotStatus.INACTIVE
        for program in rows:
            assert any(key.startswith("bot:") for key in program.metrics["per_opponent"]), "fleet results"
            for match_id in program.tournament_matches.values():
                match = session.get(Match, uuid.UUID(match_id))
                assert match is not None
                assert match.kind == MatchKind.EVALUATION
                assert not match.rated
                assert match.status == MatchStatus.FINISHED, match.error
                seat = session.scalars(
                    select(MatchParticipant).where(
                        MatchParticipant.match_id == match.id, MatchParticipant.bot_id == candidate.id
                    )
                ).one()
                assert seat.bot_version_id == program.version_id
        played_after = {
            r.bot_id: r.matches_played
            for r in session.scalars(select(Rating).where(Rating.bot_id.in_(fleet)))
        }
    assert played_after == played_before, "evaluation matches never touch the ladder's ratings"
