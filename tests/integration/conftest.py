"""Fixtures for end-to-end runs of hosted bots: the worker's sandbox directory and a user who owns
the bots (tests/support/hosted_worker.py starts the worker and stores the bots)."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.db.models import User
from shared.db.session import session_scope


@pytest.fixture(scope="module")
def sandbox_tmp() -> Iterator[Path]:
    """The worker's TMPDIR: every sandbox's private files live here while it runs."""
    path = Path(tempfile.mkdtemp(prefix="arena-integration-tmp-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def owner_id(database_url: str) -> uuid.UUID:  # noqa: ARG001 (requested for its side effect)
    with session_scope() as session:
        user = User(name=f"integration-{uuid.uuid4().hex[:8]}")
        session.add(user)
        session.flush()
        return user.id
