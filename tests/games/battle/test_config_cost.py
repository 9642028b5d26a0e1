"""The cost of a battle config as a whole: costlier combinations are refused, the worst accepted
ones still start and play. How fast the worst accepted configs run is measured by
`python -m scripts.bench_battle_config` (a benchmark, not a timed test)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scripts.bench_battle_config import BIG_ARENA, WORST_ACCEPTED
from shared.games.battle.config import COST_PLAYERS, MAX_MATCH_COST_S, BattleConfig
from shared.games.registry import get_game

GAME = get_game("battle")


@pytest.mark.parametrize("name", list(WORST_ACCEPTED))
def test_the_costliest_accepted_configs_are_within_the_bound_and_play(name: str) -> None:
    config = WORST_ACCEPTED[name]
    assert config.estimated_cost_s <= MAX_MATCH_COST_S
    match = GAME.create_match(3, config.model_dump(), COST_PLAYERS)
    bots = list(GAME.builtin_bots().values())
    for _ in range(3):
        match.step([bots[p % len(bots)](match.observation(p)) for p in range(COST_PLAYERS)])
    assert not match.finished


def test_the_default_config_is_cheap() -> None:
    assert BattleConfig().estimated_cost_s < MAX_MATCH_COST_S / 10


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"units_per_player": 20, "time_limit_s": 600.0}, "estimated cost"),
        ({**BIG_ARENA, "time_limit_s": 300.0, "physics_hz": 480, "ticks_per_turn": 24}, "decision turns"),
        ({"physics_hz": 480, "ticks_per_turn": 1}, "decision turns"),
        ({"map": "corridors", "map_width": 120.0, "map_height": 80.0}, "drawn for a 40 x 26 arena"),
    ],
)
def test_costlier_configs_are_refused_with_the_cost_and_limit(config: dict[str, Any], reason: str) -> None:
    """Each value of these configs is allowed on its own; the combination is not."""
    with pytest.raises(ValidationError) as refused:
        BattleConfig(**config)
    message = str(refused.value)
    assert reason in message, message
    if reason == "estimated cost":
        assert f"limit {MAX_MATCH_COST_S:.0f} s" in message
