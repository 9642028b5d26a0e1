"""An action the runner had the game read (`check_action`) is not read again by `step()`: the same
object on the same state gets the same reading. Anything else (another object, a later turn) is read
afresh, and a match plays the same with or without the check."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared.games.battle.actions import ActionSanitiser
from shared.games.podracing import game as podracing_game
from shared.games.registry import get_game
from shared.games.replay import ReplayRecorder, encode

READERS = {
    "podracing": (podracing_game, "sanitize_action"),
    "battle": (ActionSanitiser, "sanitise"),
}


def count_readings(monkeypatch: pytest.MonkeyPatch, game: str) -> list[int]:
    owner, name = READERS[game]
    original = getattr(owner, name)
    calls = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def odd_actions(game: str, match: Any) -> list[Any]:
    """What bots answer, hostile answers among them, as JSON carries them."""
    bots = list(get_game(game).builtin_bots().values())
    good = [json.loads(json.dumps(bots[p](json.loads(json.dumps(match.observation(p)))))) for p in (0, 1)]
    return [good[0], {"pods": "no"} if game == "podracing" else {"units": 5}, None, [1, 2], good[1]]


@pytest.mark.parametrize("game", ["podracing", "battle"])
def test_step_reuses_the_reading_check_action_made(monkeypatch: pytest.MonkeyPatch, game: str) -> None:
    match = get_game(game).create_match(1, {}, 2)
    actions = odd_actions(game, match)[0::4]
    calls = count_readings(monkeypatch, game)
    match.check_action(0, actions[0])
    match.check_action(1, actions[1])
    match.step(actions)
    assert calls[0] == 2
    match.check_action(0, actions[0])
    match.check_action(1, actions[1])
    match.step([json.loads(json.dumps(actions[0])), actions[1]])  # an equal but other object: read again
    assert calls[0] == 5
    match.step(actions)  # no check this turn: each read once, by step()
    assert calls[0] == 7


@pytest.mark.parametrize("game", ["podracing", "battle"])
def test_a_match_plays_the_same_with_or_without_the_check(game: str) -> None:
    replays = []
    for check in (True, False):
        match = get_game(game).create_match(4, {}, 2)
        recorder = ReplayRecorder(game, 4, {}, 2, match)
        turn = 0
        while not match.finished and turn < 60:
            options = odd_actions(game, match)
            actions = [options[turn % len(options)], options[(turn * 3 + 1) % len(options)]]
            if check:
                for player, action in enumerate(actions):
                    match.check_action(player, action)
            recorder.record_turn(actions, [], match.step(actions))
            turn += 1
        replays.append(encode(recorder.finish(match)))
    assert replays[0] == replays[1]


@pytest.mark.parametrize(
    ("game", "action", "problems"),
    [
        (
            "podracing",
            {"pods": [{"x": 1.0, "y": "far", "thrust": 100}, {"x": 1, "y": 2, "thrust": 300}]},
            ["pod 0: y is missing or not a finite number", "pod 1: thrust clamped to 0..100"],
        ),
        ("podracing", [1, 2], ["action is not an object with a 'pods' list"]),
        (
            "battle",
            {"units": {"p0u0": {"move": [1], "dodge": "up"}, "p1u0": {}}, "say": 1},
            [
                "unknown key 'say' (only 'units' and 'memory')",
                "unit p0u0: 'move' is neither [x, y] nor 'stop'",
                "unit p0u0: 'dodge' is neither 'left' nor 'right'",
                "unit 'p1u0' is not one of yours",
            ],
        ),
        ("battle", "fire!", ["the action is not an object with 'units' (and 'memory')"]),
    ],
)
def test_check_action_says_what_was_wrong(game: str, action: Any, problems: list[str]) -> None:
    """Each problem counted in `invalid_actions` is described, for the samples the bot's owner sees."""
    match = get_game(game).create_match(2, {}, 2)
    assert sorted(match.check_action(0, action)) == sorted(problems)
    good = get_game(game).builtin_bots()[next(iter(get_game(game).builtin_bots()))]
    assert (
        match.check_action(1, json.loads(json.dumps(good(json.loads(json.dumps(match.observation(1)))))))
        == []
    )
    match.step([action, None])
    assert match.result().players[0].metrics["invalid_actions"] == len(problems)
