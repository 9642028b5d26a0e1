"""The vectorised built-in runner used in training plays like the real one (`bots.race_pod`)."""

from __future__ import annotations

import copy

import torch

from services.trainer.opponents import blocker_commands, race_pods
from shared.games.podracing import bots
from shared.games.podracing.engine import PodCommand, Race
from shared.games.podracing.game import PodracingGame, PodracingMatch
from shared.games.podracing.torch_engine import TorchRaces


def _states(seeds: range, every: int) -> tuple[list[Race], list[dict[str, object]]]:
    """Reference race states from real races of the built-in runner and blocker."""
    game = PodracingGame()
    races: list[Race] = []
    observations: list[dict[str, object]] = []
    for seed in seeds:
        match = game.create_match(seed)
        assert isinstance(match, PodracingMatch)
        while not match.finished:
            if match.race.turn % every == 0:
                races.append(copy.deepcopy(match.race))
                observations.append(match.observation(0))
            match.step([bots.runner(match.observation(0)), bots.blocker(match.observation(1))])
    return races, observations


def test_the_vectorised_runner_gives_the_built_in_runners_commands() -> None:
    races, observations = _states(range(6), every=3)
    batch = TorchRaces(len(races), dtype=torch.float32)
    batch.load_races(races)
    target, thrust, boost, _ = race_pods(batch, slice(0, 2))
    same = total = 0
    for n, observation in enumerate(observations):
        expected = bots.runner(observation)["pods"]
        for k, command in enumerate(expected):
            total += 1
            wants_boost = command["thrust"] == "BOOST"
            power = None if wants_boost else int(command["thrust"])
            close = (
                abs(float(target[n, k, 0]) - command["x"]) <= 1
                and abs(float(target[n, k, 1]) - command["y"]) <= 1
            )
            if close and bool(boost[n, k]) == wants_boost and (wants_boost or int(thrust[n, k]) == power):
                same += 1
    assert total > 500
    assert same / total >= 0.99, f"{same}/{total} commands agree"


def test_commands_are_usable_by_the_engine() -> None:
    race = Race.from_seed(3)
    batch = TorchRaces(1, dtype=torch.float32)
    batch.load_races([race])
    target, thrust, boost, shield = race_pods(batch, slice(0, 2))
    assert target.shape == (1, 2, 2)
    assert thrust.shape == (1, 2)
    assert boost.dtype == torch.bool
    assert not bool(shield.any())
    race.step(
        [PodCommand(float(target[0, k, 0]), float(target[0, k, 1]), int(thrust[0, k])) for k in range(2)]
        + [PodCommand(0, 0)] * 2
    )


def test_the_vectorised_blocker_gives_the_built_in_blockers_commands() -> None:
    races, observations = _states(range(6, 10), every=2)
    batch = TorchRaces(len(races), dtype=torch.float32)
    batch.load_races(races)
    target, thrust, _, shield = blocker_commands(batch, 0)
    same = 0
    for n, observation in enumerate(observations):
        command = bots.blocker(observation)["pods"][1]
        got = (round(float(target[n, 1, 0])), round(float(target[n, 1, 1])))
        power: int | str = "SHIELD" if bool(shield[n, 1]) else int(thrust[n, 1])
        if got == (command["x"], command["y"]) and power == command["thrust"]:
            same += 1
    assert len(observations) > 300
    assert same / len(observations) >= 0.98, f"{same}/{len(observations)} harassing commands agree"
