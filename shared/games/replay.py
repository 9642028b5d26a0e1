"""Replays for every game: enough to re-simulate a match and the frames to watch it.

A replay stores the seed, the config and the raw actions each player sent every turn (before the
game sanitised them; sanitising is deterministic), plus forfeits. Re-simulating feeds the same
inputs to a fresh match and must reproduce the stored frames exactly.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from typing import Any

from shared.games.base import JSON, Decide, Game, Match, StepResult

REPLAY_FORMAT = 1


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

    def record_turn(self, actions: Sequence[JSON | None], forfeits: Sequence[int], step: StepResult) -> None:
        """One played turn: the raw actions, who forfeited just before it, and what it produced."""
        entry: dict[str, Any] = {"actions": list(actions)}
        if forfeits:
            entry["forfeits"] = list(forfeits)
        self._data["turns"].append(entry)
        self._data["frames"].extend(step.frames)
        self._data["events"].extend(event.to_json() for event in step.events)

    def record_final_forfeits(self, forfeits: Sequence[int]) -> None:
        """Forfeits that ended the match before another turn was played."""
        if forfeits:
            self._data["final_forfeits"] = list(forfeits)

    def finish(self, match: Match) -> dict[str, Any]:
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


def compress(replay: dict[str, Any]) -> bytes:
    return gzip.compress(json.dumps(replay, separators=(",", ":")).encode(), compresslevel=6)


def decompress(blob: bytes) -> dict[str, Any]:
    return json.loads(gzip.decompress(blob))
