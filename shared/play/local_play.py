"""A local match: one match on this machine, on the code the platform runs, without server or
database (`arena play`, the trainer's evaluation).

The turn loop is the platform's own (shared.play.turns.play_match: timeouts, default actions,
forfeits); the players are opened by local_seats.py.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

from shared.config import Settings
from shared.games.base import JSON, Game
from shared.play.bot_specs import BotSpec
from shared.play.local_seats import open_bots
from shared.play.turns import PlayedMatch, play_match


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
    """Play the match to its end. Ctrl+C stops it, tears every sandbox down and raises
    KeyboardInterrupt; a bot that cannot be started or reached raises PlayError."""
    started = time.monotonic()
    played = asyncio.run(_play(game, specs, seed, config, settings))
    return LocalMatch(played, seed, config, specs, time.monotonic() - started)
