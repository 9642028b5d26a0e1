"""A local match: one match on this machine, on the code the platform runs, without server or
database (`arena play`, the trainer's evaluation).

The turn loop is the platform's own (shared.play.turns.play_match: timeouts, default actions,
forfeits); the players are opened by local_seats.py. The replay names its players
(`replay["players"]`: each seat's name and bot spec), so `arena view` can show who played.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from shared.config import Settings
from shared.games.base import JSON, Game
from shared.play.bot_specs import BotKindArg, BotSpec
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


def seat_label(spec: BotSpec) -> str:
    """How a replay names a seat: the spec as the user gave it, but a URL without credentials,
    query or fragment (a replay is a file people share)."""
    if spec.kind is not BotKindArg.HTTP:
        return spec.label
    parts = urlsplit(spec.label)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc = f"{netloc}:{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def players_entry(specs: list[BotSpec]) -> list[dict[str, JSON]]:
    """`replay["players"]`: per seat, the name the viewer shows and the bot spec."""
    return [{"name": seat_label(spec), "bot": seat_label(spec)} for spec in specs]


def play(
    game: Game, specs: list[BotSpec], seed: int, config: dict[str, JSON], settings: Settings
) -> LocalMatch:
    """Play the match to its end. Ctrl+C stops it, tears every sandbox down and raises
    KeyboardInterrupt; a bot that cannot be started or reached raises PlayError."""
    started = time.monotonic()
    played = asyncio.run(_play(game, specs, seed, config, settings))
    played.replay["players"] = players_entry(specs)
    return LocalMatch(played, seed, config, specs, time.monotonic() - started)
