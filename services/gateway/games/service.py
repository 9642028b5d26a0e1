"""Game descriptions from the registry. Schemas are computed once per process: they never change."""

from __future__ import annotations

from functools import cache

from services.gateway.errors import ApiError
from services.gateway.games.schemas import GameOut
from shared.games.registry import UnknownGameError, game_names, get_game


@cache
def describe(name: str) -> GameOut:
    try:
        game = get_game(name)
    except UnknownGameError as exc:
        raise ApiError(404, str(exc.args[0])) from None
    return GameOut(
        name=game.name,
        title=game.title,
        min_players=game.min_players,
        max_players=game.max_players,
        builtin_bots=sorted(game.builtin_bots()),
        observation_schema=game.observation_schema(),
        action_schema=game.action_schema(),
        config_schema=game.config_schema(),
    )


def describe_all() -> list[GameOut]:
    return [describe(name) for name in game_names()]
