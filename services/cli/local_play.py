"""`arena play`: one match on this machine, on the code the platform runs, without server or database.

The turn loop is the match runner's own (services/match_runner/runner.play_match: timeouts,
default actions, forfeits); the players are opened by local_seats.py.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

from services.cli.bot_specs import BotSpec
from services.cli.errors import CliError
from services.cli.local_seats import open_bots
from services.match_runner.runner import PlayedMatch, play_match
from shared.config import Settings
from shared.games.base import JSON, Game


@dataclass
class LocalMatch:
    played: PlayedMatch
    seed: int
    config: dict[str, JSON]
    specs: list[BotSpec]
    seconds: float


async def _play(
    game: Game, specs: list[BotSpec], seed: int, config: dict[str, JSON], settings: Settings
) -> PlayedMatch:
    opened = await open_bots(specs, game.name, settings)
    try:
        return await play_match(
            game,
            match_id=f"local-{uuid.uuid4().hex[:12]}",
            seed=seed,
            config=config,
            clients=opened.clients,
            settings=settings,
        )
    finally:
        await opened.close()


def play(
    game: Game, specs: list[BotSpec], seed: int, config: dict[str, JSON], settings: Settings
) -> LocalMatch:
    """Play the match to its end (Ctrl+C stops it and tears every sandbox down)."""
    started = time.monotonic()
    try:
        played = asyncio.run(_play(game, specs, seed, config, settings))
    except KeyboardInterrupt:
        raise CliError("interrupted", status=130) from None
    return LocalMatch(played, seed, config, specs, time.monotonic() - started)
