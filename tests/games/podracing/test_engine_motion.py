"""Rotation, thrust, boost, shield and end-of-turn rounding, against hand-computed numbers."""

from __future__ import annotations

import pytest

from shared.games.podracing.engine import PodCommand, round_half_away, truncate
from tests.support.podracing_races import idle, place, race, with_command


def test_rotation_is_clamped_to_18_degrees_then_thrust_follows_new_heading() -> None:
    r = race()
    place(r, 0, 0, 0, angle=0.0)
    r.step(with_command(r, 0, PodCommand(0, 1000, 100)))  # target straight "down" (90 degrees)
    pod = r.pods[0]
    assert pod.angle == 18.0
    # cos(18) * 100 = 95.1, sin(18) * 100 = 30.9; velocity * 0.85 truncated.
    assert (pod.x, pod.y, pod.vx, pod.vy) == (95.0, 31.0, 80.0, 26.0)


def test_rotation_turns_the_short_way_and_wraps_below_zero() -> None:
    r = race()
    place(r, 0, 0, 0, angle=0.0)
    r.step(with_command(r, 0, PodCommand(1000, -1000, 0)))  # target at 315 = -45 degrees
    assert r.pods[0].angle == 342.0


def test_rotation_snaps_exactly_onto_a_close_target() -> None:
    r = race()
    place(r, 0, 0, 0, angle=80.0)
    r.step(with_command(r, 0, PodCommand(0, 1000, 0)))
    assert r.pods[0].angle == 90.0


def test_target_exactly_behind_turns_positive() -> None:
    r = race()
    place(r, 0, 0, 0, angle=0.0)
    r.step(with_command(r, 0, PodCommand(-1000, 0, 0)))  # difference 180 is in (-180, 180]
    assert r.pods[0].angle == 18.0


def test_first_turn_rotation_is_free() -> None:
    r = race(turn=0)
    place(r, 0, 0, 0, angle=0.0)
    r.step(with_command(r, 0, PodCommand(0, 1000, 100)))
    pod = r.pods[0]
    assert pod.angle == 90.0
    assert (pod.x, pod.y, pod.vx, pod.vy) == (0.0, 100.0, 0.0, 85.0)


def test_target_on_the_pod_keeps_its_angle() -> None:
    r = race()
    place(r, 0, 300, 400, angle=45.0)
    r.step(with_command(r, 0, PodCommand(300, 400, 0)))
    assert r.pods[0].angle == 45.0


def test_boost_once_per_pod_then_max_thrust() -> None:
    r = race(turn=0)
    place(r, 0, 0, 0)
    events = r.step(with_command(r, 0, PodCommand(1000, 0, 0, boost=True)))
    assert [e.kind for e in events] == ["boost"]
    assert (r.pods[0].x, r.pods[0].vx) == (650.0, 552.0)
    assert not r.pods[0].boost_available
    events = r.step(with_command(r, 0, PodCommand(5000, 0, 0, boost=True)))
    assert events == []
    # Second BOOST counts as max thrust 100: v = 552 + 100.
    assert (r.pods[0].x, r.pods[0].vx) == (1302.0, 554.0)
    assert r.pods[1].boost_available  # the team mate keeps its own boost


def test_boost_per_team_is_shared_and_goes_to_the_lower_pod_in_a_tie() -> None:
    r = race(turn=0, boost_per_team=True)
    place(r, 0, 0, 0)
    place(r, 1, 0, 5000)
    commands = idle(r)
    commands[0] = PodCommand(1000, 0, 0, boost=True)
    commands[1] = PodCommand(1000, 5000, 0, boost=True)
    events = r.step(commands)
    assert [(e.kind, e.pod) for e in events] == [("boost", 0)]
    assert r.pods[0].vx == 552.0
    assert r.pods[1].vx == 85.0  # max thrust instead
    assert not r.pods[0].boost_available
    assert not r.pods[1].boost_available
    assert r.pods[2].boost_available


def test_shield_gives_four_turns_without_thrust_and_keeps_the_boost() -> None:
    r = race()
    place(r, 0, 0, 0)
    r.step(with_command(r, 0, PodCommand(1000, 0, 100, shield=True)))
    assert r.pods[0].shield_active
    assert r.pods[0].shield_cooldown == 3
    assert r.pods[0].vx == 0.0
    r.step(with_command(r, 0, PodCommand(1000, 0, 0, boost=True)))
    assert r.pods[0].boost_available, "a BOOST during the cooldown must not be consumed"
    assert not r.pods[0].shield_active
    for _ in range(2):
        r.step(with_command(r, 0, PodCommand(1000, 0, 100)))
    assert (r.pods[0].x, r.pods[0].vx, r.pods[0].shield_cooldown) == (0.0, 0.0, 0)
    r.step(with_command(r, 0, PodCommand(1000, 0, 100)))
    assert (r.pods[0].x, r.pods[0].vx) == (100.0, 85.0)


def test_shield_during_cooldown_restarts_it() -> None:
    r = race()
    place(r, 0, 0, 0)
    r.step(with_command(r, 0, PodCommand(1000, 0, 0, shield=True)))
    r.step(with_command(r, 0, PodCommand(1000, 0, 0)))
    assert r.pods[0].shield_cooldown == 2
    r.step(with_command(r, 0, PodCommand(1000, 0, 0, shield=True)))
    assert r.pods[0].shield_active
    assert r.pods[0].shield_cooldown == 3


def test_friction_truncates_velocity_and_rounds_positions_half_away_from_zero() -> None:
    r = race()
    place(r, 0, 0, 0, vx=2.5, vy=-2.5)
    place(r, 1, -10, 7, vx=-2.5, vy=0.4)
    r.step(idle(r))
    assert (r.pods[0].x, r.pods[0].y) == (3.0, -3.0)
    assert (r.pods[0].vx, r.pods[0].vy) == (2.0, -2.0)  # 2.125 -> 2, -2.125 -> -2
    assert (r.pods[1].x, r.pods[1].y) == (-13.0, 7.0)
    assert (r.pods[1].vx, r.pods[1].vy) == (-2.0, 0.0)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.5, 1.0), (-0.5, -1.0), (1.49, 1.0), (-1.5, -2.0), (-0.4, 0.0), (2.5, 3.0), (-1234.5, -1235.0)],
)
def test_round_half_away(value: float, expected: float) -> None:
    result = round_half_away(value)
    assert result == expected
    assert str(result) != "-0.0"


@pytest.mark.parametrize(("value", "expected"), [(1.99, 1.0), (-1.99, -1.0), (-0.5, 0.0), (552.5, 552.0)])
def test_truncate_towards_zero(value: float, expected: float) -> None:
    assert truncate(value) == expected
