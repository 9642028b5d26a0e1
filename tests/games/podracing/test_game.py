"""The Game/Match adapter: observations, sanitising, results, frames and replays."""

from __future__ import annotations

import copy
import json
import math

import pytest
from pydantic import ValidationError

from shared.games.podracing.bots import blocker, naive, runner
from shared.games.podracing.engine import PodCommand, Race
from shared.games.podracing.game import PodracingGame, PodracingMatch
from shared.games.registry import get_game
from shared.games.replay import ReplayRecorder, compress, decompress, play_local, resimulate
from tests.support.schema_check import errors

GAME = PodracingGame()


def _match(seed: int = 3, **config: object) -> PodracingMatch:
    match = GAME.create_match(seed, dict(config))
    assert isinstance(match, PodracingMatch)
    return match


def test_registry_and_schemas() -> None:
    game = get_game("podracing")
    assert isinstance(game, PodracingGame)
    assert set(game.builtin_bots()) == {"runner", "blocker", "search"}
    assert game.config_schema()["additionalProperties"] is False
    json.dumps(game.observation_schema())
    json.dumps(game.action_schema())


def test_config_is_validated() -> None:
    with pytest.raises(ValidationError):
        GAME.create_match(1, {"lapz": 3})
    with pytest.raises(ValidationError):
        GAME.create_match(1, {"checkpoints_min": 6, "checkpoints_max": 4})
    with pytest.raises(ValidationError):
        GAME.create_match(1, {"max_thrust": 201})
    with pytest.raises(ValueError, match="played by exactly 2 players, not 3"):
        GAME.create_match(1, None, num_players=3)
    match = _match(1, laps=2, max_thrust=200, boost_per_team=True)
    assert match.race.config.laps == 2
    assert match.race.config.boost_per_team


def test_observations_follow_the_schema_every_turn() -> None:
    match = _match(5)
    schema = GAME.observation_schema()
    first = match.observation(1)
    assert [pod["angle"] for pod in first["pods"] + first["opponents"]] == [-1] * 4
    assert (first["player"], first["turn"], first["timeout_left"]) == (1, 0, 100)
    assert first["pods"][0]["x"] == int(match.race.pods[2].x)  # own pods first
    for _ in range(40):
        observations = [match.observation(player) for player in range(2)]
        for observation in observations:
            assert errors(observation, schema) == [], errors(observation, schema)
            assert json.loads(json.dumps(observation)) == observation
        match.step([blocker(observations[0]), runner(observations[1])])
    later = match.observation(0)
    assert all(0 <= pod["angle"] <= 359 for pod in later["pods"])
    broken = copy.deepcopy(later)
    broken["pods"][0]["vx"] = 1.5
    del broken["opponents"][1]["angle"]
    assert len(errors(broken, schema)) == 2, "the checker itself must catch bad observations"


def test_action_schema_accepts_bot_output() -> None:
    observation = _match(2).observation(0)
    for bot in (runner, blocker, naive):
        assert errors(bot(observation), GAME.action_schema()) == []


BAD_ACTIONS = [
    ("not an object", 1),
    ({"pods": "nope"}, 1),
    ({}, 1),
    ({"pods": []}, 1),
    ({"pods": [{"x": 1, "y": 2, "thrust": 50}]}, 1),
    ({"pods": [{"x": 1, "y": 2, "thrust": 50}] * 3}, 1),
    ({"pods": [{"x": math.nan, "y": 2, "thrust": 50}, {"x": 1, "y": math.inf, "thrust": 5}]}, 2),
    ({"pods": [{"x": "1", "y": 2, "thrust": 50}, {"y": 2, "thrust": 50}]}, 2),
    ({"pods": [{"x": 1, "y": 2, "thrust": "FAST"}, {"x": 1, "y": 2}]}, 2),
    ({"pods": [{"x": 1, "y": 2, "thrust": -5}, {"x": 1, "y": 2, "thrust": 1e9}]}, 2),
    ({"pods": [{"x": 1e12, "y": -1e12, "thrust": 50}, {"x": True, "y": 2, "thrust": 50}]}, 3),
    ({"pods": [{"x": 1, "y": 2, "thrust": 50, "message": 7}, {"x": 1, "y": 2, "thrust": None}]}, 2),
    ({"pods": [None, 3]}, 2),
]


@pytest.mark.parametrize(("action", "invalid"), BAD_ACTIONS)
def test_bad_actions_are_sanitised_and_counted(action: object, invalid: int) -> None:
    match = _match(4)
    step = match.step([action, None])
    assert match.turn == 1
    assert step.frames
    metrics = match.result().players
    assert metrics[0].metrics["invalid_actions"] == invalid
    assert metrics[1].metrics["invalid_actions"] == 0
    assert metrics[1].metrics["timed_out_turns"] == 1


def test_defaults_aim_at_the_next_checkpoint_without_thrust() -> None:
    match = _match(4)
    match.step([None, {"pods": [{"x": math.nan, "y": 0, "thrust": 100}, "junk"]}])
    cp1 = match.race.checkpoints[1]
    for pod in match.race.pods:
        assert (pod.vx, pod.vy) == (0.0, 0.0)
        expected = math.degrees(math.atan2(cp1[1] - pod.y, cp1[0] - pod.x)) % 360.0
        assert abs(pod.angle - expected) < 1e-9


def test_clamped_values_are_used() -> None:
    match = _match(4)
    cp1 = match.race.checkpoints[1]
    action = {
        "pods": [{"x": cp1[0], "y": cp1[1], "thrust": 150.4}, {"x": cp1[0], "y": cp1[1], "thrust": 49.5}]
    }
    match.step([action, None])
    reference = Race.from_seed(4)
    commands = [PodCommand(cp1[0], cp1[1], 100), PodCommand(cp1[0], cp1[1], 50)]
    commands += [PodCommand(*reference.checkpoints[1], 0)] * 2
    reference.step(commands)  # 150.4 clamps to 100; 49.5 rounds half away to 50
    assert match.race.pods == reference.pods
    assert match.result().players[0].metrics["invalid_actions"] == 1


def test_boost_shield_strings_messages_and_metrics() -> None:
    match = _match(4)
    cp1 = match.race.checkpoints[1]
    long = "x" * 100
    action = {
        "pods": [
            {"x": cp1[0], "y": cp1[1], "thrust": "boost", "message": "hi"},
            {"x": cp1[0], "y": cp1[1], "thrust": "SHIELD", "message": long},
        ]
    }
    step = match.step([action, None])
    kinds = [event.kind for event in step.events]
    assert "boost" in kinds
    assert "shield" in kinds
    frame = step.frames[0]
    assert frame["pods"][0]["message"] == "hi"
    assert frame["pods"][1]["message"] == "x" * 64
    metrics = match.result().players[0].metrics
    assert (metrics["boosts_used"], metrics["shields_used"], metrics["invalid_actions"]) == (1, 1, 1)


def test_forfeit_and_finished_match() -> None:
    match = _match(8)
    match.step([None, None])
    match.forfeit(1)
    assert match.finished
    result = match.result()
    assert result.reason == "forfeit"
    assert [p.rank for p in result.players] == [0, 1]
    assert match.step([None, None]).frames == []
    assert match.turn == 1


def test_full_match_result_and_frames() -> None:
    replay = play_local(GAME, 12, [runner, naive])
    result = replay["result"]
    assert result["reason"] == "won"
    assert result["turns"] < 500
    winner, loser = result["players"]
    assert (winner["rank"], loser["rank"]) == (0, 1)
    track = replay["frames"][0]["checkpoints"]
    assert winner["score"] == len(track) * 3 + 1
    assert winner["metrics"]["checkpoints"] >= len(track) * 3  # both pods' passes
    assert winner["metrics"]["finished_turn"] == result["turns"]
    assert loser["metrics"]["finished_turn"] == -1
    assert len(replay["frames"]) == result["turns"] + 1
    assert replay["frames"][-1]["finished"] == {"reason": "won", "winner": 0}
    kinds = {event["kind"] for event in replay["events"]}
    assert {"checkpoint", "win"} <= kinds


def test_replays_resimulate_exactly() -> None:
    replay = play_local(GAME, 21, [blocker, runner], config={"laps": 2})
    stored = decompress(compress(replay))
    assert resimulate(GAME, stored) == stored
    tampered = copy.deepcopy(stored)
    tampered["turns"][5]["actions"][0] = None
    assert resimulate(GAME, tampered)["frames"] != stored["frames"]


def test_replay_with_garbage_and_forfeit_resimulates() -> None:
    match = GAME.create_match(9, {})
    recorder = ReplayRecorder("podracing", 9, {}, 2, match)
    junk = [{"pods": [{"x": "a"}, 5]}, None, {"pods": [{"x": 1e300, "y": -1e300, "thrust": 1e300}] * 2}]
    for turn in range(30):
        actions = [junk[turn % 3], runner(match.observation(1))]
        recorder.record_turn(actions, [], match.step(actions))
    match.forfeit(0)
    recorder.record_final_forfeits([0])
    replay = json.loads(json.dumps(recorder.finish(match)))
    assert replay["result"]["reason"] == "forfeit"
    assert resimulate(GAME, replay) == replay


def test_same_seed_same_match() -> None:
    assert play_local(GAME, 33, [runner, blocker]) == play_local(GAME, 33, [runner, blocker])
    assert play_local(GAME, 33, [runner, blocker]) != play_local(GAME, 34, [runner, blocker])
