"""Movement, turning, firing, cooldowns, hits, kills, friendly fire, dodge and walls, on hand-placed units."""

from __future__ import annotations

import math

import pytest

from shared.games.base import JSON, GameEvent
from tests.support.battle_scenarios import pos, run_turns, scenario


def _kinds(events: list[GameEvent], kind: str) -> list[GameEvent]:
    return [e for e in events if e.kind == kind]


def test_move_reaches_target_without_exceeding_max_speed() -> None:
    m = scenario([[(5.0, 13.0, 0.0)], [(35.0, 3.0, math.pi)]])
    act = [{"units": {"p0u0": {"move": [15.0, 13.0]}}}, None]
    top_speed = 0.0
    for _ in range(25):
        m.step(act)
        vx, vy = m.world.unit_by_id["p0u0"].body.velocity
        top_speed = max(top_speed, math.hypot(vx, vy))
    x, y = pos(m, "p0u0")
    assert abs(x - 15.0) < 0.2
    assert abs(y - 13.0) < 0.2
    assert 3.5 < top_speed <= m.cfg.max_speed + 1e-6


def test_stop_holds_position_and_none_holds_still() -> None:
    m = scenario([[(5.0, 13.0, 0.0)], [(35.0, 3.0, math.pi)]])
    m.step([{"units": {"p0u0": {"move": [30.0, 13.0]}}}, None])
    m.step([None, None])  # no answer: hold still where it is
    run_turns(m, 10)
    x1, _ = pos(m, "p0u0")
    run_turns(m, 5)
    assert abs(pos(m, "p0u0")[0] - x1) < 0.05
    assert x1 < 10.0  # it braked instead of running on to x = 30


def test_turn_rate_limits_heading_change() -> None:
    m = scenario([[(5.0, 13.0, 0.0)], [(35.0, 3.0, math.pi)]])
    m.step([{"units": {"p0u0": {"turn": math.pi / 2}}}, None])
    u = m.world.unit_by_id["p0u0"]
    per_turn = m.cfg.turn_rate * m.cfg.ticks_per_turn * m.cfg.dt
    assert u.heading == pytest.approx(per_turn)  # 6 control updates of 4 ticks each
    m.step([{"units": {}}, None])  # an answer without orders keeps the unit's standing orders
    assert u.heading == pytest.approx(math.pi / 2)


def test_fire_respects_cooldown() -> None:
    m = scenario([[(2.0, 13.0, 0.0)], [(38.0, 3.0, math.pi)]])
    events = run_turns(m, 10, [{"units": {"p0u0": {"fire": [30.0, 13.0]}}}, None])
    shots = _kinds(events, "shot")
    ticks = [e.data["tick"] for e in shots]
    assert ticks == [0, 72, 144, 216]  # 0.6 s cooldown at 120 Hz, 240 ticks played
    assert m.world.metrics[0]["shots"] == 4


def test_hits_and_kill_are_credited_to_the_shooter() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [(16.0, 13.0, math.pi)]])
    events = run_turns(m, 30, [{"units": {"p0u0": {"fire": [16.0, 13.0]}}}, None])
    hits = _kinds(events, "hit")
    kills = _kinds(events, "kill")
    assert len(hits) == 5
    assert all(e.player == 0 for e in hits)
    assert all(e.data["target"] == "p1u0" for e in hits)
    assert [(k.player, k.data["shooter"], k.data["victim"]) for k in kills] == [(0, "p0u0", "p1u0")]
    assert [d.player for d in _kinds(events, "death")] == [1]
    r = m.result()
    p0, p1 = r.players
    assert p0.metrics["kills"] == 1
    assert p0.metrics["hits"] == 5
    assert p0.metrics["damage_dealt"] == 100
    assert p0.metrics["accuracy"] == 1.0
    assert p1.metrics["deaths"] == 1
    assert p1.metrics["damage_taken"] == 100
    assert m.finished
    assert r.reason == "eliminated"
    assert (p0.rank, p1.rank) == (0, 1)
    # A finished match does not step any more.
    final = m.step([None, None])
    assert final.frames == []


def test_friendly_fire_hurts_teammates_and_is_counted() -> None:
    units = [[(10.0, 13.0, 0.0), (14.0, 13.0, 0.0)], [(22.0, 13.0, math.pi)]]
    m = scenario(units)
    events = run_turns(m, 2, [{"units": {"p0u0": {"fire": [22.0, 13.0]}}}, None])
    assert m.world.unit_by_id["p0u1"].hp == 80.0
    assert m.world.unit_by_id["p1u0"].hp == 100.0
    assert len(_kinds(events, "friendly_hit")) == 1
    assert not _kinds(events, "hit")
    assert m.world.metrics[0]["friendly_hits"] == 1
    assert m.world.metrics[0]["damage_dealt"] == 0

    m = scenario(units, friendly_fire=False)
    run_turns(m, 3, [{"units": {"p0u0": {"fire": [22.0, 13.0]}}}, None])
    assert m.world.unit_by_id["p0u1"].hp == 100.0
    assert m.world.unit_by_id["p1u0"].hp == 80.0  # the shot passed through the teammate


def test_walls_stop_projectiles() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [(16.0, 13.0, math.pi)]], walls=[(13.0, 10.0, 13.0, 16.0)])
    events = run_turns(m, 10, [{"units": {"p0u0": {"fire": [16.0, 13.0]}}}, None])
    assert len(_kinds(events, "shot")) >= 3
    assert m.world.unit_by_id["p1u0"].hp == 100.0
    assert not any(p.alive for p in m.world.projectiles)


def test_dodge_moves_sideways_and_has_a_cooldown() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [(35.0, 3.0, math.pi)]])
    ev = m.step([{"units": {"p0u0": {"dodge": "left"}}}, None]).events
    x, y = pos(m, "p0u0")
    assert y > 13.8  # heading 0: left is +y
    assert abs(x - 10.0) < 0.05
    assert [e.kind for e in ev] == ["dodge"]
    ev = m.step([{"units": {"p0u0": {"dodge": "right"}}}, None]).events
    assert not _kinds(ev, "dodge")  # still cooling down
    run_turns(m, 9)
    ev = m.step([{"units": {"p0u0": {"dodge": "right"}}}, None]).events
    assert len(_kinds(ev, "dodge")) == 1


def test_units_cannot_walk_through_walls() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [(35.0, 3.0, math.pi)]], walls=[(13.0, 8.0, 13.0, 18.0)])
    run_turns(m, 20, [{"units": {"p0u0": {"move": [20.0, 13.0]}}}, None])
    assert pos(m, "p0u0")[0] < 13.0 - m.cfg.unit_radius + 0.05


def test_final_frame_shows_the_end_state() -> None:
    m = scenario([[(10.0, 13.0, 0.0)], [(16.0, 13.0, math.pi)]])
    frames: list[dict[str, JSON]] = []
    while not m.finished:
        frames.extend(m.step([{"units": {"p0u0": {"fire": [16.0, 13.0]}}}, None]).frames)
    assert frames[-1]["tick"] == m.world.tick
    assert frames[-1]["units"][1][3] == 0.0  # the fallen unit's hp
    assert all(f["tick"] % 12 == 0 for f in frames[:-1])
