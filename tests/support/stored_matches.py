"""Finished matches with real replays for the viewer's tests, made without a worker: two hosted
bots are registered through the API, a challenge queued between them, and the match is then
finished in the database the way the match runner's store would (status, ranks, scores, metrics
and the gzipped replay of a game really played with built-in bots)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from shared.db.models import Match, Replay
from shared.games.replay import compress
from shared.states import MatchStatus
from tests.support.accounts import Account, unique
from tests.support.gateway import DECIDE_SOURCE


@dataclass
class StoredMatch:
    id: str
    bots: list[dict[str, Any]]
    """In slot order, as the API answered their registration (id, name, ...)."""
    replay: dict[str, Any]


def hosted_bot(client: TestClient, owner: Account, game: str) -> dict[str, Any]:
    answer = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("viewer"), "game": game, "source": DECIDE_SOURCE},
        headers=owner.headers,
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def queued_match(
    client: TestClient, owner: Account, other: Account, game: str
) -> tuple[str, list[dict[str, Any]]]:
    bots = [hosted_bot(client, owner, game), hosted_bot(client, other, game)]
    answer = client.post(
        "/api/v1/matches",
        json={"game": game, "bot_ids": [bot["id"] for bot in bots]},
        headers=owner.headers,
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"]), bots


def store_finished_match(
    client: TestClient, session: Session, owner: Account, other: Account, replay: dict[str, Any]
) -> StoredMatch:
    """A challenge between a new bot of each account, finished with `replay` as its result."""
    match_id, bots = queued_match(client, owner, other, replay["game"])
    match = session.get(Match, uuid.UUID(match_id))
    assert match is not None
    result = replay["result"]
    match.status, match.turns, match.end_reason = MatchStatus.FINISHED, result["turns"], str(result["reason"])
    seats = {seat["player"]: seat for seat in result["players"]}
    for part in match.participants:
        seat = seats[part.slot]
        part.rank, part.score, part.metrics = seat["rank"], seat["score"], dict(seat["metrics"])
    blob = compress(replay)
    session.add(Replay(match_id=match.id, data=blob, size_bytes=len(blob), frames=len(replay["frames"])))
    session.commit()
    return StoredMatch(match_id, bots, replay)
