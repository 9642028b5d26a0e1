"""The ladder scheduler: who gets a match, against whom, and never more than the pending cap."""

from __future__ import annotations

import random
import time
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
import redis
from sqlalchemy import select, update

from services.match_runner.ladder import Candidate, in_reach, ladder_tick, plan_pairings, within_reach
from shared import ratings
from shared.config import Settings
from shared.db.models import Bot, Match, MatchParticipant, Rating
from shared.db.session import session_scope
from shared.queue import QUEUE_MATCHES
from tests.support.broker import list_items, remove_from_list
from tests.support.match_runner import start_worker

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _candidate(
    ordinal: float, *, waited_h: float | None = 1.0, sigma: float = 3.0, busy: int = 0
) -> Candidate:
    last = None if waited_h is None else NOW - timedelta(hours=waited_h)
    return Candidate(uuid.uuid4(), last, sigma, ordinal, busy)


def test_seed_is_the_bot_that_never_played_then_the_longest_waiting() -> None:
    never = _candidate(5.0, waited_h=None)
    old = _candidate(5.0, waited_h=10)
    recent = _candidate(5.0, waited_h=0.1)
    assert min([recent, old, never], key=Candidate.seed_key) is never
    assert min([recent, old], key=Candidate.seed_key) is old


def test_seed_ties_go_to_the_highest_sigma_and_busy_bots_wait() -> None:
    sure = _candidate(5.0, waited_h=None, sigma=2.0)
    unsure = _candidate(5.0, waited_h=None, sigma=6.0)
    assert min([sure, unsure], key=Candidate.seed_key) is unsure
    unsure.busy = 1
    assert min([sure, unsure], key=Candidate.seed_key) is sure


def test_opponents_are_close_in_rating() -> None:
    rng = random.Random(3)
    for _ in range(50):
        seed = _candidate(10.0, waited_h=None)
        near = [_candidate(9.0), _candidate(11.5), _candidate(12.0)]
        far = [_candidate(-20.0), _candidate(40.0), _candidate(30.0)]
        (pair,) = plan_pairings([*far, seed, *near], 1, 2, rng)
        assert seed.bot_id in pair
        (opponent,) = set(pair) - {seed.bot_id}
        assert opponent in {c.bot_id for c in near}


def test_slots_are_randomised_and_pairings_spread_over_bots() -> None:
    rng = random.Random(5)
    bots = [_candidate(float(i), waited_h=float(i)) for i in range(6)]
    pair = [_candidate(0.0, waited_h=None), _candidate(1.0)]
    seen_first = set()
    for _ in range(20):
        for candidate in pair:
            candidate.busy = 0
        (pairing,) = plan_pairings(pair, 1, 2, rng)
        assert sorted(map(str, pairing)) == sorted(str(c.bot_id) for c in pair)
        seen_first.add(pairing[0])
    assert len(seen_first) == 2  # the seed does not always take slot 0
    pairings = plan_pairings(bots, 3, 2, rng)
    assert len(pairings) == 3
    assert len({bot for pair in pairings for bot in pair}) >= 5  # the busy count spreads the seeds


def test_not_enough_bots_means_no_match() -> None:
    assert plan_pairings([_candidate(0.0)], 4, 2, random.Random(1)) == []


@pytest.mark.usefixtures("ladder_world")
def test_ladder_tick_respects_the_pending_cap_and_queues_real_tasks(
    register_bot: Callable[..., uuid.UUID], redis_url: str
) -> None:
    bot_ids = [register_bot() for _ in range(4)]
    waited = register_bot()
    with session_scope() as session:
        for index, bot_id in enumerate(bot_ids):
            session.get(Bot, bot_id).last_match_at = datetime.now(UTC) - timedelta(minutes=index)  # type: ignore[union-attr]
            row = ratings.new_rating(bot_id, "podracing")
            row.mu, row.sigma = 20.0 + index, 2.0
            row.ordinal = ratings.ordinal(row.mu, row.sigma)
            session.add(row)
        session.get(Bot, waited).last_match_at = datetime.now(UTC) - timedelta(days=3)  # type: ignore[union-attr]
    settings = Settings(dev_mode=True, ladder_max_pending=3)

    created = ladder_tick(settings, random.Random(9))
    assert len(created) == 3
    assert redis.Redis.from_url(redis_url).llen(QUEUE_MATCHES) == 3
    with session_scope() as session:
        matches = session.scalars(select(Match).where(Match.id.in_(created))).all()
        assert all(m.kind == "ladder" for m in matches)
        assert all(m.rated for m in matches)
        assert all(m.status == "queued" for m in matches)
        first = session.scalars(
            select(MatchParticipant.bot_id).join(Match).where(Match.id.in_(created))
        ).all()
    assert waited in first  # the bot that waited three days plays
    assert ladder_tick(settings, random.Random(9)) == []  # cap reached: nothing more

    with session_scope() as session:
        session.execute(update(Match).where(Match.id == created[0]).values(status="finished"))
    assert len(ladder_tick(settings, random.Random(9))) == 1  # one slot freed, one new match
    assert redis.Redis.from_url(redis_url).llen(QUEUE_MATCHES) == 4
    with session_scope() as session:
        assert session.scalars(select(Rating).where(Rating.bot_id == waited)).first() is None


@pytest.mark.usefixtures("ladder_world")
def test_a_ladder_match_whose_message_was_lost_does_not_hold_its_slot_without_one(
    register_bot: Callable[..., uuid.UUID], redis_url: str
) -> None:
    """A pending ladder match counts against the cap only with a message a worker will get: a round
    first sends again what the broker lost (before, the lost match held its slot, unplayed, until
    the reaper's lost_match_after_s: ten minutes of a stalled ladder)."""
    from services.match_runner.tasks import ladder_round

    broker = redis.Redis.from_url(redis_url)
    for _ in range(2):
        register_bot()
    settings = Settings(dev_mode=True, ladder_max_pending=1, lost_message_grace_s=30)
    (match_id,) = ladder_round(settings, random.Random(2))
    needle = str(match_id).encode()
    (message,) = [raw for raw in list_items(broker, QUEUE_MATCHES) if needle in raw]
    remove_from_list(broker, QUEUE_MATCHES, message)  # lost, as in a Redis restart without persistence
    with session_scope() as session:
        session.execute(
            update(Match).where(Match.id == match_id).values(sent_at=datetime.now(UTC) - timedelta(minutes=1))
        )

    assert ladder_round(settings, random.Random(2)) == []  # the cap holds: the match is pending...

    waiting = [raw for raw in list_items(broker, QUEUE_MATCHES) if needle in raw]
    assert len(waiting) == 1, "...and has its message again"


@pytest.mark.usefixtures("ladder_world")
def test_ladder_seats_the_games_ladder_size_even_when_more_bots_could_play(
    register_bot: Callable[..., uuid.UUID],
) -> None:
    """battle allows up to 4 players in a challenge, but its ladder plays one-on-one."""
    bot_ids = [register_bot() for _ in range(6)]
    with session_scope() as session:
        session.execute(update(Bot).where(Bot.id.in_(bot_ids)).values(game="battle"))
    created = ladder_tick(Settings(dev_mode=True, ladder_max_pending=2), random.Random(4))
    assert len(created) == 2
    with session_scope() as session:
        for match_id in created:
            match = session.get(Match, match_id)
            assert match is not None
            assert match.game == "battle"
            assert len(match.participants) == 2


@pytest.mark.slow
@pytest.mark.usefixtures("ladder_world", "redis_url")
def test_a_stale_ladder_tick_expires_instead_of_scheduling(register_bot: Callable[..., uuid.UUID]) -> None:
    """Beat ticks wait behind matches in the queue; one older than its interval must not run late
    (a backlog of them once scheduled matches for bots that had since gone away)."""
    from services.match_runner.tasks import TASK_LADDER_TICK
    from services.match_runner.worker import beat_schedule
    from shared.queue import send_task

    for _ in range(2):
        register_bot()
    entry = beat_schedule(Settings(dev_mode=True, ladder_interval_s=2.0))["ladder"]
    assert entry["options"]["expires"] == 2.0
    send_task(TASK_LADDER_TICK, QUEUE_MATCHES, expires=0.5)
    time.sleep(1.0)  # the tick waits in the queue past its expiry, as behind a long match
    worker = start_worker("stale-tick")
    try:
        worker.wait_log("Discarding revoked task: arena.matches.ladder_tick", timeout=30)
        time.sleep(1.0)
        log = worker.log()
    finally:
        worker.stop()
    with session_scope() as session:
        pending = session.scalars(select(Match).where(Match.kind == "ladder", Match.status == "queued")).all()
    assert pending == [], "an expired ladder tick scheduled matches"
    assert "ladder_tick" not in log.split("Discarding revoked task", 1)[1].split("\n", 1)[1]


def test_reach_allows_for_uncertainty_and_keeps_the_nearest() -> None:
    """A newcomer (sigma 8.3) reaches bots far in mu; two well-known bots far apart do not reach
    each other unless one is among the other's nearest few (ladder.py defines reach)."""
    newcomer = Candidate(uuid.uuid4(), None, ratings.default_sigma(), 0.0, mu=ratings.default_mu())
    field = [Candidate(uuid.uuid4(), NOW, 1.0, mu - 3.0, mu=mu) for mu in (5.0, 15.0, 30.0, 40.0, 46.0)]
    assert {c.bot_id for c in in_reach(newcomer, field, 5.0)} == {c.bot_id for c in field}
    low, *_, high = field
    assert not within_reach(low, high, 5.0)
    assert high.bot_id not in {c.bot_id for c in in_reach(low, [*field, newcomer], 5.0)}
    assert len(in_reach(low, field, 0.0)) == 3  # the nearest three always


def test_the_least_met_opponent_in_reach_is_preferred() -> None:
    rng = random.Random(11)
    seed = _candidate(10.0, waited_h=None)
    rivals = [_candidate(10.5), _candidate(9.5), _candidate(11.0)]
    met = Counter({frozenset((seed.bot_id, rival.bot_id)): 6 for rival in rivals[:2]})
    picks: Counter[uuid.UUID] = Counter()
    for _ in range(200):
        for candidate in (seed, *rivals):
            candidate.busy = 0
        (pairing,) = plan_pairings([seed, *rivals], 1, 2, rng, Counter(met))
        picks.update(set(pairing) - {seed.bot_id})
    assert picks[rivals[2].bot_id] > 150, picks
