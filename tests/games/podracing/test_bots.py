"""The built-in bots: they race properly and beat a naive baseline."""

from __future__ import annotations

from pathlib import Path

from shared.games.podracing import bots
from shared.games.podracing.bots import blocker, naive, runner
from shared.games.podracing.game import PodracingGame
from shared.games.replay import play_local

GAME = PodracingGame()


def test_runner_beats_naive_and_finishes_in_time() -> None:
    for seed in range(5):
        for runner_side in (0, 1):
            players = [naive, naive]
            players[runner_side] = runner
            result = play_local(GAME, seed, players)["result"]
            assert result["reason"] == "won", (seed, result)
            assert result["players"][runner_side]["rank"] == 0, (seed, runner_side)
            assert result["turns"] < 450


def test_blocker_harasses_and_shields() -> None:
    shields = collisions = wins = 0
    for seed in range(4):
        result = play_local(GAME, seed, [blocker, runner])["result"]
        metrics = result["players"][0]["metrics"]
        shields += metrics["shields_used"]
        collisions += metrics["collisions"]
        wins += result["players"][0]["rank"] == 0
        assert result["reason"] == "won"
    assert shields > 0
    assert collisions > 0
    assert wins >= 2, "blocking should pay off against a pure runner"


def test_bots_handle_the_first_turn_and_other_configs() -> None:
    match = GAME.create_match(2, {"max_thrust": 200, "laps": 1, "checkpoints_min": 2, "checkpoints_max": 2})
    observation = match.observation(0)
    for bot in (runner, blocker, naive):
        action = bot(observation)
        assert len(action["pods"]) == 2
        for pod in action["pods"]:
            assert pod["thrust"] in ("BOOST", "SHIELD") or 0 <= pod["thrust"] <= 200
    result = play_local(GAME, 2, [runner, blocker], {"max_thrust": 200, "laps": 1})["result"]
    assert result["reason"] == "won"


def test_bots_are_standard_library_only() -> None:
    source = Path(bots.__file__).read_text()
    assert "from shared" not in source
    assert "import shared" not in source
