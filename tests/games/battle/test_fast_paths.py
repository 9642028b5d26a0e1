"""The shortcuts taken for speed give exactly what the plain paths give."""

from __future__ import annotations

import json
import math
import random

import pytest

import shared.games.battle.world as world_module
from shared.games.battle.bots import BOTS, Walls, path_blocked
from shared.games.battle.game import BattleGame
from shared.games.battle.world import ONLY_WALLS, wall_query


def _play(seed: int, config: dict[str, object]) -> str:
    match = BattleGame().create_match(seed, config)
    decide = [BOTS["aggressive"], BOTS["sniper"]]
    out = []
    while not match.finished:
        obs = [match.observation(p) for p in range(2)]
        result = match.step([d(o) for d, o in zip(decide, obs, strict=True)])
        out.append(json.dumps([obs, [e.to_json() for e in result.events], result.frames], sort_keys=True))
    return "\n".join(out)


@pytest.mark.parametrize("config", [{}, {"control_every": 3, "frame_hz": 7, "map": "corridors"}])
def test_direct_stepping_matches_space_step(
    monkeypatch: pytest.MonkeyPatch, config: dict[str, object]
) -> None:
    fast = _play(5, {**config, "time_limit_s": 12.0})
    monkeypatch.setattr(world_module, "_CP_STEP", None)
    assert _play(5, {**config, "time_limit_s": 12.0}) == fast


def test_wall_query_matches_segment_query() -> None:
    match = BattleGame().create_match(3, {"map": "pillars"})
    space = match.world.space
    blocked = wall_query(space)
    rng = random.Random(1)
    for _ in range(500):
        a = (rng.uniform(0, 40), rng.uniform(0, 26))
        b = (rng.uniform(0, 40), rng.uniform(0, 26))
        assert blocked(a, b) == (space.segment_query_first(a, b, 0.0, ONLY_WALLS) is not None)


def test_wall_grid_matches_a_full_scan() -> None:
    match = BattleGame().create_match(7, {"map": "random", "obstacle_density": 0.3})
    walls = Walls([list(w) for w in match.map.walls])
    everything = Walls(walls.raw)
    everything.cells = {}
    everything.near = lambda *box: everything.items  # type: ignore[method-assign]
    rng = random.Random(2)
    for _ in range(3000):
        a = (rng.uniform(-1, 41), rng.uniform(-1, 27))
        reach = rng.choice((1.0, 3.0, 5.0, 30.0))
        angle = rng.uniform(-math.pi, math.pi)
        b = (a[0] + reach * math.cos(angle), a[1] + reach * math.sin(angle))
        clearance = rng.choice((0.0, 0.25, 0.55))
        assert path_blocked(a, b, walls, clearance) == path_blocked(a, b, everything, clearance)
