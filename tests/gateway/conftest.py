"""Gateway fixtures: the real app (in-process through Starlette's test client, so logs can be
captured) on a fresh migrated PostgreSQL database and the test Redis, an admin, users, and real
SDK bot servers listening on loopback."""

from __future__ import annotations

import secrets
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from shared.protocol.signing import generate_secret

ADMIN_KEY = "arena_admin_" + secrets.token_urlsafe(24)


@dataclass
class Account:
    id: str
    name: str
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


@pytest.fixture(scope="session")
def client(database_url: str, redis_url: str) -> Iterator[TestClient]:  # noqa: ARG001 (requested for its side effect)
    from services.gateway.app import create_app
    from shared.config import get_settings

    settings = get_settings().model_copy(update={"bootstrap_admin_key": SecretStr(ADMIN_KEY)})
    with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture(scope="session")
def gateway_url(client: TestClient) -> Iterator[str]:  # noqa: ARG001 (requested for its side effect)
    """The same gateway as a real uvicorn process on the same database and Redis (no worker runs,
    so matches it creates stay queued)."""
    from tests.conftest import PYTHON, ManagedProcess, free_port

    port = free_port()
    process = ManagedProcess(
        [PYTHON, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1", "--port", str(port)],
        "gateway",
        env={"ARENA_BOOTSTRAP_ADMIN_KEY": ADMIN_KEY},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        process.wait_http(f"{url}/health", timeout=60)
        yield url
    finally:
        process.stop()


@pytest.fixture(scope="session")
def admin(client: TestClient) -> Account:
    me = client.get("/api/v1/me", headers={"X-API-Key": ADMIN_KEY})
    assert me.status_code == 200, me.text
    return Account(me.json()["id"], me.json()["name"], ADMIN_KEY)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def make_user(client: TestClient, admin: Account) -> Callable[..., Account]:
    def _make(prefix: str = "user") -> Account:
        answer = client.post("/api/v1/users", json={"name": unique(prefix)}, headers=admin.headers)
        assert answer.status_code == 201, answer.text
        body = answer.json()
        return Account(body["user"]["id"], body["user"]["name"], body["api_key"]["api_key"])

    return _make


@pytest.fixture
def alice(make_user: Callable[..., Account]) -> Account:
    return make_user("alice")


@pytest.fixture
def bob(make_user: Callable[..., Account]) -> Account:
    return make_user("bob")


@dataclass
class BotServer:
    url: str
    secret: str


def runner_policy(observation: Any) -> Any:
    from shared.games.podracing.bots import runner

    return runner(observation)


@pytest.fixture(scope="session")
def bot_server() -> Iterator[BotServer]:
    """A real protocol-v1 bot (the SDK server with the built-in runner policy) on a loopback port."""
    from shared.botsdk import make_server

    secret = generate_secret()
    server = make_server(runner_policy, secret=secret, port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield BotServer(f"http://{host}:{port}", secret)
    server.shutdown()
    server.server_close()


def register_http_bot(client: TestClient, owner: Account, server: BotServer) -> dict[str, Any]:
    """Register `server` as a podracing HTTP bot of `owner` (health-checked); the bot with its secret."""
    answer = client.post(
        "/api/v1/bots",
        json={"name": unique("racer"), "game": "podracing", "endpoint": server.url, "secret": server.secret},
        headers=owner.headers,
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


@pytest.fixture
def http_bot(client: TestClient, alice: Account, bot_server: BotServer) -> dict[str, Any]:
    """A registered, health-checked HTTP bot owned by alice (with its one-time secret)."""
    return register_http_bot(client, alice, bot_server)


DECIDE_SOURCE = '''"""Drive straight at the next checkpoint."""


def decide(observation):
    pods = observation["pods"]
    return {"pods": [{"x": 8000, "y": 4500, "thrust": 100} for _ in pods]}
'''


def register_hosted_bot(client: TestClient, owner: Account) -> dict[str, Any]:
    """Upload DECIDE_SOURCE as a podracing hosted bot of `owner`; the created bot."""
    answer = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("h"), "game": "podracing", "source": DECIDE_SOURCE},
        headers=owner.headers,
    )
    assert answer.status_code == 201, answer.text
    return answer.json()
