"""Replay sizing without serialising twice: an action kept on the size bound of the answer body it
came from is kept exactly when exact sizing keeps it, and a recorded replay is encoded from the text
its frames and events were sized by, byte for byte what encoding the whole replay gives."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from shared.botclient.answers import AnswerError, decode_answer
from shared.games import replay as replay_module
from shared.games.registry import get_game
from shared.games.replay import (
    RecordedReplay,
    ReplayRecorder,
    _strict_size,
    action_size_bound,
    encode,
    resimulate,
)

GAME = get_game("podracing")
CONFIG = {"laps": 1, "max_turns": 120, "timeout_turns": 1000}


def answer_bodies(count: int, seed: int) -> list[bytes]:
    """Answer bodies written every way a bot might write them, floats that grow when written again
    among them (1e5 becomes 100000.0)."""
    rng = random.Random(seed)
    numbers = [
        "0", "-0", "7", "1.5", "1e5", "1E5", "-1e-7", "1e15", "5e-324", "1.7976931348623157e308", "0.1",
    ]  # fmt: skip
    strings = [
        '"x"', '"\\u00e9"', '"\\ud83d\\ude00"', '"\\ud800"', '"a\\nb"', '"\\/"', '"caf\u00e9"', '"\\u0041"',
    ]  # fmt: skip

    def value(depth: int) -> str:
        roll = rng.random()
        if depth > 4 or roll < 0.5:
            return rng.choice([*numbers, *strings, "true", "null"])
        if roll < 0.75:
            items = (value(depth + 1) for _ in range(rng.randint(0, 5)))
            return "[" + rng.choice([",", " , "]).join(items) + "]"
        pairs = (f'"k{rng.randint(0, 3)}" : {value(depth + 1)}' for _ in range(rng.randint(0, 4)))
        return "{" + ", ".join(pairs) + "}"

    return [('{ "action" : ' + value(0) + " }").encode() for _ in range(count)]


def test_the_bound_from_an_answer_body_is_never_below_the_exact_size() -> None:
    checked = unbounded = 0
    for body in [*answer_bodies(3000, seed=7), b'{"action": [1e5,1e5,1e5,1e5]}', b'{"action":1e15}']:
        try:
            action = decode_answer(body)["action"]
        except (AnswerError, KeyError, TypeError):
            continue
        bound = action_size_bound(body)
        if bound is None:
            unbounded += 1
            assert b"\\ud8" in body, body  # only a surrogate escape leaves the body without a bound
            continue
        size = _strict_size(action)
        assert size is not None, body
        assert size <= bound, body
        checked += 1
    assert checked > 1000
    assert unbounded > 0


def _turns(seed: int, bodies: list[bytes]) -> list[tuple[list[Any], list[bytes | None]]]:
    rng = random.Random(seed)
    turns: list[tuple[list[Any], list[bytes | None]]] = []
    for _ in range(CONFIG["max_turns"]):
        chosen = [rng.choice(bodies), rng.choice(bodies)]
        actions = [decode_answer(body)["action"] for body in chosen]
        turns.append((actions, list(chosen)))
    return turns


def _record(turns: list[tuple[list[Any], list[bytes | None]]], with_bodies: bool) -> RecordedReplay:
    match = GAME.create_match(3, CONFIG, 2)
    recorder = ReplayRecorder(GAME.name, 3, CONFIG, 2, match)
    for actions, bodies in turns:
        if match.finished:
            break
        step = match.step(actions)
        if with_bodies:
            recorder.record_turn(actions, [], step, bodies)
        else:
            recorder.record_turn(actions, [], step)
    return recorder.finish(match)


@pytest.mark.parametrize(("per_action", "total"), [(16 * 1024, 4 * 1024 * 1024), (300, 2000), (2000, 3000)])
def test_actions_kept_on_their_body_bound_are_those_exact_sizing_keeps(
    monkeypatch: pytest.MonkeyPatch, per_action: int, total: int
) -> None:
    """With the caps far away and with small caps that the turns cross (so exact sizes take over,
    then bounds again), the replay is the same as with every action sized exactly."""
    monkeypatch.setattr(replay_module, "MAX_REPLAY_ACTION_BYTES", per_action)
    monkeypatch.setattr(replay_module, "MAX_REPLAY_ACTIONS_BYTES", total)
    bodies = []
    for body in answer_bodies(400, seed=11):
        try:
            decode_answer(body)["action"]
        except (AnswerError, KeyError, TypeError):
            continue
        bodies.append(body)
    bodies.append(b'{"action": {"pods": [{"x": 8000, "y": 4500, "thrust": 100}]}}')
    turns = _turns(5, bodies)
    by_bound, exact = _record(turns, True), _record(turns, False)
    assert by_bound == exact
    assert encode(by_bound) == encode(exact)
    dropped = sum(len(turn.get("dropped", [])) for turn in by_bound["turns"])
    played = turns[: len(by_bound["turns"])]
    not_strict = sum(_strict_size(action) is None for actions, _ in played for action in actions)
    assert not_strict > 0
    if per_action < 16 * 1024:
        assert dropped > not_strict  # the caps were crossed
    else:
        assert dropped == not_strict  # only actions that are not strict JSON are left out


def test_a_recorded_replay_encodes_as_the_whole_replay_would() -> None:
    action = {"pods": [{"x": 8000, "y": 4500, "thrust": 100, "message": "h\u00e9"}] * 2}
    replay = _record([([action, action], [None, None])] * 50, True)
    assert isinstance(replay, RecordedReplay)
    assert replay.spliced_text() is not None
    plain = dict(replay)
    assert encode(replay) == encode(plain)  # a plain dict is encoded whole
    assert json.loads(encode(replay)) == json.loads(json.dumps(plain))
    assert resimulate(GAME, json.loads(encode(replay))) == replay


def test_a_replay_changed_after_it_was_recorded_is_encoded_whole() -> None:
    action = {"pods": [{"x": 8000, "y": 4500, "thrust": 100}] * 2}
    replay = _record([([action, action], [None, None])] * 20, True)
    replay["frames"][3] = {"replaced": True}
    replay["events"].append({"added": 1})
    assert replay.spliced_text() is None
    assert encode(replay) == encode(dict(replay))
    assert b'{"replaced":true}' in encode(replay)


def test_non_strict_frames_make_the_whole_replay_safe_as_before() -> None:
    odd = {"pods": [{"x": float("nan"), "y": 1, "thrust": 50, "message": "a\ud800"}]}
    replay = _record([([odd, None], [None, None])] * 5, True)
    assert replay.spliced_text() is None  # a frame holds the lone surrogate: no text kept for it
    text = encode(replay).decode("utf-8")
    json.loads(text, parse_constant=lambda token: (_ for _ in ()).throw(ValueError(token)))
