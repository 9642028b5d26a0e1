"""Continuous collisions and bounces, against hand-computed numbers."""

from __future__ import annotations

from shared.games.podracing.engine import PodCommand, RaceEvent
from tests.support.podracing_races import idle, place, race


def _kinds(events: list[RaceEvent]) -> list[tuple[str, int | None, int | None]]:
    return [(e.kind, e.pod, e.other) for e in events]


def test_equal_masses_exchange_velocity_impulse_above_minimum() -> None:
    # Impact at t = 2/3; f = 150 >= 120 is applied twice: a full exchange.
    r = race()
    place(r, 0, 0, 0)
    place(r, 1, 1000, 0, vx=-300)
    events = r.step(idle(r))
    assert _kinds(events) == [("collision", 0, 1)]
    assert abs(events[0].time - 2 / 3) < 1e-12
    a, b = r.pods[0], r.pods[1]
    assert (a.x, a.vx, b.x, b.vx) == (-100.0, -255.0, 800.0, 0.0)


def test_shield_makes_the_pod_ten_times_heavier() -> None:
    # m1 = 10: f = 272.7 (applied twice): a.vx = -54.5, b.vx = 245.5 after impact at t = 2/3.
    r = race()
    place(r, 0, 0, 0)
    place(r, 1, 1000, 0, vx=-300)
    commands = idle(r)
    commands[0] = PodCommand(0, 0, 0, shield=True)
    r.step(commands)
    a, b = r.pods[0], r.pods[1]
    assert (a.x, a.vx, b.x, b.vx) == (-18.0, -46.0, 882.0, 208.0)


def test_soft_impact_is_raised_to_the_120_minimum() -> None:
    # Impact at t = 0.5, f = 50 < 120: applied once as 50, then once more as 120.
    r = race()
    place(r, 0, 0, 0)
    place(r, 1, 850, 0, vx=-100)
    events = r.step(idle(r))
    assert _kinds(events) == [("collision", 0, 1)]
    assert abs(events[0].time - 0.5) < 1e-12
    a, b = r.pods[0], r.pods[1]
    assert (a.x, a.vx, b.x, b.vx) == (-85.0, -144.0, 835.0, 59.0)


def test_three_pod_chain_collision() -> None:
    # 0 hits 1 at t = 0.4 and stops; 1 hits 2 at t = 0.6 and stops; 2 carries on.
    r = race()
    place(r, 0, 0, 0, vx=500)
    place(r, 1, 1000, 0)
    place(r, 2, 1900, 0)
    events = r.step(idle(r))
    assert _kinds(events) == [("collision", 0, 1), ("collision", 1, 2)]
    assert abs(events[0].time - 0.4) < 1e-12
    assert abs(events[1].time - 0.6) < 1e-12
    assert [(p.x, p.vx) for p in r.pods[:3]] == [(200.0, 0.0), (1100.0, 0.0), (2100.0, 425.0)]


def test_overlapping_pods_are_neither_bounced_nor_separated() -> None:
    r = race()
    place(r, 0, 0, 0, vx=100)
    place(r, 1, 500, 0)
    events = r.step(idle(r))
    assert events == []
    assert (r.pods[0].x, r.pods[0].vx, r.pods[1].x, r.pods[1].vx) == (100.0, 85.0, 500.0, 0.0)


def test_pods_moving_apart_or_missing_do_not_collide() -> None:
    r = race()
    place(r, 0, 0, 0, vx=-300)
    place(r, 1, 900, 0, vx=300)  # separating
    place(r, 2, 0, 5000, vx=300)
    place(r, 3, 1000, 5900, vx=-300)  # passes by 900 apart at closest
    assert r.step(idle(r)) == []


def test_impact_after_the_end_of_the_turn_waits() -> None:
    r = race()
    place(r, 0, 0, 0)
    place(r, 1, 1100, 0, vx=-250)  # would touch at t = 1.2
    assert r.step(idle(r)) == []
    assert r.pods[1].x == 850.0


def test_collision_cap_moves_the_rest_of_the_turn_without_collisions() -> None:
    r = race(max_collisions_per_turn=1)
    place(r, 0, 0, 0, vx=500)
    place(r, 1, 1000, 0)
    place(r, 2, 1900, 0)
    events = r.step(idle(r))
    assert [e.kind for e in events] == ["collision", "collision_cap"]
    assert r.collisions_capped == 1
    # Pod 1 took over pod 0's speed and drives through pod 2 without a bounce.
    assert (r.pods[1].x, r.pods[2].x, r.pods[2].vx) == (1300.0, 1900.0, 0.0)
