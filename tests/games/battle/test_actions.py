"""Bad actions are sanitised and counted, never raised; players only command their own units."""

from __future__ import annotations

import json
import math

import pytest

from shared.games.battle.game import BattleMatch
from tests.support.battle_scenarios import pos, scenario


def _match() -> BattleMatch:
    return scenario([[(10.0, 13.0, 0.0), (10.0, 16.0, 0.0)], [(30.0, 13.0, math.pi)]])


def test_bad_values_are_ignored_and_counted() -> None:
    m = _match()
    action = {
        "units": {
            "p0u0": {
                "move": [math.nan, 1.0],
                "turn": math.inf,
                "fire": "there",
                "dodge": "up",
                "signal": {"word": "bogus"},
                "jump": True,
            },
            "p1u0": {"move": [1.0, 1.0]},  # the other player's unit
            "p9u9": {"move": [1.0, 1.0]},  # no such unit
        },
        "extra": 1,
    }
    events = m.step([action, None]).events
    assert m.world.metrics[0]["invalid_actions"] == 9
    assert events == []  # nothing fired, dodged or moved
    assert m.world.unit_by_id["p0u0"].heading == 0.0
    assert pos(m, "p1u0") == pytest.approx((30.0, 13.0), abs=1e-6)


def test_out_of_range_move_and_signal_values_are_clamped_and_counted() -> None:
    m = _match()
    m.step(
        [
            {
                "units": {
                    "p0u0": {"move": [100.0, -5.0], "signal": {"word": "attack", "values": [3, -0.5, 1]}}
                }
            },
            None,
        ]
    )
    u = m.world.unit_by_id["p0u0"]
    r = m.cfg.unit_radius
    assert tuple(u.control.position) == pytest.approx((40.0 - r, r))
    assert u.signal_values == (1.0, -0.5)
    assert m.world.metrics[0]["invalid_actions"] == 3  # move clamped, value clamped, third value


@pytest.mark.parametrize(
    "garbage",
    ["string", 5, [], [1, 2], {"units": []}, {"units": {"p0u0": "x"}}, {"units": {"p0u0": {"move": "fast"}}}],
)
def test_garbage_never_raises(garbage: object) -> None:
    m = _match()
    m.step([garbage, None])
    assert m.world.metrics[0]["invalid_actions"] >= 1
    assert m.world.metrics[1]["invalid_actions"] == 0


def test_booleans_are_not_numbers() -> None:
    m = _match()
    m.step([{"units": {"p0u0": {"turn": True, "fire": [True, 1.0]}}}, None])
    assert m.world.metrics[0]["invalid_actions"] == 2
    assert m.world.metrics[0]["shots"] == 0


def test_history_records_sanitised_orders_with_ticks() -> None:
    m = _match()
    m.step([{"units": {"p0u0": {"move": [12.0, 13.0], "turn": 7.0}}}, None])
    m.step([{"units": {"p0u0": {"move": "stop"}}}, None])
    hist = m.observation(0)["units"][0]["history"]
    assert hist == [
        {"move": [12.0, 13.0], "turn": round(7.0 - 2 * math.pi, 4), "tick": 0},
        {"move": "stop", "tick": 24},
    ]
    for _ in range(20):
        m.step([{"units": {"p0u0": {"move": "stop"}}}, None])
    assert len(m.observation(0)["units"][0]["history"]) == 12


def test_observation_is_json_and_finite() -> None:
    m = _match()
    m.step([{"units": {"p0u0": {"move": [math.inf, 2.0], "fire": [30.0, 13.0]}}}, None])
    text = json.dumps(m.observation(0), allow_nan=False)  # raises on NaN or infinity
    assert json.loads(text)["units"][0]["self"]["id"] == "p0u0"
