"""Gateway fixtures: two users and an HTTP bot of alice's (the app, the admin and `make_user` are
tests/conftest.py's, since other test directories use them too)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.accounts import Account
from tests.support.bot_servers import BotServer
from tests.support.gateway import register_http_bot


@pytest.fixture
def alice(make_user: Callable[..., Account]) -> Account:
    return make_user("alice")


@pytest.fixture
def bob(make_user: Callable[..., Account]) -> Account:
    return make_user("bob")


@pytest.fixture
def http_bot(client: TestClient, alice: Account, bot_server: BotServer) -> dict[str, Any]:
    """A registered, health-checked HTTP bot owned by alice (with its one-time secret)."""
    return register_http_bot(client, alice, bot_server)
