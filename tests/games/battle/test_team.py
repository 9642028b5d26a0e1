"""The team channel, signals seen on visible units, and the per-player memory with its size cap."""

from __future__ import annotations

import json
import math

from shared.games.battle.game import BattleMatch
from tests.support.battle_scenarios import scenario


def _match() -> BattleMatch:
    # p0u1 faces away behind a wall: it cannot see p0u0, but the team channel still carries signals.
    return scenario(
        [[(10.0, 13.0, 0.0), (4.0, 13.0, math.pi)], [(16.0, 13.0, math.pi)]],
        walls=[(7.0, 10.0, 7.0, 16.0)],
    )


def test_team_channel_carries_signals_out_of_sight_with_age() -> None:
    m = _match()
    m.step([{"units": {"p0u0": {"signal": {"word": "enemy", "values": [0.5, -0.25]}}}}, None])
    m.step([{"units": {}}, None])
    obs = m.observation(0)
    assert obs["units"][1]["visible_units"] == []
    channel = {c["unit"]: c for c in obs["team_channel"]}
    assert channel["p0u0"]["word"] == "enemy"
    assert channel["p0u0"]["values"] == [0.5, -0.25]
    assert channel["p0u0"]["age"] == 48
    assert channel["p0u1"]["word"] == "none"
    assert channel["p0u1"]["age"] == -1
    # The enemy sees the signal on the unit it can see, but has no access to p0's channel.
    seen = m.observation(1)["units"][0]["visible_units"]
    assert [(v["id"], v["signal"]["word"]) for v in seen] == [("p0u0", "enemy")]
    assert [c["unit"] for c in m.observation(1)["team_channel"]] == ["p1u0"]


def test_memory_round_trip_and_persistence() -> None:
    m = _match()
    m.step([{"memory": {"plan": [1, 2, 3], "note": "flank"}}, None])
    assert m.observation(0)["memory"] == {"plan": [1, 2, 3], "note": "flank"}
    assert m.observation(1)["memory"] == {}
    m.step([{"units": {}}, None])  # no memory key: the previous memory is kept
    assert m.observation(0)["memory"]["note"] == "flank"


def test_memory_size_cap() -> None:
    m = _match()
    m.step([{"memory": {"a": 1}}, None])
    pad = "x" * (2048 - len(json.dumps({"s": ""}, separators=(",", ":"))))
    exact = {"s": pad}
    assert len(json.dumps(exact, separators=(",", ":"))) == 2048
    m.step([{"memory": exact}, None])
    assert m.observation(0)["memory"] == exact
    m.step([{"memory": {"s": pad + "y"}}, None])  # one byte over: dropped, previous kept
    assert m.observation(0)["memory"] == exact
    metrics = m.result().players[0].metrics
    assert metrics["memory_dropped"] == 1
    assert metrics["invalid_actions"] == 1
    m.step([{"memory": {"bad": math.nan}}, None])
    assert m.observation(0)["memory"] == exact
    m.step([{"memory": [1, 2]}, None])
    assert m.result().players[0].metrics["invalid_actions"] == 3
