"""Field of view, occlusion, range, projectiles and walls in observations, on hand-placed units."""

from __future__ import annotations

import math

import pytest

from shared.games.battle.game import BattleMatch
from tests.support.battle_scenarios import run_turns, scenario


def _seen(match: BattleMatch, player: int, unit: int = 0) -> list[str]:
    return [v["id"] for v in match.observation(player)["units"][unit]["visible_units"]]


def _at(x: float, y: float, deg: float, dist: float) -> tuple[float, float, float]:
    a = math.radians(deg)
    return (x + dist * math.cos(a), y + dist * math.sin(a), 0.0)


def test_edge_of_the_cone_is_seen_just_outside_is_not() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [_at(10, 13, 59.9, 8), _at(10, 13, -60.1, 8), _at(10, 13, 0, 8)]])
    assert _seen(m, 0) == ["p1u0", "p1u2"]


def test_narrower_fov_is_respected() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [_at(10, 13, 30, 8), _at(10, 13, 10, 8)]], fov_deg=40.0)
    assert _seen(m, 0) == ["p1u1"]


def test_unit_behind_a_wall_is_not_seen() -> None:
    m = scenario(
        [[(10.0, 13.0, 0.0)], [(20.0, 13.0, math.pi), (20.0, 18.0, math.pi)]],
        walls=[(15.0, 11.0, 15.0, 15.0)],
    )
    assert _seen(m, 0) == ["p1u1"]
    assert _seen(m, 1, 0) == []  # occlusion works both ways
    obs = m.observation(0)
    walls = obs["constants"]["walls"]
    assert list(walls[0]) == [15.0, 11.0, 15.0, 15.0]
    assert 0 in obs["units"][0]["visible_walls"]


def test_sensor_range() -> None:
    m = scenario([[(2.0, 13.0, 0.0)], [_at(2, 13, 5, 17.9), _at(2, 13, -5, 18.1)]])
    seen = m.observation(0)["units"][0]["visible_units"]
    assert [v["id"] for v in seen] == ["p1u0"]
    assert abs(seen[0]["distance"] - 17.9) < 1e-9
    assert abs(seen[0]["bearing"] - math.radians(5)) < 1e-9


def test_friends_are_seen_too_and_dead_units_see_nothing() -> None:
    m = scenario([[(10.0, 13.0, 0.0), (14.0, 13.0, 0.0)], [(30.0, 13.0, math.pi)]])
    seen = m.observation(0)["units"][0]["visible_units"]
    assert [(v["id"], v["team"]) for v in seen] == [("p0u1", 0)]
    m.world.remove_unit(m.world.unit_by_id["p0u0"])
    dead = m.observation(0)["units"][0]
    assert dead["self"]["alive"] is False
    assert dead["visible_units"] == []
    assert dead["self"]["hp"] == 0.0


def test_incoming_projectile_is_visible_with_velocity_and_ttl() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [(24.0, 13.0, math.pi)]])
    m.step([None, {"units": {"p1u0": {"fire": [10.0, 13.0]}}}])
    projs = m.observation(0)["units"][0]["visible_projectiles"]
    assert len(projs) == 1
    p = projs[0]
    assert p["team"] == 1
    assert p["velocity"][0] < -17.9
    assert abs(p["velocity"][1]) < 1e-9
    assert 0.0 < p["ttl"] <= m.cfg.projectile_ttl_s
    # The shooter looks the same way the shot flies, so it sees its own projectile as well.
    assert len(m.observation(1)["units"][0]["visible_projectiles"]) == 1


def test_projectile_behind_wall_is_hidden() -> None:
    for walls, expected in (([(12.0, 10.0, 12.0, 16.0)], 0), ([], 1)):
        m = scenario([[(10.0, 13.0, math.pi / 2)], [(24.0, 13.0, math.pi)]], walls=walls)
        m.step([None, {"units": {"p1u0": {"fire": [10.0, 13.0]}}}])
        m.world.unit_by_id["p0u0"].heading = 0.0
        m.perception.invalidate()  # heading changed by hand: drop the per-tick cache
        assert len(m.observation(0)["units"][0]["visible_projectiles"]) == expected


def test_perception_is_computed_once_per_tick() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [(20.0, 13.0, math.pi)]])
    a = m.perception.views()
    assert m.perception.views() is a
    run_turns(m, 1)
    assert m.perception.views() is not a


@pytest.mark.parametrize("heading", [0.0, 0.7, math.pi / 2, 2.5, math.pi, -2.0, -math.pi / 2, -0.3])
@pytest.mark.parametrize("fov", [120.0, 200.0, 30.0])
def test_cone_edges_at_any_heading(heading: float, fov: float) -> None:
    """Candidates come from the sector's bounding box: it must hold the whole cone at every heading,
    including the arc's extreme points on the axes."""
    h = math.degrees(heading)
    half = fov / 2
    angles = [h + half - 0.1, h - half + 0.1, h + half + 0.1, h - half - 0.1, h, 0.0, 90.0, 180.0, 270.0]
    enemies = [_at(20, 13, a, 11.9) for a in angles]
    m = scenario([[(20.0, 13.0, heading)], enemies], fov_deg=fov, sensor_range=12.0)
    expected = [f"p1u{i}" for i, a in enumerate(angles) if abs((a - h + 180.0) % 360.0 - 180.0) <= half]
    assert {"p1u0", "p1u1", "p1u4"} <= set(expected)
    assert _seen(m, 0) == expected
