"""The shortcuts taken for speed give exactly what the plain paths give."""

from __future__ import annotations

import json
import math
import random

import pymunk
import pytest

from shared.games.battle import pymunk_fast
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


def test_the_fast_path_is_on_for_the_pymunk_it_was_written_for() -> None:
    assert pymunk_fast.active() == pymunk.version.startswith(pymunk_fast.WRITTEN_FOR)
    assert pymunk_fast.chipmunk_for("7.4.0") is None
    assert pymunk_fast.chipmunk_for("8.0.0") is None


@pytest.mark.parametrize(
    "config",
    [{}, {"control_every": 3, "frame_hz": 7, "map": "corridors"}, {"units_per_player": 6, "map": "random"}],
)
def test_the_public_api_fallback_plays_the_same_match(config: dict[str, object]) -> None:
    """Observations, events and frames of whole matches, with and without the direct chipmunk calls."""
    fast = _play(5, {**config, "time_limit_s": 12.0})
    with pymunk_fast.public_api_only():
        assert not pymunk_fast.active()
        assert _play(5, {**config, "time_limit_s": 12.0}) == fast


def test_wall_query_matches_segment_query() -> None:
    match = BattleGame().create_match(3, {"map": "pillars"})
    space = match.world.space
    blocked = wall_query(space)
    with pymunk_fast.public_api_only():
        public = wall_query(space)
    rng = random.Random(1)
    for _ in range(500):
        a = (rng.uniform(0, 40), rng.uniform(0, 26))
        b = (rng.uniform(0, 40), rng.uniform(0, 26))
        expected = space.segment_query_first(a, b, 0.0, ONLY_WALLS) is not None
        assert blocked(a, b) == expected
        assert public(a, b) == expected


def test_position_reads_and_writes_match_the_properties() -> None:
    body = pymunk.Body(1.0, math.inf)
    readers = [pymunk_fast.position_reader()]
    writers = [pymunk_fast.position_writer()]
    with pymunk_fast.public_api_only():
        readers.append(pymunk_fast.position_reader())
        writers.append(pymunk_fast.position_writer())
    rng = random.Random(3)
    for _ in range(100):
        for write in writers:
            xy = (rng.uniform(-1e3, 1e3), rng.uniform(-1e3, 1e3))
            write(body, xy)
            assert tuple(body.position) == xy
            for read in readers:
                assert read(body) == xy
                assert all(type(v) is float for v in read(body))


def test_wall_grid_matches_a_full_scan() -> None:
    match = BattleGame().create_match(7, {"map": "random", "obstacle_density": 0.3})
    walls = Walls([list(w) for w in match.map.walls])
    everything = Walls(walls.raw)
    everything.cells = {}
    everything.near = lambda *_box: everything.items  # type: ignore[method-assign]
    rng = random.Random(2)
    for _ in range(3000):
        a = (rng.uniform(-1, 41), rng.uniform(-1, 27))
        reach = rng.choice((1.0, 3.0, 5.0, 30.0))
        angle = rng.uniform(-math.pi, math.pi)
        b = (a[0] + reach * math.cos(angle), a[1] + reach * math.sin(angle))
        clearance = rng.choice((0.0, 0.25, 0.55))
        assert path_blocked(a, b, walls, clearance) == path_blocked(a, b, everything, clearance)
