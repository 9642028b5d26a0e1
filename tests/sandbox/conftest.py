"""Sandbox fixtures: a secret, and hosted bots (bwrap backend) torn down after each test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Unpack

import pytest

from shared.protocol.signing import generate_secret
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
