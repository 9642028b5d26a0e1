"""The gateway under test: its bootstrap admin key, and bots registered through its API."""

from __future__ import annotations

import secrets
from typing import Any

from fastapi.testclient import TestClient

from tests.support.accounts import Account, unique
from tests.support.bot_servers import BotServer

ADMIN_KEY = "arena_admin_" + secrets.token_urlsafe(24)
"""The key of the admin the test gateways bootstrap (in-process and as a uvicorn process)."""

DECIDE_SOURCE = '''"""Drive straight at the next checkpoint."""


def decide(observation):
    pods = observation["pods"]
    return {"pods": [{"x": 8000, "y": 4500, "thrust": 100} for _ in pods]}
'''


def register_http_bot(client: TestClient, owner: Account, server: BotServer) -> dict[str, Any]:
    """Register `server` as a podracing HTTP bot of `owner` (health-checked); the bot with its secret."""
    answer = client.post(
        "/api/v1/bots",
        json={"name": unique("racer"), "game": "podracing", "endpoint": server.url, "secret": server.secret},
        headers=owner.headers,
    )
    assert answer.status_code == 201, answer.text
    bot = answer.json()
    assert isinstance(bot, dict), bot
    return bot


def register_hosted_bot(client: TestClient, owner: Account) -> dict[str, Any]:
    """Upload DECIDE_SOURCE as a podracing hosted bot of `owner`; the created bot."""
    answer = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("h"), "game": "podracing", "source": DECIDE_SOURCE},
        headers=owner.headers,
    )
    assert answer.status_code == 201, answer.text
    bot = answer.json()
    assert isinstance(bot, dict), bot
    return bot
