"""Tournament matches on the `matches` queue, played by a real match-runner worker: the inactive
candidate with a pinned version, an active hosted opponent; unrated, ladder untouched, and a
second call with the same keys creates nothing new."""

from __future__ import annotations

import random
import shutil
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from services.evolver.evaluation.matches import QueueExecutor, fleet_opponents
from services.evolver.evaluation.records import MatchSpec, Outcome
from shared.config import get_settings
from shared.crypto import encrypt_secret
from shared.db.models import Bot, BotVersion, Match, MatchParticipant, Rating, User
from shared.db.session import get_sessionmaker, session_scope
from shared.matches import MatchRequestError, create_match
from shared.protocol.signing import generate_secret
from shared.states import BotStatus, MatchKind
from tests.support.match_runner import start_worker
from tests.support.processes import ManagedProcess

RACER = """
def decide(observation):
    pods = []
    for pod in observation["pods"]:
        x, y = observation["checkpoints"][pod["next_checkpoint"]]
        pods.append({"x": x, "y": y, "thrust": THRUST})
    return {"pods": pods}
"""
BROKEN = "def decide(observation):\n    raise RuntimeError('the unpinned version ran')\n"
SMALL_RACE = {"laps": 1, "max_turns": 60}


@pytest.fixture(scope="module")
def worker(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    process = start_worker("evaluation-worker", {"ARENA_SANDBOX_BACKEND": "bwrap"})
    yield process
    process.stop()


def _hosted(
    owner: uuid.UUID, sources: list[str], status: BotStatus, current: int
) -> tuple[uuid.UUID, list[uuid.UUID]]:
    with session_scope() as session:
        bot = Bot(
            owner_id=owner,
            name=f"eval-{uuid.uuid4().hex[:8]}",
            game="podracing",
            kind="hosted",
            status=status,
            secret_encrypted=encrypt_secret(get_settings(), generate_secret()),
        )
        session.add(bot)
        session.flush()
        versions = []
        for number, source in enumerate(sources, start=1):
            version = BotVersion(bot_id=bot.id, number=number, source=source, contract="decide")
            session.add(version)
            session.flush()
            versions.append(version.id)
        bot.current_version_id = versions[current]
        return bot.id, versions


@pytest.fixture(scope="module")
def owner(database_url: str) -> uuid.UUID:  # noqa: ARG001 (requested for its side effect)
    with session_scope() as session:
        user = User(name=f"evolver-tests-{uuid.uuid4().hex[:8]}")
        session.add(user)
        session.flush()
        return user.id


@pytest.mark.slow
@pytest.mark.usefixtures("worker")
def test_tournament_on_the_queue(owner: uuid.UUID) -> None:
    # The candidate's current version is broken; the pinned one (version 2) races at full thrust.
    candidate, versions = _hosted(owner, [BROKEN, RACER.replace("THRUST", "100")], BotStatus.INACTIVE, 0)
    opponent, _ = _hosted(owner, [RACER.replace("THRUST", "30")], BotStatus.ACTIVE, 0)
    executor = QueueExecutor(
        get_sessionmaker(),
        game="podracing",
        candidate_bot_id=candidate,
        candidate_version_id=versions[1],
        poll_interval_s=0.3,
        deadline_s=120,
    )
    specs = [MatchSpec(f"bot:{opponent}", 41 + i, i % 2, SMALL_RACE) for i in range(2)]
    specs.append(MatchSpec("builtin:runner", 5, 0, SMALL_RACE))  # not a fleet bot: an error record
    seen: list[dict[str, uuid.UUID]] = []
    records = executor.play(specs, on_created=seen.append)

    assert len(seen) == 1
    assert set(seen[0]) == {specs[0].key, specs[1].key}
    assert records[2].failure
    assert "not a bot of the fleet" in records[2].failure
    for spec, record in zip(specs[:2], records[:2], strict=True):
        assert record.played, record.failure
        assert record.opponent == spec.opponent
        assert record.seat == spec.candidate_seat
        assert record.match_id == str(seen[0][spec.key])
        assert record.outcome is Outcome.WIN  # full thrust against 30
        assert record.errors == 0, record.error_samples
        assert record.timeouts == 0, record.error_samples
        assert not record.forfeited, record.error_samples
        assert record.turns > 0
        assert record.candidate_metrics["checkpoints"] > 0
        assert record.latency_p50_ms is not None

    with session_scope() as session:
        matches = list(session.scalars(select(Match).where(Match.id.in_(list(seen[0].values())))))
        assert len(matches) == 2
        assert all(m.kind == MatchKind.EVALUATION and not m.rated and m.status == "finished" for m in matches)
        participants = list(
            session.scalars(select(MatchParticipant).where(MatchParticipant.bot_id == candidate))
        )
        assert {p.bot_version_id for p in participants} == {versions[1]}
        assert all(p.mu_before is None and p.mu_after is None for p in participants)
        ratings = session.scalar(
            select(func.count()).select_from(Rating).where(Rating.bot_id.in_([candidate, opponent]))
        )
        assert ratings == 0
        assert session.get(Bot, candidate).status == BotStatus.INACTIVE  # type: ignore[union-attr]

    # After a crash the caller runs again with the ids it persisted: nothing new is created.
    again = executor.play(specs[:2], existing=seen[0], on_created=seen.append)
    assert seen[-1] == seen[0]
    assert [r.match_id for r in again] == [r.match_id for r in records[:2]]
    assert [r.outcome for r in again] == [r.outcome for r in records[:2]]
    with session_scope() as session:
        count = session.scalar(
            select(func.count()).select_from(MatchParticipant).where(MatchParticipant.bot_id == candidate)
        )
    assert count == 2


@pytest.mark.usefixtures("database_url")
def test_create_match_rules_for_evaluations(owner: uuid.UUID) -> None:
    candidate, versions = _hosted(owner, [RACER.replace("THRUST", "50")], BotStatus.INACTIVE, 0)
    other, other_versions = _hosted(owner, [RACER.replace("THRUST", "60")], BotStatus.ACTIVE, 0)
    with session_scope() as session:
        with pytest.raises(MatchRequestError, match="inactive"):
            create_match(session, game="podracing", bot_ids=[candidate, other])
        with pytest.raises(MatchRequestError, match="never rated"):
            create_match(session, game="podracing", bot_ids=[candidate, other], kind=MatchKind.EVALUATION)
        with pytest.raises(MatchRequestError, match="not a version"):
            create_match(
                session,
                game="podracing",
                bot_ids=[candidate, other],
                kind=MatchKind.EVALUATION,
                rated=False,
                version_ids=[other_versions[0], None],
            )
        match = create_match(
            session,
            game="podracing",
            bot_ids=[candidate, other],
            kind=MatchKind.EVALUATION,
            rated=False,
            version_ids=[versions[0], None],
        )
        assert [p.bot_version_id for p in match.participants] == [versions[0], other_versions[0]]
        session.rollback()


@pytest.mark.slow
def test_fleet_opponents_spread_over_the_ratings(owner: uuid.UUID, db_session: Session) -> None:
    game = "battle"
    # The fleet must be exactly these bots, but this process's database is shared with every test
    # module it ran before (under xdist, any of them: the gateway's leave active battle bots). In
    # this test's one transaction, rolled back after it, those are set aside.
    db_session.execute(
        update(Bot).where(Bot.game == game, Bot.status == BotStatus.ACTIVE).values(status=BotStatus.INACTIVE)
    )
    ids = []
    for i in range(9):
        bot = Bot(
            owner_id=owner,
            name=f"fleet-{i}-{uuid.uuid4().hex[:6]}",
            game=game,
            kind="http",
            endpoint="http://127.0.0.1:9",
            secret_encrypted=encrypt_secret(get_settings(), generate_secret()),
            status=BotStatus.ACTIVE if i != 4 else BotStatus.SUSPENDED,
        )
        db_session.add(bot)
        db_session.flush()
        ordinal = float(10 * i)
        db_session.add(Rating(bot_id=bot.id, game=game, mu=25.0, sigma=1.0, ordinal=ordinal))
        ids.append(bot.id)
    db_session.flush()
    picked = fleet_opponents(db_session, game, 3, exclude_bot_ids=[ids[8]], rng=random.Random(1))
    everyone = fleet_opponents(db_session, game, 50, exclude_bot_ids=[ids[8]])
    # Active and not excluded: 0,1,2,3,5,6,7 (by ordinal); strata of 7 in 3: [0,1] [2,3] [5,6,7].
    assert everyone == [ids[i] for i in (0, 1, 2, 3, 5, 6, 7)]
    assert picked[0] in ids[0:2]
    assert picked[1] in (ids[2], ids[3])
    assert picked[2] in (ids[5], ids[6], ids[7])
