"""Sandbox fixtures: a secret, hosted bots (bwrap backend) torn down after each test, and a host of
the test's own for the cgroup orphan sweep."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Unpack

import pytest

from shared.protocol.signing import generate_secret
from shared.sandbox import cgroups
from shared.sandbox.backends import SandboxedBot
from shared.sandbox.limits import SandboxLimits
from tests.support.sandbox import HostedOptions, StartHosted


@pytest.fixture(scope="session")
def secret() -> str:
    return generate_secret()


@pytest.fixture
def hosted(secret: str) -> Iterator[StartHosted]:
    """Start hosted bots (bwrap backend) that are always torn down at the end of the test."""
    bots: list[SandboxedBot] = []

    def start(
        source: str, limits: SandboxLimits | None = None, **options: Unpack[HostedOptions]
    ) -> SandboxedBot:
        bot = SandboxedBot(source, secret=secret, limits=limits, **options)
        bots.append(bot)
        bot.start()
        return bot

    yield start
    for bot in bots:
        bot.close()


@pytest.fixture
def own_host_tag(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A host tag of this test's own, as `cgroups.host_tag()` in this process; owner processes the test
    starts take it too (`OWN_HOST` in their script). A sandbox's groups are named after its host and
    owner, and any process's first sandbox sweeps the orphans of its own host: with a host of their
    own, the orphans a test makes are swept by the test alone, not by a process another test starts
    meanwhile (under pytest-xdist, other workers do). Whatever a failed test left is swept after it."""
    tag = secrets.token_hex(3)
    monkeypatch.setattr(cgroups, "host_tag", lambda: tag)
    yield tag
    support = cgroups.detect()
    if support is not None:
        cgroups.sweep_orphans(support)
