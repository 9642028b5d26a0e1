"""Battle on the ladder, end to end: two hosted bots (the built-in battle bots' own source, uploaded
as is), the ladder picks and queues their match, a real celery worker plays it in bubblewrap
sandboxes, and the result, the ratings and the replay are checked against the game itself."""

from __future__ import annotations

import random
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import select, update

from services.match_runner.ladder import ladder_tick
from shared import ratings
from shared.config import Settings
from shared.db.models import Bot, Match, MatchParticipant, Rating
from shared.db.session import session_scope
from shared.games.battle.bots import BOTS
from shared.games.registry import get_game
from shared.games.replay import decompress, play_local, resimulate
from shared.queue import QUEUE_MATCHES
from shared.replay_store import load_replay
from tests.support.hosted_worker import (
    BATTLE_BOTS_SOURCE,
    register_hosted_bot,
    sandbox_dirs,
    sandbox_processes,
    start_hosted_worker,
    watch_match,
)
from tests.support.match_runner import finished_ranks

SHORT_BATTLE = {"time_limit_s": 15.0}
"""At most 75 turns (15 s of game time at 5 decisions per second)."""
STRATEGIES = ("aggressive", "defensive")


def fight_seed(strategies: list[str]) -> tuple[int, dict[str, Any]]:
    """The first seed on which both sides kill at least once within the time limit, with the
    replay of that match played in process by the same bots."""
    for seed in range(1, 40):
        replay = play_local(get_game("battle"), seed, [BOTS[s] for s in strategies], SHORT_BATTLE)
        if min(p["metrics"]["kills"] for p in replay["result"]["players"]) > 0:
            return seed, replay
    raise AssertionError(f"no seed gives kills on both sides for {strategies}")


def hosted_source(strategy: str) -> str:
    """The built-in bots' module, unchanged, plus the one entry point a hosted bot needs."""
    return f"{BATTLE_BOTS_SOURCE}\n\ndef decide(observation):\n    return {strategy}(observation)\n"


@pytest.fixture
def battle_ladder_world(database_url: str, redis_url: str) -> Iterator[None]:  # noqa: ARG001 (requested for its side effect)
    """Only this test's bots are active on any ladder, and the matches queue starts empty."""
    client = redis.Redis.from_url(redis_url)

    def clear() -> None:
        with session_scope() as session:
            session.execute(update(Bot).values(status="inactive"))
            session.execute(
                update(Match).where(Match.status.in_(["queued", "running"])).values(status="cancelled")
            )
        client.delete(QUEUE_MATCHES)

    clear()
    yield
    clear()


@pytest.mark.slow
@pytest.mark.usefixtures("battle_ladder_world")
def test_ladder_battle_between_hosted_bots_is_played_rated_and_replayable(
    owner_id: uuid.UUID, sandbox_tmp: Path, redis_url: str
) -> None:
    bots = {
        register_hosted_bot(owner_id, "battle", hosted_source(s), "decide", f"battle-{s}"): s
        for s in STRATEGIES
    }

    # The ladder's own tick: it picks the two battle bots (the only active ones) and queues a match.
    created = ladder_tick(Settings(dev_mode=True, ladder_max_pending=1), random.Random(4))
    assert len(created) == 1, created
    (match_id,) = created
    assert redis.Redis.from_url(redis_url).llen(QUEUE_MATCHES) == 1
    with session_scope() as session:
        match = session.get(Match, match_id)
        assert match is not None
        assert (match.game, match.kind, match.rated, match.status) == ("battle", "ladder", True, "queued")
        slots = {p.slot: p.bot_id for p in match.participants}
        assert set(slots.values()) == set(bots)
        # No worker runs yet: make the battle short and its map a fight before one starts.
        seed, expected = fight_seed([bots[slots[slot]] for slot in sorted(slots)])
        match.config = dict(SHORT_BATTLE)
        match.seed = seed

    worker = start_hosted_worker("battle-worker", sandbox_tmp)
    try:
        match, most_sandboxes = watch_match(match_id, worker, timeout=120)
        assert match.status == "finished", match.error
        assert most_sandboxes >= 1, "no bubblewrap sandbox was seen while the match was played"
        # Sandboxes are closed before the result is committed: nothing may be left by now.
        assert sandbox_processes(worker) == [], "a sandbox process outlived its match"
        assert sandbox_dirs(sandbox_tmp) == [], "a sandbox's files outlived its match"
    finally:
        log = worker.log()
        worker.stop()
    assert "Traceback" not in log, log[-3000:]

    participants = sorted(match.participants, key=lambda p: p.slot)
    for row in participants:
        assert row.errors == 0, row.error_samples
        assert row.timeouts == 0, row.error_samples
        assert not row.forfeited, row.error_samples
        assert row.latency_p50_ms is not None
        for key in ("kills", "deaths", "damage_dealt", "shots", "hits"):
            assert key in row.metrics, (key, row.metrics)

    # The worker played exactly the game the same bots play in process, from the same inputs.
    assert match.replay is not None
    replay = decompress(load_replay(match.replay))
    assert (replay["seed"], replay["config"], replay["num_players"]) == (seed, SHORT_BATTLE, 2)
    assert [p.metrics for p in participants] == [p["metrics"] for p in expected["result"]["players"]]
    assert [p.rank for p in participants] == [p["rank"] for p in expected["result"]["players"]]
    assert match.turns == len(expected["turns"]) <= 75

    # Metrics agree with the events the replay recorded.
    events = replay["events"]
    kills = Counter(e["player"] for e in events if e["kind"] == "kill" and not e["data"]["friendly"])
    friendly_kills = Counter(e["player"] for e in events if e["kind"] == "kill" and e["data"]["friendly"])
    deaths = Counter(e["player"] for e in events if e["kind"] == "death")
    shots = Counter(e["player"] for e in events if e["kind"] == "shot")
    hits = Counter(e["player"] for e in events if e["kind"] == "hit")
    damage: defaultdict[int, float] = defaultdict(float)
    for e in events:
        if e["kind"] == "hit":
            damage[e["player"]] += e["data"]["damage"]
    for me, row in enumerate(participants):
        other = 1 - me
        m = row.metrics
        assert m["shots"] == shots[me], m
        assert m["hits"] == hits[me], m
        assert m["kills"] == kills[me], m
        assert m["damage_dealt"] == pytest.approx(damage[me]), m
        assert m["deaths"] == deaths[me], m
        assert m["hits"] <= m["shots"]
        # Every unit one side lost was killed by the other side or by its own fire.
        assert kills[other] + friendly_kills[me] == deaths[me]
        assert m["kills"] > 0, "the chosen seed makes both sides score"
    assert sum(kills.values()) + sum(friendly_kills.values()) == sum(deaths.values())

    # Rated once, from the game's ranks.
    ranks = finished_ranks(participants)
    default = ratings.default_skill()
    after = ratings.rate([default, default], ranks)
    with session_scope() as session:
        rows = {r.bot_id: r for r in session.scalars(select(Rating).where(Rating.bot_id.in_(list(bots))))}
        played = session.scalars(
            select(MatchParticipant).where(MatchParticipant.bot_id.in_(list(bots)))
        ).all()
    assert len(played) == 2, "each bot was in exactly one match"
    for row, skill in zip(participants, after, strict=True):
        rating = rows[row.bot_id]
        assert rating.game == "battle"
        assert rating.matches_played == 1
        assert (row.mu_before, row.sigma_before) == pytest.approx((default.mu, default.sigma))
        assert (rating.mu, rating.sigma) == pytest.approx((skill.mu, skill.sigma))
        assert (row.mu_after, row.sigma_after) == pytest.approx((rating.mu, rating.sigma))
        assert rating.wins + rating.draws + rating.losses == 1
        assert rating.ordinal == pytest.approx(skill.ordinal)

    # The stored replay re-simulates to exactly itself.
    assert resimulate(get_game("battle"), replay) == replay
