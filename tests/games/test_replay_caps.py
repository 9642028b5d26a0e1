"""What a replay keeps is bounded and strict JSON whatever bots answer."""

from __future__ import annotations

import gzip
import json

from shared.games.registry import get_game
from shared.games.replay import (
    MAX_REPLAY_ACTION_BYTES,
    MAX_REPLAY_ACTIONS_BYTES,
    RecordedReplay,
    ReplayRecorder,
    compress,
    resimulate,
)

GAME = get_game("podracing")
CONFIG = {"laps": 1, "max_turns": 600, "timeout_turns": 1000}


def _refuse(token: str) -> None:
    raise ValueError(token)


def _record(actions_per_turn: list[list[object]]) -> RecordedReplay:
    match = GAME.create_match(4, CONFIG, 2)
    recorder = ReplayRecorder(GAME.name, 4, CONFIG, 2, match)
    for actions in actions_per_turn:
        if match.finished:
            break
        recorder.record_turn(actions, [], match.step(actions))
    return recorder.finish(match)


def test_total_action_bytes_are_capped_with_a_marker() -> None:
    near_cap = {"pods": [], "pad": "x" * (MAX_REPLAY_ACTION_BYTES - 100)}
    turns = MAX_REPLAY_ACTIONS_BYTES // MAX_REPLAY_ACTION_BYTES + 40
    replay = _record([[near_cap, near_cap]] * turns)
    stored = len(json.dumps([turn["actions"] for turn in replay["turns"]]))
    assert stored <= MAX_REPLAY_ACTIONS_BYTES + 1000 * len(replay["turns"])
    assert replay["truncated"]["actions"] > 0
    assert any("dropped" in turn for turn in replay["turns"])


def test_non_finite_and_unpaired_values_still_give_strict_json() -> None:
    odd = {"pods": [{"x": float("nan"), "y": float("inf"), "thrust": 50, "message": "a\ud800\x00"}]}
    replay = _record([[odd, None]] * 5)
    text = gzip.decompress(compress(replay)).decode("utf-8")
    json.loads(text, parse_constant=_refuse)


def test_an_untruncated_replay_still_resimulates_exactly() -> None:
    action = {"pods": [{"x": 8000, "y": 4500, "thrust": 100}] * 2}
    replay = json.loads(gzip.decompress(compress(_record([[action, action]] * 50))))
    assert "truncated" not in replay
    assert resimulate(GAME, replay) == replay
