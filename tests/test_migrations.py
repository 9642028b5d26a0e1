"""Migrations and models agree, and the schema can go all the way down and up again."""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, pool, select, text
from sqlalchemy.orm import Session

from shared.db.migrations import migrate
from shared.db.models import Base
from tests.support.databases import create_database, drop_database, pg_available


@pytest.fixture
def fresh_url() -> Iterator[str]:
    if not pg_available():
        pytest.fail("PostgreSQL is not reachable; start it (see README) and retry")
    name = f"arena_migrations_{secrets.token_hex(4)}"
    url = create_database(name)
    yield url
    drop_database(name)


def _diff(url: str) -> list[object]:
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": False}
            )
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def _tables(url: str) -> set[str]:
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


@pytest.mark.slow
def test_upgrade_check_downgrade_upgrade(fresh_url: str) -> None:
    migrate(fresh_url)
    assert _diff(fresh_url) == [], "models and migrations differ: write a migration"
    assert set(Base.metadata.tables) <= _tables(fresh_url)

    migrate(fresh_url, "base", "downgrade")
    assert _tables(fresh_url) <= {"alembic_version"}

    migrate(fresh_url)
    assert _diff(fresh_url) == []


# A database created by the first release's migrations, with the rows that release wrote, upgraded to
# today's head: every row survives, loads through today's models and serves today's code.

FIRST_RELEASE_SECRET = "whsec_" + "first-release-bot-secret-0123456789"
FIRST_RELEASE_KEY = "arena_" + "first-release-api-key-0123456789abcdef"
HOSTED_SOURCE = "def decide(observation):\n    return {'pods': [{'x': 8000, 'y': 4500, 'thrust': 100}] * 2}\n"
REPLAY_CONFIG = {"laps": 1, "max_turns": 30}


def _first_revision() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from shared.db.migrations import ALEMBIC_INI

    bases = ScriptDirectory.from_config(Config(str(ALEMBIC_INI))).get_bases()
    assert len(bases) == 1, f"the migrations have several bases: {bases}"
    return bases[0]


def _first_release_rows(url: str) -> dict[str, Any]:
    """Insert, with raw SQL in the first release's schema, what that release stored: users and an
    API key, an HTTP bot, a hosted bot with two versions, an inactive bot, ratings, a finished rated
    match with results and a real replay, a queued ladder match and a failed one."""
    from shared.config import get_settings
    from shared.crypto import api_key_prefix, encrypt_secret, hash_api_key
    from shared.games.podracing.bots import runner
    from shared.games.registry import get_game
    from shared.games.replay import compress, play_local

    settings = get_settings()
    names = "admin alice key http hosted idle v_http v_hosted1 v_hosted2 v_idle finished queued failed"
    ids = {name: uuid.uuid4() for name in names.split()}
    replay = play_local(get_game("podracing"), 11, [runner, runner], dict(REPLAY_CONFIG))
    blob = compress(replay)
    ranks = [p["rank"] for p in sorted(replay["result"]["players"], key=lambda p: p["player"])]
    engine = create_engine(url, poolclass=pool.NullPool)
    statements: list[tuple[str, dict[str, Any]]] = [
        (
            "INSERT INTO users (id, name, role) VALUES (:admin, 'admin', 'admin'), (:alice, 'alice', 'user')",
            {},
        ),
        (
            """
            INSERT INTO api_keys (id, user_id, prefix, key_hash, name, last_used_at)
            VALUES (:key, :alice, :prefix, :hash, 'default', now())
            """,
            {"prefix": api_key_prefix(FIRST_RELEASE_KEY), "hash": hash_api_key(settings, FIRST_RELEASE_KEY)},
        ),
        (
            """
            INSERT INTO bots (id, owner_id, name, game, kind, origin, endpoint, secret_encrypted, status)
            VALUES (:http, :alice, 'racer', 'podracing', 'http', 'human', :endpoint, :secret, 'active'),
                   (:hosted, :alice, 'hosted-racer', 'podracing', 'hosted', 'human', NULL, :secret, 'active'),
                   (:idle, :admin, 'idle', 'podracing', 'http', 'builtin', :endpoint, :secret, 'inactive')
            """,
            {"endpoint": "http://127.0.0.1:9/", "secret": encrypt_secret(settings, FIRST_RELEASE_SECRET)},
        ),
        (
            """
            INSERT INTO bot_versions (id, bot_id, number, source, contract, source_sha256, notes)
            VALUES (:v_http, :http, 1, NULL, NULL, NULL, CAST(:http_notes AS jsonb)),
                   (:v_hosted1, :hosted, 1, :source, 'decide', :sha, '{}'),
                   (:v_hosted2, :hosted, 2, :source, 'decide', :sha, CAST(:hosted_notes AS jsonb)),
                   (:v_idle, :idle, 1, NULL, NULL, NULL, '{}')
            """,
            {
                "http_notes": json.dumps({"endpoint": "http://127.0.0.1:9/"}),
                "hosted_notes": json.dumps({"comment": "faster"}),
                "source": HOSTED_SOURCE,
                "sha": "0" * 64,
            },
        ),
        (
            """
            UPDATE bots SET current_version_id =
                   CASE id WHEN :http THEN :v_http WHEN :hosted THEN :v_hosted2 ELSE :v_idle END
            """,
            {},
        ),
        (
            """
            INSERT INTO ratings (bot_id, game, mu, sigma, ordinal, matches_played, wins, draws, losses)
            VALUES (:http, 'podracing', 27.1, 7.9, 3.4, 1, 1, 0, 0),
                   (:hosted, 'podracing', 22.9, 7.9, -0.8, 1, 0, 0, 1),
                   (:idle, 'podracing', 25.0, 8.333, 0.001, 0, 0, 0, 0)
            """,
            {},
        ),
        (
            """
            INSERT INTO matches (id, game, kind, rated, status, seed, config, attempts, requested_by_id,
                                 worker, started_at, heartbeat_at, finished_at, turns, end_reason, error)
            VALUES (:finished, 'podracing', 'challenge', true, 'finished', 11, CAST(:config AS jsonb), 1,
                    :alice, 'worker@host', now(), now(), now(), :turns, :reason, NULL),
                   (:queued, 'podracing', 'ladder', true, 'queued', 12, CAST(:config AS jsonb), 0,
                    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                   (:failed, 'podracing', 'challenge', false, 'failed', 13, '{}', 3,
                    :alice, NULL, now(), now(), now(), NULL, NULL,
                    'abandoned: its worker stopped 3 times (heartbeat lost)')
            """,
            {
                "config": json.dumps(REPLAY_CONFIG),
                "turns": replay["result"]["turns"],
                "reason": replay["result"]["reason"],
            },
        ),
        (
            """
            INSERT INTO match_participants (id, match_id, slot, bot_id, bot_version_id, rank, score, metrics,
                                            mu_before, sigma_before, mu_after, sigma_after, errors, timeouts,
                                            forfeited, latency_p50_ms, latency_p99_ms, error_samples)
            VALUES (gen_random_uuid(), :finished, 0, :http, :v_http, :rank0, 3, '{"checkpoints": 3}',
                    25, 8.333, 27.1, 7.9, 0, 0, false, 1.5, 4.2, '[]'),
                   (gen_random_uuid(), :finished, 1, :hosted, :v_hosted2, :rank1, 2, '{"checkpoints": 2}',
                    25, 8.333, 22.9, 7.9, 1, 1, false, 2.5, 9.1,
                    '[{"turn": 4, "error": "no answer within 1000 ms"}]'),
                   (gen_random_uuid(), :queued, 0, :http, NULL, NULL, NULL, '{}',
                    NULL, NULL, NULL, NULL, 0, 0, false, NULL, NULL, '[]'),
                   (gen_random_uuid(), :queued, 1, :hosted, NULL, NULL, NULL, '{}',
                    NULL, NULL, NULL, NULL, 0, 0, false, NULL, NULL, '[]'),
                   (gen_random_uuid(), :failed, 0, :http, :v_http, NULL, NULL, '{}',
                    NULL, NULL, NULL, NULL, 0, 0, false, NULL, NULL, '[]'),
                   (gen_random_uuid(), :failed, 1, :idle, :v_idle, NULL, NULL, '{}',
                    NULL, NULL, NULL, NULL, 0, 0, false, NULL, NULL, '[]')
            """,
            {"rank0": ranks[0], "rank1": ranks[1]},
        ),
        (
            "INSERT INTO replays (match_id, data, size_bytes, frames) VALUES (:finished, :blob, :size, :n)",
            {"blob": blob, "size": len(blob), "n": len(replay["frames"])},
        ),
    ]
    try:
        with engine.begin() as conn:
            for statement, params in statements:
                conn.execute(text(statement), {**ids, **params})
    finally:
        engine.dispose()
    return {**ids, "replay": replay, "ranks": ranks}


@pytest.mark.slow
def test_first_release_database_upgrades_to_head_with_its_data(fresh_url: str) -> None:
    from services.gateway.leaderboard.service import leaderboard
    from services.gateway.matches.service import match_views
    from shared.config import get_settings
    from shared.crypto import decrypt_secret, hash_api_key
    from shared.db.models import ApiKey, Bot, Match, Rating, Replay, User
    from shared.games.registry import get_game
    from shared.games.replay import decompress, resimulate
    from shared.matches import create_match
    from shared.states import BotKind, BotOrigin, BotStatus, HostedContract, MatchKind, MatchStatus, UserRole

    migrate(fresh_url, _first_revision())
    # The first release had fewer tables than today (long jobs, training and evolution came later).
    assert _tables(fresh_url) < set(Base.metadata.tables) | {"alembic_version"}
    seeded = _first_release_rows(fresh_url)
    migrate(fresh_url)
    assert _diff(fresh_url) == [], "the upgraded schema differs from the models"

    settings = get_settings()
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    try:
        with Session(engine) as session:
            # Every row of every table loads through today's models (states parse as enums).
            counts = {
                mapper.class_.__tablename__: len(session.scalars(select(mapper.class_)).all())
                for mapper in Base.registry.mappers
            }
            expected = {"users": 2, "api_keys": 1, "bots": 3, "bot_versions": 4, "ratings": 3}
            expected |= {"matches": 3, "match_participants": 6, "replays": 1}
            assert {table: counts[table] for table in expected} == expected

            alice = session.get_one(User, seeded["alice"])
            assert alice.role == UserRole.USER
            assert session.get_one(User, seeded["admin"]).role == UserRole.ADMIN
            key = session.get_one(ApiKey, seeded["key"])
            assert key.user_id == alice.id
            assert key.revoked_at is None
            assert key.key_hash == hash_api_key(settings, FIRST_RELEASE_KEY)

            http = session.get_one(Bot, seeded["http"])
            hosted = session.get_one(Bot, seeded["hosted"])
            idle = session.get_one(Bot, seeded["idle"])
            assert (http.kind, http.origin, http.status) == (BotKind.HTTP, BotOrigin.HUMAN, BotStatus.ACTIVE)
            assert (idle.origin, idle.status) == (BotOrigin.BUILTIN, BotStatus.INACTIVE)
            for bot in (http, hosted, idle):
                # Columns added since the first release: no health trouble, no rotation, no suspension.
                assert bot.health_failures == 0
                assert bot.previous_secret_encrypted is None
                assert bot.secret_rotated_at is None
                assert bot.status_reason is None
                assert bot.suspended_at is None
                assert bot.last_health_check_at is None
                assert bot.last_health_error is None
                assert decrypt_secret(settings, bot.secret_encrypted) == FIRST_RELEASE_SECRET
            assert [v.number for v in hosted.versions] == [1, 2]
            assert hosted.current_version is not None
            assert hosted.current_version.number == 2
            assert hosted.current_version.contract == HostedContract.DECIDE
            assert hosted.current_version.source == HOSTED_SOURCE
            assert hosted.current_version.notes == {"comment": "faster"}

            finished = session.get_one(Match, seeded["finished"])
            assert (finished.status, finished.kind, finished.rated) == (
                MatchStatus.FINISHED,
                MatchKind.CHALLENGE,
                True,
            )
            assert [(p.bot_id, p.rank) for p in finished.participants] == [
                (http.id, seeded["ranks"][0]),
                (hosted.id, seeded["ranks"][1]),
            ]
            assert finished.participants[1].error_samples[0]["turn"] == 4
            assert finished.participants[0].metrics == {"checkpoints": 3}
            replay_row = session.get_one(Replay, finished.id)
            assert replay_row.data is not None
            replay = decompress(replay_row.data)
            assert replay == seeded["replay"]
            assert resimulate(get_game("podracing"), replay)["result"] == replay["result"]
            failed = session.get_one(Match, seeded["failed"])
            assert failed.status == MatchStatus.FAILED
            assert failed.error
            assert "abandoned" in failed.error
            queued = session.get_one(Match, seeded["queued"])
            assert (queued.status, queued.kind) == (MatchStatus.QUEUED, MatchKind.LADDER)

            # Today's code reads them: the leaderboard, match views, and a new match between old bots.
            board = leaderboard(session, "podracing", False, 10, 0)
            assert [e.bot_name for e in board.entries] == ["racer", "hosted-racer"]
            assert board.entries[0].matches == 1
            assert board.entries[0].wins == 1
            views = match_views(session, [finished], None)
            assert views[0].replay_frames == len(seeded["replay"]["frames"])
            assert [p.rank for p in views[0].participants] == seeded["ranks"]
            rating = session.get_one(Rating, http.id)
            assert rating.ordinal == 3.4

            new = create_match(session, game="podracing", bot_ids=[hosted.id, http.id], config=REPLAY_CONFIG)
            session.commit()
            assert [p.bot_id for p in new.participants] == [hosted.id, http.id]
            assert session.get_one(Match, new.id).status == MatchStatus.QUEUED
    finally:
        engine.dispose()


def _evolution_run(
    session: Session, owner_id: uuid.UUID, game: str, name: str, config: dict[str, Any]
) -> Any:
    """An evolution run row as an earlier release stored it (config written as given), with its job."""
    from shared.db.models import EvolutionRun
    from shared.evolution.service import EVOLUTION
    from shared.jobs import create_job

    job = create_job(session, EVOLUTION, {})
    session.flush()
    run = EvolutionRun(
        job_id=job.id,
        owner_id=owner_id,
        game=game,
        name=name,
        config=config,
        parameters={},
        generation=4,
        spent_usd=0.0,
        tokens=0,
        llm_calls=0,
        elapsed_s=0.0,
        islands={},
    )
    session.add(run)
    session.flush()
    return run


def test_evolution_runs_made_before_stored_weights_keep_their_fitness(fresh_url: str) -> None:
    from shared.db.models import EvolutionRun, User
    from shared.evolution import EvolutionConfig

    migrate(fresh_url, "f72e3b015a12")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    earlier_config = {"evaluation": {"quick_matches": 2, "rematch": False}, "random_seed": 3}
    try:
        with Session(engine) as session:
            owner = User(name="evolver-before")
            session.add(owner)
            session.flush()
            runs = {}
            for game in ("battle", "podracing"):
                # As the earlier code wrote it: no fitness weights.
                runs[game] = _evolution_run(session, owner.id, game, f"before-{game}", earlier_config).id
            session.commit()

        migrate(fresh_url)
        with Session(engine) as session:
            stored = {game: session.get_one(EvolutionRun, run_id).config for game, run_id in runs.items()}
        assert stored["battle"]["evaluation"]["fitness_weights"] == {"win_rate": 0.7, "kill_rate": 0.3}
        assert stored["podracing"]["evaluation"]["fitness_weights"] == {"win_rate": 0.9, "progress": 0.1}
        assert stored["battle"]["evaluation"]["quick_matches"] == 2
        assert stored["battle"]["random_seed"] == 3
        assert EvolutionConfig.model_validate(stored["battle"]).evaluation.fitness_weights == {
            "win_rate": 0.7,
            "kill_rate": 0.3,
        }

        migrate(fresh_url, "f72e3b015a12", "downgrade")
        with Session(engine) as session:
            assert session.get_one(EvolutionRun, runs["battle"]).config == earlier_config
    finally:
        engine.dispose()


def test_programs_of_runs_with_another_grid_size_get_their_cells_recut(fresh_url: str) -> None:
    from shared.db.models import EvolutionProgram, User
    from shared.states import ProgramOrigin, ProgramStatus

    migrate(fresh_url, "c4a9e2f7d316")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    descriptors = {
        "battle": {"aggression": 0.32, "accuracy": 0.47},
        "podracing": {"collisions": 0.95, "boost_timing": 0.05},
    }
    try:
        with Session(engine) as session:
            owner = User(name="evolver-grid")
            session.add(owner)
            session.flush()
            programs: dict[str, uuid.UUID] = {}
            for game, search in (
                ("battle", {"grid_bins": 10}),
                ("podracing", {"grid_bins": 8}),
                ("battle", {}),
            ):
                run = _evolution_run(
                    session, owner.id, game, f"grid-{game}-{len(programs)}", {"search": search}
                )
                # As the earlier code stored it: cut into five bins a side.
                five = (1, 2) if game == "battle" else (4, 0)
                program = EvolutionProgram(
                    run_id=run.id,
                    seq=0,
                    generation=0,
                    origin=ProgramOrigin.SEED,
                    status=ProgramStatus.EVALUATED,
                    code="def decide(observation):\n    return {}\n",
                    code_hash=f"hash-{len(programs)}",
                    descriptors=descriptors[game],
                    cell_x=five[0],
                    cell_y=five[1],
                    created_key="seed:0",
                )
                session.add(program)
                session.flush()
                programs[f"{game}-{search.get('grid_bins', 5)}"] = program.id
            session.commit()

        def cells() -> dict[str, tuple[int | None, int | None]]:
            with Session(engine) as session:
                rows = {name: session.get_one(EvolutionProgram, pid) for name, pid in programs.items()}
                return {name: (row.cell_x, row.cell_y) for name, row in rows.items()}

        migrate(fresh_url)
        assert cells() == {"battle-10": (3, 4), "podracing-8": (7, 0), "battle-5": (1, 2)}
        migrate(fresh_url, "c4a9e2f7d316", "downgrade")
        assert cells() == {"battle-10": (1, 2), "podracing-8": (4, 0), "battle-5": (1, 2)}
    finally:
        engine.dispose()
