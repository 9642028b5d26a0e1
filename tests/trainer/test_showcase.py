"""The showcase race: a stdlib bot source (the built-in runner's own module, as an exported policy
would be) raced against a built-in bot gives a real match replay: the same one the platform's
replay recorder makes for the same bots, one that re-simulates to itself, and strict JSON."""

from __future__ import annotations

import inspect
import json

import pytest

from services.trainer.showcase import ShowcaseError, play_showcase
from shared.games.podracing import bots
from shared.games.registry import get_game
from shared.games.replay import encode, play_local, resimulate

RUNNER_SOURCE = inspect.getsource(bots) + "\n\ndecide = runner\n"
"""bots.py imports only the standard library: with `decide` bound it is a stdlib bot like an export."""

FAILING_SOURCE = """
def decide(observation):
    raise RuntimeError("broken policy")
"""

HALF_BROKEN_SOURCE = """
def decide(observation):
    if observation["turn"] % 2:
        return {"pods": "not a list"}
    targets = [observation["checkpoints"][pod["next_checkpoint"]] for pod in observation["pods"]]
    return {"pods": [{"x": x, "y": y, "thrust": 100} for x, y in targets]}
"""


@pytest.mark.parametrize("opponent", ["runner", "blocker"])
def test_the_showcase_is_the_replay_of_the_same_match(opponent: str) -> None:
    game = get_game("podracing")
    replay = play_showcase(RUNNER_SOURCE, seed=7, opponent=opponent)
    expected = play_local(game, 7, [bots.runner, game.builtin_bots()[opponent]])
    assert replay == expected
    assert replay["result"] is not None
    assert replay["result"]["reason"]
    assert len(replay["frames"]) == len(replay["turns"]) + 1 > 10
    assert resimulate(game, replay) == replay
    assert json.loads(encode(replay)) == replay


def test_different_seeds_race_on_different_tracks() -> None:
    first = play_showcase(RUNNER_SOURCE, seed=1)
    second = play_showcase(RUNNER_SOURCE, seed=2)
    assert first["seed"] == 1
    assert second["seed"] == 2
    assert first["frames"][0] != second["frames"][0]


NOT_JSON_SOURCE = """
def decide(observation):
    return {"pods": [{"x": float("nan"), "y": 0, "thrust": 100}, {1, 2}]}
"""


@pytest.mark.parametrize("source", [FAILING_SOURCE, NOT_JSON_SOURCE])
def test_a_policy_that_raises_or_answers_no_json_plays_the_default_action_and_loses(source: str) -> None:
    replay = play_showcase(source, seed=3)
    assert all(turn["actions"][0] is None for turn in replay["turns"])
    assert all(turn["actions"][1] is not None for turn in replay["turns"])
    ranks = {player["player"]: player["rank"] for player in replay["result"]["players"]}
    assert ranks[1] < ranks[0]
    assert resimulate(get_game("podracing"), replay) == replay


def test_malformed_answers_are_kept_raw_and_counted_by_the_game() -> None:
    """As in a real match: the replay keeps what the bot sent, the game plays the default for it."""
    replay = play_showcase(HALF_BROKEN_SOURCE, seed=4)
    turns = replay["turns"]
    assert all(turns[i]["actions"][0] == {"pods": "not a list"} for i in range(1, len(turns), 2))
    assert all(len(turns[i]["actions"][0]["pods"]) == 2 for i in range(0, len(turns), 2))
    policy = next(p for p in replay["result"]["players"] if p["player"] == 0)
    assert policy["metrics"]["invalid_actions"] >= len(turns) // 2
    assert resimulate(get_game("podracing"), replay) == replay


@pytest.mark.parametrize(
    ("source", "opponent", "message"),
    [
        ("def decide(:\n", "runner", "does not run: SyntaxError"),
        ("import json\n", "runner", "defines no decide"),
        ("raise ImportError('no torch here')\n", "runner", "does not run: ImportError: no torch here"),
        (RUNNER_SOURCE, "nobody", "unknown opponent 'nobody'"),
    ],
)
def test_bad_sources_and_opponents_say_why(source: str, opponent: str, message: str) -> None:
    with pytest.raises(ShowcaseError, match=message.replace("(", r"\(")):
        play_showcase(source, seed=1, opponent=opponent)


@pytest.mark.slow
def test_each_race_gets_a_fresh_module() -> None:
    """A policy with module state (it stops after 30 turns) races the same way every time."""
    counting = (
        "calls = 0\n\n"
        "def decide(observation):\n"
        "    global calls\n"
        "    calls += 1\n"
        "    x, y = observation['checkpoints'][1]\n"
        "    thrust = 100 if calls <= 30 else 0\n"
        "    return {'pods': [{'x': x, 'y': y, 'thrust': thrust} for _ in observation['pods']]}\n"
    )
    first = play_showcase(counting, seed=5)
    second = play_showcase(counting, seed=5)
    assert first == second


@pytest.mark.slow
def test_a_freshly_exported_policy_races_and_answers_every_turn() -> None:
    """The real export (services/trainer/export.py) of an untrained policy: its decide() answers
    each turn with an action the game reads, so the replay has no failed turn for player 0."""
    import torch  # here only: the rest of this file runs without torch, as play_showcase does

    from services.trainer.export import export_agent
    from services.trainer.policy import Agent
    from shared.training.config import NetShapeConfig

    torch.manual_seed(3)
    source = export_agent(Agent(NetShapeConfig()), NetShapeConfig())
    replay = play_showcase(source, seed=6)
    assert replay["turns"], "the race had no turn"
    assert all(isinstance(turn["actions"][0], dict) for turn in replay["turns"])
    policy = next(p for p in replay["result"]["players"] if p["player"] == 0)
    assert policy["metrics"]["invalid_actions"] == 0
    assert resimulate(get_game("podracing"), replay) == replay
