"""Bot-domain fixtures: plain users made straight in the database, for calling shared.bots without
HTTP (the gateway's client, users and SDK bot server, for comparing with the API, are
tests/conftest.py's)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from sqlalchemy.orm import Session

from shared.db.models import User
from shared.states import UserRole


@pytest.fixture
def new_user(db_session: Session) -> Callable[..., User]:
    """Users committed in the test database, in the test's session."""

    def _make(prefix: str = "domain", role: UserRole = UserRole.USER) -> User:
        user = User(name=f"{prefix}-{uuid.uuid4().hex[:8]}", role=role)
        db_session.add(user)
        db_session.commit()
        return user

    return _make
