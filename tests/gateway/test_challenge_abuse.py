"""Issue 10, finding 9: challenges cannot move ratings unless an admin starts them, and each user
has a challenge rate limit shared by every gateway process."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.support.accounts import Account
from tests.support.bot_servers import BotServer
from tests.support.gateway import register_http_bot


def _challenge(client: TestClient, who: Account, bots: list[dict[str, Any]], **extra: Any) -> Any:
    body = {"game": "podracing", "bot_ids": [b["id"] for b in bots], **extra}
    return client.post("/api/v1/matches", json=body, headers=who.headers)


def _mu(client: TestClient, owner: Account, bot: dict[str, Any]) -> float:
    answer = client.get(f"/api/v1/bots/{bot['id']}", headers=owner.headers)
    rating = answer.json()["rating"]
    return 25.0 if rating is None else rating["mu"]


def test_rated_challenge_against_someone_elses_bot_is_refused(
    client: TestClient, alice: Account, bob: Account, bot_server: BotServer
) -> None:
    mine, theirs = register_http_bot(client, alice, bot_server), register_http_bot(client, bob, bot_server)
    answer = _challenge(client, alice, [mine, theirs], rated=True, seed=7, config={"laps": 1})
    assert answer.status_code == 403, answer.text
    assert "unrated" in answer.json()["detail"]
    assert "ladder" in answer.json()["detail"]


def test_rated_challenge_between_your_own_bots_is_refused(
    client: TestClient, alice: Account, bot_server: BotServer
) -> None:
    """Self-play would let an owner feed one bot wins from a sparring bot built to lose."""
    one, two = register_http_bot(client, alice, bot_server), register_http_bot(client, alice, bot_server)
    for extra in ({"rated": True}, {"rated": True, "seed": 1}):
        answer = _challenge(client, alice, [one, two], **extra)
        assert answer.status_code == 403, answer.text


def test_a_challenge_is_unrated_by_default_and_the_victims_mu_does_not_move(
    client: TestClient, alice: Account, bob: Account, bot_server: BotServer
) -> None:
    """The reported attack, replayed: challenges with a chosen seed and config, played by the real
    runner against real bots; the challenged bot's rating must not change."""
    from services.match_runner.outcome import Outcome
    from services.match_runner.play import run_match

    mine, theirs = register_http_bot(client, alice, bot_server), register_http_bot(client, bob, bot_server)
    before = _mu(client, bob, theirs)
    for seed in (1, 2):
        answer = _challenge(client, alice, [mine, theirs], seed=seed, config={"laps": 1})
        assert answer.status_code == 201, answer.text
        assert answer.json()["rated"] is False
        assert run_match(uuid.UUID(answer.json()["id"])) == Outcome.FINISHED
        played = client.get(f"/api/v1/matches/{answer.json()['id']}").json()
        assert played["status"] == "finished"
        assert played["rated"] is False
        assert all(p["mu_after"] is None or p["mu_after"] == p["mu_before"] for p in played["participants"])
    assert _mu(client, bob, theirs) == before


def test_admins_may_still_start_rated_challenges(
    client: TestClient, admin: Account, alice: Account, bob: Account, bot_server: BotServer
) -> None:
    one, two = register_http_bot(client, alice, bot_server), register_http_bot(client, bob, bot_server)
    answer = _challenge(client, admin, [one, two], rated=True, seed=3, config={"laps": 1})
    assert answer.status_code == 201, answer.text
    assert answer.json()["rated"] is True


@pytest.mark.slow
def test_challenges_are_rate_limited_per_user_across_gateway_processes(
    client: TestClient, gateway_url: str, alice: Account, bob: Account
) -> None:
    """Every attempt counts (even refused ones), alternately through the in-process app and a real
    uvicorn process: the window lives in Redis, so both see the same count."""
    from shared.config import get_settings

    limit = get_settings().challenge_rate_limit
    ghost = {"game": "podracing", "bot_ids": [str(uuid.uuid4()), str(uuid.uuid4())]}
    with httpx.Client(base_url=gateway_url, headers=alice.headers, timeout=10) as real:
        for attempt in range(limit):
            sender = real if attempt % 2 else client
            answer = sender.post("/api/v1/matches", json=ghost, headers=alice.headers)
            assert answer.status_code == 404, (attempt, answer.text)
        for sender in (client, real):
            limited = sender.post("/api/v1/matches", json=ghost, headers=alice.headers)
            assert limited.status_code == 429, (sender, limited.text)
            assert "challenges" in limited.json()["detail"]
            retry_after = int(limited.headers["Retry-After"])
            assert 1 <= retry_after <= get_settings().challenge_rate_window_s
    other = client.post("/api/v1/matches", json=ghost, headers=bob.headers)
    assert other.status_code == 404, "the limit is per user"
