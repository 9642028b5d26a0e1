"""Outside development mode, registration refuses endpoints the platform must never call: loopback,
private networks, link-local and cloud metadata addresses (the runner's policy, shared.botclient)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from shared.protocol.signing import generate_secret
from tests.support.accounts import Account, unique
from tests.support.bot_servers import BotServer


@pytest.fixture(scope="module")
def production_client(client: TestClient) -> Iterator[TestClient]:  # noqa: ARG001 (requested for its side effect)
    """The same app and database, but with development mode off."""
    from services.gateway.app import create_app
    from shared.config import get_settings

    settings = get_settings().model_copy(update={"dev_mode": False})
    with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://127.0.0.1:{port}",
        "http://localhost:{port}",
        "http://10.0.0.7",
        "http://192.168.1.20:8080",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:{port}",
        "http://[::ffff:127.0.0.1]:{port}",
        "http://0.0.0.0:{port}",
    ],
)
def test_forbidden_addresses_are_refused(
    production_client: TestClient, alice: Account, bot_server: BotServer, endpoint: str
) -> None:
    port = bot_server.url.rsplit(":", 1)[1]
    answer = production_client.post(
        "/api/v1/bots",
        json={
            "name": unique("ssrf"),
            "game": "podracing",
            "endpoint": endpoint.format(port=port),
            "secret": generate_secret(),
        },
        headers=alice.headers,
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"].startswith("endpoint refused:")


def test_the_same_bot_is_accepted_in_development_mode(
    client: TestClient, alice: Account, bot_server: BotServer
) -> None:
    answer = client.post(
        "/api/v1/bots",
        json={
            "name": unique("dev"),
            "game": "podracing",
            "endpoint": bot_server.url,
            "secret": bot_server.secret,
        },
        headers=alice.headers,
    )
    assert answer.status_code == 201
