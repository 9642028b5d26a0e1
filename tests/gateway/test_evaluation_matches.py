"""An evolution run's evaluation matches are as private as the run: its owner and admins see them
(API, replay, viewer page, live socket); to everyone else, the owner of the opponent bot included,
they do not exist (404, never listed, never on a page or the live ticker).

The run is created through the API and its evaluation match the way the evolver makes one (its
candidate bot, then services.evolver.evaluation.matches.QueueExecutor); no worker runs here, so the
test plays the match by writing a result and a replay as the match runner does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from services.evolver.evaluation.matches import MatchSpec, QueueExecutor
from services.evolver.store import bots as bot_store
from shared.db.migrations import migrate
from shared.db.models import EvolutionProgram, Match, Replay
from shared.db.session import get_sessionmaker, session_scope
from shared.events import MatchStarted, get_publisher, publish
from shared.games.registry import get_game
from shared.games.replay import compress, play_local
from shared.states import MatchKind, MatchStatus, ProgramOrigin, ProgramStatus
from tests.support.accounts import Account, unique
from tests.support.databases import create_database, drop_database, pg_available
from tests.support.gateway import DECIDE_SOURCE, register_hosted_bot

API = "/api/v1"


@dataclass(frozen=True)
class Evaluation:
    run_id: str
    match_id: str
    candidate: dict[str, Any]
    """The run's candidate bot (alice's, inactive)."""
    opponent: dict[str, Any]
    """The fleet bot it played (bob's)."""


def _evaluation_match(run_id: uuid.UUID, opponent: uuid.UUID) -> uuid.UUID:
    """A candidate program of the run and one tournament match of it against `opponent`, made by
    the evolver's own code; the match is then finished with a replay, as a worker would finish it."""
    program_id = uuid.uuid4()
    with session_scope() as session:
        session.add(
            EvolutionProgram(
                id=program_id,
                run_id=run_id,
                seq=1,
                generation=0,
                island=0,
                origin=ProgramOrigin.SEED,
                status=ProgramStatus.PENDING,
                code=DECIDE_SOURCE,
                code_hash=uuid.uuid4().hex,
                created_key="k1",
            )
        )
        session.commit()
    bot_id, version_id = bot_store.candidate_version(run_id, program_id)
    executor = QueueExecutor(
        get_sessionmaker(),
        game="podracing",
        candidate_bot_id=bot_id,
        candidate_version_id=version_id,
        deadline_s=0.0,
        enqueue=lambda _: None,
    )
    [record] = executor.play([MatchSpec(opponent=f"bot:{opponent}", seed=7, candidate_seat=1)])
    assert record.match_id is not None
    match_id = uuid.UUID(record.match_id)

    game = get_game("podracing")
    bots = game.builtin_bots()
    replay = play_local(game, 7, [bots["runner"], bots["blocker"]])
    with session_scope() as session:
        match = session.get(Match, match_id)
        assert match is not None
        assert match.kind == MatchKind.EVALUATION
        match.status, match.turns = MatchStatus.FINISHED, replay["result"]["turns"]
        for part, result in zip(match.participants, replay["result"]["players"], strict=True):
            part.rank, part.score = result["rank"], result["score"]
        blob = compress(replay)
        session.add(Replay(match_id=match_id, data=blob, size_bytes=len(blob), frames=len(replay["frames"])))
        session.commit()
    return match_id


@pytest.fixture
def evaluation(client: TestClient, alice: Account, bob: Account) -> Evaluation:
    """Alice's evolution run, with one finished evaluation match against bob's bot."""
    answer = client.post(
        f"{API}/evolution/runs",
        json={"name": unique("evo"), "game": "podracing", "config": {}},
        headers=alice.headers,
    )
    assert answer.status_code == 201, answer.text
    run_id = answer.json()["id"]
    opponent = register_hosted_bot(client, bob)
    match_id = _evaluation_match(uuid.UUID(run_id), uuid.UUID(opponent["id"]))
    as_owner = client.get(f"{API}/matches/{match_id}", headers=alice.headers)
    assert as_owner.status_code == 200, f"the run's owner cannot see its evaluation match: {as_owner.text}"
    match = as_owner.json()
    candidate_id = next(p["bot_id"] for p in match["participants"] if p["bot_id"] != opponent["id"])
    candidate = client.get(f"{API}/bots/{candidate_id}", headers=alice.headers).json()
    return Evaluation(run_id, str(match_id), candidate, opponent)


def _listed(client: TestClient, account: Account | None, **params: str) -> list[str]:
    headers = account.headers if account else {}
    answer = client.get(f"{API}/matches", params={"limit": "200", **params}, headers=headers)
    assert answer.status_code == 200, answer.text
    return [match["id"] for match in answer.json()["items"]]


def test_only_the_runs_owner_and_admins_see_its_evaluation_match(
    client: TestClient, evaluation: Evaluation, alice: Account, bob: Account, admin: Account, make_user: Any
) -> None:
    match_id = evaluation.match_id
    missing = uuid.uuid4()
    assert client.get(f"{API}/matches/{missing}").json()["detail"] == f"match {missing} not found"
    carol = make_user("carol")
    for account in (None, bob, carol):
        headers = account.headers if account else {}
        detail = client.get(f"{API}/matches/{match_id}", headers=headers)
        assert detail.status_code == 404, detail.text
        assert detail.json()["detail"] == f"match {match_id} not found"  # as if there were none
        assert client.get(f"{API}/matches/{match_id}/replay", headers=headers).status_code == 404
        packed = client.get(f"{API}/matches/{match_id}/replay", params={"compressed": "1"}, headers=headers)
        assert packed.status_code == 404
        for params in (
            {},
            {"kind": "evaluation"},
            {"bot_id": evaluation.opponent["id"]},
            {"bot_id": evaluation.candidate["id"]},
            {"game": "podracing", "status": "finished"},
        ):
            assert match_id not in _listed(client, account, **params), (account, params)
        counted = client.get(f"{API}/matches", params={"bot_id": evaluation.opponent["id"]}, headers=headers)
        assert counted.json()["total"] == 0

    for account in (alice, admin):
        detail = client.get(f"{API}/matches/{match_id}", headers=account.headers)
        assert detail.status_code == 200, detail.text
        assert detail.json()["kind"] == "evaluation"
        replay = client.get(f"{API}/matches/{match_id}/replay", headers=account.headers)
        assert replay.status_code == 200
        assert replay.json()["seed"] == 7
        for params in ({}, {"kind": "evaluation"}, {"bot_id": evaluation.opponent["id"]}):
            assert match_id in _listed(client, account, **params), (account, params)


def test_the_viewer_page_front_page_and_bot_pages_leave_it_out(
    client: TestClient, evaluation: Evaluation, alice: Account, bob: Account, admin: Account
) -> None:
    match_id = evaluation.match_id
    for headers in ({}, bob.headers):
        page = client.get(f"/matches/{match_id}", headers=headers)
        assert page.status_code == 404
        assert evaluation.candidate["name"] not in page.text
    for account in (alice, admin):
        page = client.get(f"/matches/{match_id}", headers=account.headers)
        assert page.status_code == 200
        assert evaluation.candidate["name"] in page.text

    front = client.get("/")
    assert front.status_code == 200
    assert match_id not in front.text
    page = client.get(f"/bots/{evaluation.opponent['id']}")
    assert page.status_code == 200
    assert match_id not in page.text
    # The run's candidate bot is as private as the run: no public page, not in the public list.
    assert client.get(f"/bots/{evaluation.candidate['id']}").status_code == 404
    listed = client.get(f"{API}/bots/public", params={"limit": 200}).json()["items"]
    assert evaluation.candidate["id"] not in {bot["id"] for bot in listed}
    # bob's bot page lists its opponents with their records: the run's candidate is not one
    assert evaluation.candidate["name"] not in client.get(f"/bots/{evaluation.opponent['id']}").text


def _ws(gateway_url: str, path: str) -> str:
    return gateway_url.replace("http://", "ws://", 1) + path


async def _first_or_close(url: str, headers: dict[str, str]) -> dict[str, Any] | tuple[int, str]:
    """The socket's first message, or its close code and reason when it sends none."""
    async with connect(url, additional_headers=headers) as socket:
        try:
            async with asyncio.timeout(10):
                message: dict[str, Any] = json.loads(await socket.recv())
                return message
        except ConnectionClosed as closed:
            frame = closed.rcvd
            assert frame is not None
            return frame.code, frame.reason


def test_its_live_socket_answers_its_owner_and_admins_only(
    gateway_url: str, evaluation: Evaluation, alice: Account, bob: Account, admin: Account
) -> None:
    url = _ws(gateway_url, f"/ws/matches/{evaluation.match_id}")
    for headers in ({}, bob.headers, {"X-API-Key": bob.key}):
        assert asyncio.run(_first_or_close(url, headers)) == (4404, "unknown match")
    refused = asyncio.run(_first_or_close(url, {"X-API-Key": "arena_not-a-key"}))
    assert refused == (4401, "invalid or revoked API key")
    for headers in (alice.headers, {"X-API-Key": alice.key}, admin.headers):
        opening = asyncio.run(_first_or_close(url, headers))
        assert isinstance(opening, dict), opening
        assert opening["type"] == "live.start", opening
        assert opening["match_id"] == evaluation.match_id


def test_the_public_ticker_leaves_out_evaluation_matches(gateway_url: str) -> None:
    def started(kind: MatchKind) -> MatchStarted:
        return MatchStarted(
            match_id=uuid.uuid4(), game="podracing", kind=kind, rated=False, attempt=1, participants=[]
        )

    private, public = started(MatchKind.EVALUATION), started(MatchKind.CHALLENGE)

    async def scenario() -> list[dict[str, Any]]:
        async with connect(_ws(gateway_url, "/ws/events")) as socket:
            await asyncio.sleep(0.3)  # the handshake returns before the server subscribed
            publish(private)
            publish(public)
            get_publisher().flush(5)
            got = [json.loads(await asyncio.wait_for(socket.recv(), 10))]
            with contextlib.suppress(TimeoutError):  # nothing more: the evaluation match's came first
                got.append(json.loads(await asyncio.wait_for(socket.recv(), 0.5)))
            return got

    assert [message["match_id"] for message in asyncio.run(scenario())] == [str(public.match_id)]


# The migration links evaluation matches played before it to their runs, where that can be told.


@pytest.fixture
def old_database() -> Iterator[str]:
    """A fresh database at the revision before evaluation matches named their run."""
    if not pg_available():
        pytest.fail("PostgreSQL is not reachable; start it (see README) and retry")
    name = f"arena_evaluation_{uuid.uuid4().hex[:8]}"
    url = create_database(name)
    migrate(url, "d81c5a3e9b47")
    yield url
    drop_database(name)


def _insert(conn: psycopg.Connection[Any], table: str, **values: Any) -> uuid.UUID:
    row_id = values.setdefault("id", uuid.uuid4())
    columns = ", ".join(values)
    marks = ", ".join(["%s"] * len(values))
    params = [json.dumps(v) if isinstance(v, dict | list) else v for v in values.values()]
    conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", params)
    return uuid.UUID(str(row_id))


@pytest.mark.slow
def test_the_migration_links_old_evaluation_matches_to_their_runs(old_database: str) -> None:
    dsn = make_url(old_database).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn) as conn:
        owner = _insert(conn, "users", name="owner", role="user")

        def bot(name: str) -> uuid.UUID:
            return _insert(
                conn,
                "bots",
                owner_id=owner,
                name=name,
                game="podracing",
                kind="hosted",
                origin="evolver",
                secret_encrypted=b"x",
                status="inactive",
            )

        def run(candidate: uuid.UUID | None) -> uuid.UUID:
            job = _insert(
                conn,
                "jobs",
                kind="evolution",
                status="finished",
                config={},
                checkpoint={},
                chunk=0,
                progress={},
                attempts=0,
                task_name="arena.evolution.chunk",
                queue="evolution",
            )
            return _insert(
                conn,
                "evolution_runs",
                job_id=job,
                owner_id=owner,
                game="podracing",
                name="old",
                config={},
                parameters={},
                islands={},
                candidate_bot_id=candidate,
            )

        def match(kind: str, *seats: uuid.UUID) -> uuid.UUID:
            match_id = _insert(
                conn,
                "matches",
                game="podracing",
                kind=kind,
                rated=False,
                status="finished",
                seed=1,
                config={},
                attempts=1,
            )
            for slot, seat in enumerate(seats):
                _insert(
                    conn,
                    "match_participants",
                    match_id=match_id,
                    slot=slot,
                    bot_id=seat,
                    metrics={},
                    errors=0,
                    timeouts=0,
                    forfeited=False,
                    error_samples=[],
                )
            return match_id

        candidate, fleet, other_fleet = bot("evo-candidates"), bot("fleet"), bot("fleet-2")
        seated_run = run(candidate)
        recorded_run = run(None)  # its candidate bot was deleted since: only its programs know
        seated = match("evaluation", fleet, candidate)
        recorded = match("evaluation", fleet, other_fleet)
        orphan = match("evaluation", fleet, other_fleet)
        ladder = match("ladder", fleet, candidate)
        _insert(
            conn,
            "evolution_programs",
            run_id=recorded_run,
            seq=1,
            generation=0,
            island=0,
            inspiration_ids=[],
            origin="seed",
            status="evaluated",
            code="",
            code_hash="h",
            metrics={},
            descriptors={},
            feedback={},
            tournament_matches={"bot:x|1|0": str(recorded)},
            created_key="k",
        )
        conn.commit()

    migrate(old_database)
    with psycopg.connect(dsn) as conn:
        linked: dict[uuid.UUID, uuid.UUID | None] = dict(
            conn.execute("SELECT id, evolution_run_id FROM matches").fetchall()
        )
    assert linked == {seated: seated_run, recorded: recorded_run, orphan: None, ladder: None}
