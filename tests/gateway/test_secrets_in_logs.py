"""Secrets never reach the logs: neither through our own log lines nor through anybody else's."""

from __future__ import annotations

import logging
import random
from typing import Any

import pytest
from fastapi.testclient import TestClient

from services.gateway.logging_filter import _PATTERNS, MASK, SecretRedactingFilter, redact
from shared.protocol.signing import generate_secret
from tests.support.accounts import Account, unique
from tests.support.bot_servers import BotServer


def test_redaction_masks_every_kind_of_secret() -> None:
    secret, key = generate_secret(), "arena_" + "A1b2" * 10
    text = redact(f"secret={secret} key {key} Authorization: Bearer {key} X-API-Key: {key}")
    assert secret not in text
    assert key not in text
    assert "[REDACTED]" in text
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "got %s", (secret,), None)
    assert SecretRedactingFilter().filter(record)
    assert secret not in record.getMessage()


def _every_pattern(text: str) -> str:
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
    return text


def test_skipping_messages_without_a_marker_masks_exactly_what_every_pattern_would() -> None:
    """The shortcut (no marker, no search) against the four patterns applied to every message."""
    rng = random.Random(5)
    pieces = ["whsec_", "WHSEC_", "arena_", "Arena_", "bearer ", "BeArEr\t", "x-api-key:", "X-Api-Key=",
              "x-api-key'", "key", "GET /api/v1/leaderboard/battle HTTP/1.1", " ", "=", "'", "\"", ",",
              "A1b2c3D4e5f6G7h8i9", "+/=", "-", "_", "é", "127.0.0.1:5000"]  # fmt: skip
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert redact(text) == _every_pattern(text), text


def test_a_full_bot_lifecycle_logs_no_secret(
    client: TestClient, admin: Account, bot_server: BotServer, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []
    with caplog.at_level(logging.DEBUG):
        created = client.post("/api/v1/users", json={"name": unique("logs")}, headers=admin.headers).json()
        key = created["api_key"]["api_key"]
        seen.append(key)
        headers = {"Authorization": f"Bearer {key}"}
        bot: dict[str, Any] = client.post(
            "/api/v1/bots",
            json={
                "name": unique("l"),
                "game": "podracing",
                "endpoint": bot_server.url,
                "secret": bot_server.secret,
            },
            headers=headers,
        ).json()
        seen.append(bot["secret"])
        seen.append(client.post(f"/api/v1/bots/{bot['id']}/rotate-secret", headers=headers).json()["secret"])
        client.post(f"/api/v1/bots/{bot['id']}/reactivate", headers=headers)  # fails: the bot has the old one
        client.post(
            "/api/v1/bots", json={"name": "x", "game": "podracing", "endpoint": "http://a", "secret": "bad"}
        )
        logging.getLogger("somebody.else").warning("leaking %s and %s", seen[0], seen[1])
    assert caplog.records, "expected the gateway to log something"
    text = caplog.text + " ".join(r.getMessage() for r in caplog.records)
    for secret in seen:
        assert secret not in text
    assert "[REDACTED]" in text
