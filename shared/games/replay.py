"""Replays for every game: enough to re-simulate a match and the frames to watch it.

A replay stores the seed, the config and the raw actions each player sent every turn (before the
game sanitised them; sanitising is deterministic), plus forfeits. Re-simulating feeds the same
inputs to a fresh match and must reproduce the stored frames exactly.

Bots choose what they answer, so what a replay keeps is capped: an action larger than
MAX_REPLAY_ACTION_BYTES, or any action once the replay holds MAX_REPLAY_ACTIONS_BYTES of them, is
stored as None, and frames beyond MAX_REPLAY_FRAMES_BYTES are dropped (the final frame is kept).
`replay["truncated"]` then counts what was left out, and only such a replay may re-simulate
differently. Replays are strict JSON: no NaN or Infinity, no lone surrogates.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from typing import Any

from shared.games.base import JSON, Decide, Game, Match, StepResult
from shared.jsonsafe import storable

REPLAY_FORMAT = 1
MAX_REPLAY_ACTION_BYTES = 16 * 1024
"""One player's action for one turn, as compact JSON. Battle's largest legal action (20 units with
every order, 8 KiB of memory) is about 12 KiB; podracing's is under 300 bytes."""
MAX_REPLAY_ACTIONS_BYTES = 4 * 1024 * 1024
"""All actions of a replay: a 5000-turn podracing match of full-size actions is about 3 MiB."""
MAX_REPLAY_FRAMES_BYTES = 24 * 1024 * 1024
"""All frames and events of a replay, as JSON before gzip (which shrinks frames about 4 times)."""

REPLAY_MAX_DEPTH = 64
"""Deeper than any replay the games produce plus the deepest action a bot may send (32 levels)."""

_STRICT = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _strict_size(value: Any) -> int | None:
    """Bytes of `value` as strict compact JSON, or None when it is not strict JSON at all."""
    try:
        text = _STRICT.encode(value)
        return len(text) if text.isascii() else len(text.encode("utf-8"))
    except (ValueError, TypeError, RecursionError):  # NaN, a lone surrogate, a non-JSON type
        return None


def _frame_part_size(part: JSON) -> int:
    """Bytes a frame or event will take in the stored replay (made strict first where it is not)."""
    size = _strict_size(part)
    return size if size is not None else _strict_size(storable(part, max_depth=REPLAY_MAX_DEPTH)) or 0


class ReplayRecorder:
    """Collects a match's inputs and outputs turn by turn as it is played."""

    def __init__(self, game: str, seed: int, config: dict[str, JSON], num_players: int, match: Match) -> None:
        self._data: dict[str, Any] = {
            "format": REPLAY_FORMAT,
            "game": game,
            "seed": seed,
            "config": config,
            "num_players": num_players,
            "turns": [],
            "frames": [match.frame()],
            "events": [],
            "result": None,
        }
        self._actions_bytes = 0
        self._frames_bytes = 0
        self._dropped_actions = 0
        self._dropped_frames = 0

    def _kept_action(self, action: JSON | None) -> tuple[JSON | None, bool]:
        """(what to store, whether the action was left out) under the per-turn and total caps."""
        if action is None:
            return None, False
        size = _strict_size(action)
        if size is None or size > MAX_REPLAY_ACTION_BYTES:
            return None, True
        if self._actions_bytes + size > MAX_REPLAY_ACTIONS_BYTES:
            return None, True
        self._actions_bytes += size
        return action, False

    def record_turn(self, actions: Sequence[JSON | None], forfeits: Sequence[int], step: StepResult) -> None:
        """One played turn: the raw actions, who forfeited just before it, and what it produced."""
        kept = []
        dropped = []
        for player, action in enumerate(actions):
            stored, left_out = self._kept_action(action)
            kept.append(stored)
            if left_out:
                dropped.append(player)
        entry: dict[str, Any] = {"actions": kept}
        if forfeits:
            entry["forfeits"] = list(forfeits)
        if dropped:
            entry["dropped"] = dropped
            self._dropped_actions += len(dropped)
        self._data["turns"].append(entry)
        events = [event.to_json() for event in step.events]
        size = sum(_frame_part_size(part) for part in (*step.frames, *events))
        if self._frames_bytes + size > MAX_REPLAY_FRAMES_BYTES:
            self._dropped_frames += len(step.frames)
            return
        self._frames_bytes += size
        self._data["frames"].extend(step.frames)
        self._data["events"].extend(events)

    def record_final_forfeits(self, forfeits: Sequence[int]) -> None:
        """Forfeits that ended the match before another turn was played."""
        if forfeits:
            self._data["final_forfeits"] = list(forfeits)

    def finish(self, match: Match) -> dict[str, Any]:
        if self._dropped_frames:
            self._data["frames"].append(match.frame())  # how it ended, even when the middle is missing
        if self._dropped_actions or self._dropped_frames:
            self._data["truncated"] = {"actions": self._dropped_actions, "frames": self._dropped_frames}
        self._data["result"] = match.result().to_json()
        return self._data


def resimulate(game: Game, replay: dict[str, Any]) -> dict[str, Any]:
    """Play a replay's inputs again on a fresh match and return the replay that produces."""
    match = game.create_match(replay["seed"], replay["config"], replay["num_players"])
    recorder = ReplayRecorder(game.name, replay["seed"], replay["config"], replay["num_players"], match)
    for turn in replay["turns"]:
        forfeits = turn.get("forfeits", [])
        for player in forfeits:
            match.forfeit(player)
        recorder.record_turn(turn["actions"], forfeits, match.step(turn["actions"]))
    final = replay.get("final_forfeits", [])
    for player in final:
        match.forfeit(player)
    recorder.record_final_forfeits(final)
    return recorder.finish(match)


def play_local(
    game: Game,
    seed: int,
    bots: Sequence[Decide],
    config: dict[str, JSON] | None = None,
    max_turns: int = 100_000,
) -> dict[str, Any]:
    """Play a whole match in this process with `decide` functions; return its replay.

    Used by tests, benchmarks and examples. Each bot gets a JSON round-trip of its observation so that
    it sees exactly what an HTTP bot would.
    """
    config = config or {}
    match = game.create_match(seed, config, len(bots))
    recorder = ReplayRecorder(game.name, seed, config, len(bots), match)
    while not match.finished and match.turn < max_turns:
        actions = [bot(json.loads(json.dumps(match.observation(player)))) for player, bot in enumerate(bots)]
        recorder.record_turn(actions, [], match.step(actions))
    return recorder.finish(match)


def encode(replay: dict[str, Any]) -> bytes:
    """The replay as compact strict JSON (UTF-8); anything a strict parser would refuse is made safe
    first."""
    try:
        return _STRICT.encode(replay).encode("utf-8")
    except (ValueError, TypeError):  # NaN or a lone surrogate somewhere: rare, so checked only now
        return _STRICT.encode(storable(replay, max_depth=REPLAY_MAX_DEPTH)).encode("utf-8")


def compress(replay: dict[str, Any]) -> bytes:
    """The replay as gzipped strict JSON (`encode`): what the database stores."""
    return gzip.compress(encode(replay), compresslevel=6)


def decompress(blob: bytes) -> dict[str, Any]:
    replay = json.loads(gzip.decompress(blob))
    if not isinstance(replay, dict):
        raise ValueError("a replay is a JSON object")
    return replay
