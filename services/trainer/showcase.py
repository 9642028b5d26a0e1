"""The showcase race: the current policy, as its exported stdlib bot, racing a built-in bot in the
reference engine, recorded as a replay in exactly the format of a real match's replay
(shared.games.replay.ReplayRecorder), so the run page plays it with the ordinary replay viewer.

The exported bot is our own generated code, so the trainer worker runs it in this process: its
source is executed in a fresh module namespace and its `decide(observation)` is called each turn on
a JSON round trip of the observation, as a hosted bot would receive it. As in the match runner, a
turn on which `decide` raises, answers something that is not JSON, or an action the game cannot
read at all is a failed turn: the game plays its default action (it receives None), and the replay
stores None as that turn's action. Unlike a rated match, failing turns never forfeit the race: the
point is to watch the policy.

The policy drives player 0 (orange in the viewer), the built-in opponent player 1.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from services.trainer.bot_module import load_bot_module
from shared.games.base import JSON, Decide, Match
from shared.games.registry import get_game
from shared.games.replay import ReplayRecorder

GAME = "podracing"
MAX_TURNS = 2_000
"""A guard only: a podracing race ends by itself (laps done, or the 100-turn checkpoint timeout)."""
MODULE_NAME = "arena_showcase_bot"


class ShowcaseError(ValueError):
    """The bot source cannot be raced: it does not run, or defines no `decide`, or the opponent
    is not a built-in bot."""


def load_decide(bot_source: str) -> Decide:
    """Run `bot_source` in a fresh module (`bot_module.load_bot_module`) and return its `decide`."""
    try:
        module = load_bot_module(bot_source, MODULE_NAME)
    except Exception as exc:
        raise ShowcaseError(f"the bot source does not run: {type(exc).__name__}: {exc}") from exc
    decide = module.__dict__.get("decide")
    if not callable(decide):
        raise ShowcaseError("the bot source defines no decide(observation) function")
    return decide  # type: ignore[no-any-return]


def _opponent(name: str) -> Decide:
    bots = get_game(GAME).builtin_bots()
    try:
        return bots[name]
    except KeyError:
        known = ", ".join(sorted(bots))
        raise ShowcaseError(f"unknown opponent {name!r}; built-in {GAME} bots: {known}") from None


def play_showcase(bot_source: str, seed: int, opponent: str = "runner") -> dict[str, Any]:
    """Race the exported bot (`bot_source`, defining `decide`) against the built-in `opponent` on
    the track of `seed` (default config) and return the replay, as a match replay is stored."""
    seats = [load_decide(bot_source), _opponent(opponent)]
    game = get_game(GAME)
    config: dict[str, JSON] = {}
    match = game.create_match(seed, config, len(seats))
    recorder = ReplayRecorder(game.name, seed, config, len(seats), match)
    while not match.finished and match.turn < MAX_TURNS:
        actions = checked_actions(match, seats)
        recorder.record_turn(actions, [], match.step(actions))
    return recorder.finish(match)


def checked_actions(match: Match, seats: Sequence[Decide]) -> list[JSON | None]:
    """Each seat's action for this turn, None (the game's default, a failed turn) where the bot
    raised or answered something the game refuses."""
    actions: list[JSON | None] = []
    for player, decide in enumerate(seats):
        action = _ask(decide, match.observation(player))
        if action is not None:
            try:
                match.check_action(player, action)
            except Exception:
                action = None
        actions.append(action)
    return actions


def _ask(decide: Decide, observation: dict[str, JSON]) -> JSON | None:
    """The bot's action for this observation as JSON would carry it; None when it raised or
    answered something that is not JSON (a failed turn)."""
    try:
        action = decide(json.loads(json.dumps(observation)))
        readable: JSON = json.loads(json.dumps(action, allow_nan=False))
        return readable
    except Exception:
        return None
