"""Challenges, listings, results and replays."""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from celery.signals import before_task_publish
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from shared.db.models import Match, Replay
from shared.games.registry import get_game
from shared.games.replay import compress, play_local
from shared.matches import TASK_PLAY_MATCH
from shared.states import MatchStatus
from tests.support.accounts import Account
from tests.support.gateway import register_hosted_bot


@contextmanager
def _published() -> Iterator[list[tuple[str, Any, str]]]:
    """Every Celery message published meanwhile: (task name, args, routing key)."""
    sent: list[tuple[str, Any, str]] = []

    def record(sender: str, headers: dict[str, Any], body: Any, routing_key: str = "", **_: Any) -> None:  # noqa: ARG001 (Celery sends signals by keyword)
        sent.append((sender, body[0] if isinstance(body, tuple | list) else body, routing_key))

    before_task_publish.connect(record, weak=False)
    try:
        yield sent
    finally:
        before_task_publish.disconnect(record)


@pytest.mark.usefixtures("redis_url")
def test_challenge_is_stored_and_queued(
    client: TestClient, alice: Account, bob: Account, http_bot: dict[str, Any]
) -> None:
    theirs = register_hosted_bot(client, bob)
    with _published() as sent:
        answer = client.post(
            "/api/v1/matches",
            json={
                "game": "podracing",
                "bot_ids": [http_bot["id"], theirs["id"]],
                "seed": 42,
                "config": {"laps": 2},
            },
            headers=alice.headers,
        )
    assert answer.status_code == 201, answer.text
    match = answer.json()
    assert match["status"] == "queued"
    assert match["seed"] == 42
    assert match["config"] == {"laps": 2}
    assert [p["bot_name"] for p in match["participants"]] == [http_bot["name"], theirs["name"]]
    assert [p["version"] for p in match["participants"]] == [1, 1]
    assert sent == [(TASK_PLAY_MATCH, [match["id"]], "matches")]
    fetched = client.get(f"/api/v1/matches/{match['id']}").json()
    assert fetched["id"] == match["id"]
    assert fetched["replay_url"] is None
    listed = client.get("/api/v1/matches", params={"bot_id": theirs["id"]}).json()
    assert [m["id"] for m in listed["items"]] == [match["id"]]
    assert listed["total"] == 1
    assert (
        client.get("/api/v1/matches", params={"bot_id": theirs["id"], "status": "finished"}).json()["total"]
        == 0
    )
    assert (
        client.get("/api/v1/matches", params={"game": "battle", "bot_id": theirs["id"]}).json()["total"] == 0
    )


def test_challenge_rules(
    client: TestClient, alice: Account, bob: Account, admin: Account, http_bot: dict[str, Any]
) -> None:
    b1, b2 = register_hosted_bot(client, bob), register_hosted_bot(client, bob)
    not_mine = client.post(
        "/api/v1/matches", json={"game": "podracing", "bot_ids": [b1["id"], b2["id"]]}, headers=alice.headers
    )
    assert not_mine.status_code == 403
    assert "your own bots" in not_mine.json()["detail"]
    assert client.get("/api/v1/matches", params={"bot_id": b1["id"]}).json()["total"] == 0
    by_admin = client.post(
        "/api/v1/matches", json={"game": "podracing", "bot_ids": [b1["id"], b2["id"]]}, headers=admin.headers
    )
    assert by_admin.status_code == 201
    bad_config = client.post(
        "/api/v1/matches",
        json={"game": "podracing", "bot_ids": [http_bot["id"], b1["id"]], "config": {"laps": "many"}},
        headers=alice.headers,
    )
    assert bad_config.status_code == 422
    assert "laps" in bad_config.json()["detail"]
    missing = client.post(
        "/api/v1/matches",
        json={"game": "podracing", "bot_ids": [http_bot["id"], str(uuid.uuid4())]},
        headers=alice.headers,
    )
    assert missing.status_code == 404
    assert "does not exist" in missing.json()["detail"]
    itself = client.post(
        "/api/v1/matches", json={"game": "podracing", "bot_ids": [http_bot["id"]] * 2}, headers=alice.headers
    )
    assert itself.status_code == 400
    assert "itself" in itself.json()["detail"]
    wrong_game = client.post(
        "/api/v1/matches",
        json={"game": "battle", "bot_ids": [http_bot["id"], b1["id"]]},
        headers=alice.headers,
    )
    assert wrong_game.status_code == 400
    assert "plays podracing" in wrong_game.json()["detail"]
    client.post(f"/api/v1/bots/{b1['id']}/deactivate", headers=bob.headers)
    inactive = client.post(
        "/api/v1/matches",
        json={"game": "podracing", "bot_ids": [http_bot["id"], b1["id"]]},
        headers=alice.headers,
    )
    assert inactive.status_code == 409
    assert "inactive" in inactive.json()["detail"]
    assert client.post("/api/v1/matches", json={"game": "podracing", "bot_ids": []}).status_code == 401


def test_results_and_replay_download(
    client: TestClient,
    alice: Account,
    bob: Account,
    admin: Account,
    http_bot: dict[str, Any],
    db_session: Session,
) -> None:
    theirs = register_hosted_bot(client, bob)
    created = client.post(
        "/api/v1/matches",
        json={"game": "podracing", "bot_ids": [http_bot["id"], theirs["id"]]},
        headers=alice.headers,
    ).json()
    match_id = uuid.UUID(created["id"])
    missing = client.get(f"/api/v1/matches/{match_id}/replay")
    assert missing.status_code == 404
    assert "no replay (status: queued)" in missing.json()["detail"]

    # Store a real replay and result the way the runner does, then read them through the API.
    game = get_game("podracing")
    bots = game.builtin_bots()
    replay = play_local(game, created["seed"], [bots["runner"], bots["blocker"]])
    match = db_session.get(Match, match_id)
    assert match is not None
    match.status, match.turns, match.end_reason = (
        MatchStatus.FINISHED,
        replay["result"]["turns"],
        replay["result"]["reason"],
    )
    for part, result in zip(match.participants, replay["result"]["players"], strict=True):
        part.rank, part.score, part.metrics = result["rank"], result["score"], result["metrics"]
        part.mu_before, part.sigma_before, part.mu_after, part.sigma_after = 25.0, 8.0, 26.0, 7.0
        part.error_samples = ["turn 3: timeout"]
    blob = compress(replay)
    db_session.add(Replay(match_id=match_id, data=blob, size_bytes=len(blob), frames=len(replay["frames"])))
    db_session.commit()

    detail = client.get(f"/api/v1/matches/{match_id}").json()
    assert detail["status"] == "finished"
    assert detail["replay_url"] == f"/api/v1/matches/{match_id}/replay"
    first = detail["participants"][0]
    assert first["rank"] == replay["result"]["players"][0]["rank"]
    assert first["ordinal_change"] == (26.0 - 21.0) - (25.0 - 24.0)
    assert first["error_samples"] is None  # anonymous viewers do not see bots' errors
    as_owner = client.get(f"/api/v1/matches/{match_id}", headers=alice.headers).json()["participants"]
    assert as_owner[0]["error_samples"] == ["turn 3: timeout"]
    assert as_owner[1]["error_samples"] is None
    # The list reads its rows another way (plain rows into dicts): each of its items is the detail.
    seen_samples = []
    for headers in ({}, alice.headers, bob.headers, admin.headers):
        mine = {"bot_id": http_bot["id"]}
        item = next(m for m in client.get("/api/v1/matches", params=mine, headers=headers).json()["items"])
        assert item["id"] == str(match_id)
        assert item == client.get(f"/api/v1/matches/{match_id}", headers=headers).json()
        seen_samples.append([p["error_samples"] for p in item["participants"]])
        assert item["participants"][0]["version"] == 1
        assert item["replay_frames"] == len(replay["frames"])
    samples = ["turn 3: timeout"]
    assert seen_samples == [[None, None], [samples, None], [None, samples], [samples, samples]]

    plain = client.get(f"/api/v1/matches/{match_id}/replay")
    assert plain.status_code == 200
    assert plain.headers["content-type"] == "application/json"
    assert plain.json() == replay
    packed = client.get(f"/api/v1/matches/{match_id}/replay", params={"compressed": 1})
    assert packed.headers["content-type"] == "application/gzip"
    assert json.loads(gzip.decompress(packed.content)) == replay


def test_unknown_and_malformed_match_ids(client: TestClient) -> None:
    unknown = client.get(f"/api/v1/matches/{uuid.uuid4()}")
    assert unknown.status_code == 404
    assert "not found" in unknown.json()["detail"]
    assert client.get(f"/api/v1/matches/{uuid.uuid4()}/replay").status_code == 404
    malformed = client.get("/api/v1/matches/not-a-uuid")
    assert malformed.status_code == 422
    assert malformed.json()["errors"][0]["loc"] == "path.match_id"
    assert client.get("/api/v1/matches", params={"status": "exploded"}).status_code == 422
    assert client.get("/api/v1/matches", params={"limit": 0}).status_code == 422


def test_match_lists_read_newest_first_and_count_up_to_a_limit(
    client: TestClient, db_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of matches is read through an index in its own order (no sort of every match of the
    game), and the total stops at `COUNT_LIMIT`, saying so, instead of reading every match."""
    from services.gateway.matches import service

    game = "podracing"
    start = datetime(2020, 1, 1, tzinfo=UTC)  # older than any other test's matches
    made = [Match(game=game, seed=n, created_at=start + timedelta(minutes=n // 2)) for n in range(6)]
    db_session.add_all(made)
    db_session.commit()
    try:
        ours = {m.id for m in made}
        newest_first = sorted(made, key=lambda m: (m.created_at, m.id), reverse=True)
        everything = client.get("/api/v1/matches", params={"game": game, "limit": 200}).json()
        listed = [uuid.UUID(m["id"]) for m in everything["items"] if uuid.UUID(m["id"]) in ours]
        assert listed == [m.id for m in newest_first]
        assert everything["total_exact"] is True
        assert everything["total"] == len(everything["items"])

        monkeypatch.setattr(service, "COUNT_LIMIT", 3)
        capped = client.get("/api/v1/matches", params={"game": game, "limit": 2}).json()
        assert (capped["total"], capped["total_exact"], len(capped["items"])) == (3, False, 2)

        connection = db_session.connection()
        connection.exec_driver_sql("SET LOCAL enable_sort = off")
        for sql, index in (
            (
                "SELECT id FROM matches WHERE game = 'podracing' ORDER BY created_at DESC, id DESC LIMIT 50",
                "ix_matches_game_created",
            ),
            (
                "SELECT id FROM matches ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET 10",
                "ix_matches_created",
            ),
        ):
            plan = "\n".join(row[0] for row in connection.exec_driver_sql("EXPLAIN " + sql))
            assert index in plan, plan
            assert "Sort" not in plan, plan
        db_session.rollback()
    finally:
        for match in made:
            db_session.delete(match)
        db_session.commit()
