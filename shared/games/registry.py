"""Which games exist. Imports are lazy so a service only loads the games it actually plays."""

from __future__ import annotations

from functools import cache
from importlib import import_module

from shared.games.base import Game

_GAME_CLASSES: dict[str, str] = {
    "podracing": "shared.games.podracing.game:PodracingGame",
    "battle": "shared.games.battle.game:BattleGame",
}


class UnknownGameError(KeyError):
    pass


def game_names() -> list[str]:
    return sorted(_GAME_CLASSES)


@cache
def get_game(name: str) -> Game:
    try:
        module_name, class_name = _GAME_CLASSES[name].split(":")
    except KeyError:
        raise UnknownGameError(f"unknown game {name!r}; known games: {', '.join(game_names())}") from None
    game: Game = getattr(import_module(module_name), class_name)()
    return game
