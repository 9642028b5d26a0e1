"""Leaderboard order and the games catalogue."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from fastapi.testclient import TestClient
from sqlalchemy import delete
from sqlalchemy.orm import Session

from shared.db.models import Rating
from shared.games.registry import get_game
from tests.support.accounts import Account, unique
from tests.support.gateway import DECIDE_SOURCE


def test_leaderboard_orders_by_conservative_rating(
    client: TestClient, make_user: Callable[..., Account], db_session: Session
) -> None:
    owner: Account = make_user("lb")
    # (mu, sigma): ordinals 15, 20, -1, 10. The high-mu but uncertain bot must not lead.
    figures = [(30.0, 5.0), (26.0, 2.0), (35.0, 12.0), (16.0, 2.0)]
    ids = []
    for mu, sigma in figures:
        bot = client.post(
            "/api/v1/bots/hosted",
            json={"name": unique("lb"), "game": "battle", "source": DECIDE_SOURCE},
            headers=owner.headers,
        ).json()
        row = db_session.get(Rating, uuid.UUID(bot["id"]))
        assert row is not None
        row.mu, row.sigma, row.ordinal, row.matches_played, row.wins = mu, sigma, mu - 3 * sigma, 7, 4
        ids.append(bot["id"])
    db_session.execute(delete(Rating).where(Rating.game == "battle", Rating.bot_id.not_in(ids)))
    db_session.commit()
    board = client.get("/api/v1/leaderboard/battle").json()
    got = [e["bot_id"] for e in board["entries"]]
    assert got == [ids[1], ids[0], ids[3], ids[2]]
    top = board["entries"][0]
    assert top["rank"] == 1
    assert top["ordinal"] == 20.0
    assert top["owner_name"] == owner.name
    assert (top["matches"], top["wins"], top["mu"], top["sigma"]) == (7, 4, 26.0, 2.0)
    page = client.get("/api/v1/leaderboard/battle", params={"limit": 2, "offset": 2}).json()
    assert [e["rank"] for e in page["entries"]] == [3, 4]
    assert page["total"] == 4

    client.post(f"/api/v1/bots/{ids[1]}/deactivate", headers=owner.headers)
    assert ids[1] not in [e["bot_id"] for e in client.get("/api/v1/leaderboard/battle").json()["entries"]]
    everyone = client.get("/api/v1/leaderboard/battle", params={"include_inactive": True}).json()
    assert everyone["entries"][0]["bot_id"] == ids[1]
    assert everyone["entries"][0]["status"] == "inactive"


def test_games_list_their_schemas(client: TestClient) -> None:
    games = {g["name"]: g for g in client.get("/api/v1/games").json()}
    assert set(games) == {"podracing", "battle"}
    for name, described in games.items():
        game = get_game(name)
        assert described["observation_schema"] == game.observation_schema()
        assert described["action_schema"] == game.action_schema()
        assert described["config_schema"] == game.config_schema()
        assert described["builtin_bots"] == sorted(game.builtin_bots())
        assert described["observation_schema"]["type"] == "object"
    assert "laps" in games["podracing"]["config_schema"]["properties"]
    assert client.get("/api/v1/games/podracing").json()["title"] == games["podracing"]["title"]
