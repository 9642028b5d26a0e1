"""A challenge's battle config is priced as a whole (issue 10, finding 8): a combination of values
that are each allowed, but together would hold a worker for a long time, is a clear 422."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from shared.games.battle.config import MAX_MATCH_COST_S, MAX_TURNS
from tests.support.accounts import Account


def _challenge(client: TestClient, user: Account, config: dict[str, object]) -> tuple[int, str]:
    answer = client.post(
        "/api/v1/matches",
        json={"game": "battle", "bot_ids": [str(uuid.uuid4()), str(uuid.uuid4())], "config": config},
        headers=user.headers,
    )
    return answer.status_code, answer.text


def test_costly_battle_config_is_refused_naming_cost_and_limit(client: TestClient, alice: Account) -> None:
    status, text = _challenge(
        client, alice, {"units_per_player": 20, "map_width": 120, "map_height": 80, "time_limit_s": 600}
    )
    assert status == 422, text
    assert "estimated cost" in text
    assert f"limit {MAX_MATCH_COST_S:.0f} s" in text

    status, text = _challenge(client, alice, {"physics_hz": 480, "ticks_per_turn": 1, "time_limit_s": 600})
    assert status == 422, text
    assert f"at most {MAX_TURNS}" in text


def test_an_affordable_config_gets_past_the_cost_check(client: TestClient, alice: Account) -> None:
    """The same fields at affordable values: refused only because the bots do not exist."""
    status, text = _challenge(client, alice, {"units_per_player": 20, "time_limit_s": 60})
    assert status == 404, text
