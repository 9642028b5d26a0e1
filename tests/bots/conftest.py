"""Bot-domain fixtures: the gateway's (the real app through Starlette's test client, accounts, an SDK
bot server on loopback) for comparing with the API, and plain users made straight in the database
for calling shared.bots without HTTP."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from sqlalchemy.orm import Session

from shared.db.models import User
from shared.states import UserRole
from tests.gateway.conftest import admin, bot_server, client, make_user  # noqa: F401  (fixtures)


@pytest.fixture
def new_user(db_session: Session) -> Callable[..., User]:
    """Users committed in the test database, in the test's session."""

    def _make(prefix: str = "domain", role: UserRole = UserRole.USER) -> User:
        user = User(name=f"{prefix}-{uuid.uuid4().hex[:8]}", role=role)
        db_session.add(user)
        db_session.commit()
        return user

    return _make
