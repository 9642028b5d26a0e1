"""Battle config cost: the costliest configs the cost bound accepts, measured on the engine.

Run: `.venv/bin/python -m scripts.bench_battle_config`. For each worst accepted config (found by
searching the longest `time_limit_s` the bound still accepts) it times the runner's side of the
first turns (observations built and JSON-encoded, actions read, physics stepped) in CPU time, adds
the HTTP exchange at the cost model's constant, and prints the extrapolated runner time for the
match next to the cost model's estimate and the limit (`MAX_MATCH_COST_S`). A ratio above 1 means
the cost model underestimates the engine on this machine.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import ValidationError

from shared.games.battle.config import (
    COST_PER_BOT_TURN_S,
    COST_PLAYERS,
    MAX_MATCH_COST_S,
    MAX_TURNS,
    BattleConfig,
)
from shared.games.registry import get_game

GAME = get_game("battle")
SAMPLE_TURNS = 25
FULL_SIGHT: dict[str, Any] = {
    "obstacle_density": 0.0,
    "sensor_range": 200.0,
    "fov_deg": 360.0,
    "history_length": 64,
}
"""Every unit sees every other: perception and observations at their costliest."""
BIG_ARENA = {"units_per_player": 20, "map_width": 120.0, "map_height": 80.0, **FULL_SIGHT}


def longest_accepted(config: dict[str, Any]) -> BattleConfig:
    """`config` with the longest time_limit_s (whole seconds) that the cost bound still accepts."""
    low, high = 1, 600
    while low < high:
        middle = (low + high + 1) // 2
        try:
            BattleConfig(**{**config, "time_limit_s": float(middle)})
            low = middle
        except ValidationError:
            high = middle - 1
    return BattleConfig(**{**config, "time_limit_s": float(low)})


WORST_ACCEPTED = {
    "most units, default rates": longest_accepted(BIG_ARENA),
    "most units, 480 Hz physics": longest_accepted(
        {**BIG_ARENA, "physics_hz": 480, "ticks_per_turn": 240, "projectile_speed": 30.0}
    ),
    "most units, a turn every tick": longest_accepted({**BIG_ARENA, "ticks_per_turn": 1}),
    "most turns": BattleConfig(ticks_per_turn=1, time_limit_s=MAX_TURNS / 120, **FULL_SIGHT),
}


def runner_seconds(config: BattleConfig) -> tuple[float, float]:
    """(runner CPU seconds per turn over the first turns, estimated runner seconds for the match)."""
    match = GAME.create_match(3, config.model_dump(), COST_PLAYERS)
    bots = list(GAME.builtin_bots().values())
    spent = 0.0
    for _ in range(SAMPLE_TURNS):
        started = time.process_time()
        bodies = [json.dumps(match.observation(player)) for player in range(COST_PLAYERS)]
        spent += time.process_time() - started
        actions = [bots[p % len(bots)](json.loads(body)) for p, body in enumerate(bodies)]
        started = time.process_time()
        match.step(actions)
        spent += time.process_time() - started
    per_turn = spent / SAMPLE_TURNS
    return per_turn, config.turns * (per_turn + COST_PLAYERS * COST_PER_BOT_TURN_S)


def main() -> None:
    print(f"battle config cost bound: {MAX_MATCH_COST_S:.0f} s of runner time per match, {MAX_TURNS} turns")
    for name, config in {"default config": BattleConfig(), **WORST_ACCEPTED}.items():
        per_turn, total = runner_seconds(config)
        print(
            f"  {name:30s} {config.turns:5d} turns, {config.time_limit_s:6.1f} s game time:"
            f" {per_turn * 1000:7.2f} ms a turn, {total:6.1f} s runner time"
            f" ({config.time_limit_s / total:5.2f}x real time); estimate {config.estimated_cost_s:6.1f} s"
            f" (measured/estimate {total / config.estimated_cost_s:.2f})"
        )


if __name__ == "__main__":
    main()
