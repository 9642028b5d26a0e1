"""CLI fixtures: protocol-v1 bots on loopback for `arena play` to call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.bot_servers import BotServer, serve_policy


@pytest.fixture(scope="session")
def http_bot() -> Iterator[Callable[[str, str], BotServer]]:
    """Start SDK bot servers on loopback ports serving a game's built-in bot; all stopped at the end."""
    from shared.games.registry import get_game

    servers: list[Any] = []

    def start(game: str, builtin: str) -> BotServer:
        server, bot = serve_policy(get_game(game).builtin_bots()[builtin])
        servers.append(server)
        return bot

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
