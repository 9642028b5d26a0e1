"""Quick strength measures of a policy on the batched engine (deterministic actions).

Used by the learning test, the benchmark and progress reports; the real yardstick is
`services.trainer.evaluate` in the reference engine against the built-in bots.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from services.trainer.actions import DEFAULT_ACTION_SET
from services.trainer.env import TrainingEnv
from services.trainer.opponents import OpponentKind
from services.trainer.policy import deterministic_action
from shared.training.config import RewardWeightsConfig


@dataclass(frozen=True, slots=True)
class Measure:
    checkpoints_per_100_turns: float
    """Checkpoints passed by the policy's two pods per 100 race turns."""
    races: int
    """Races that ended within the measured turns."""
    win_rate: float | None


Play = Callable[[TrainingEnv], torch.Tensor]
"""Player 0's actions [B, 2] in the env's current states."""


def measure(
    actor: nn.Module,
    opponent: OpponentKind = OpponentKind.IDLE,
    *,
    num_races: int = 64,
    turns: int = 300,
    seed: int = 12345,
    device: torch.device | str = "cpu",
    action_set: str = DEFAULT_ACTION_SET,
) -> Measure:
    """Play the actor's most likely actions in `num_races` races for `turns` turns against a
    scripted opponent (or idle pods)."""

    def play(env: TrainingEnv) -> torch.Tensor:
        return deterministic_action(actor, env.features[:, :2])

    return measure_play(
        play, opponent, num_races=num_races, turns=turns, seed=seed, device=device, action_set=action_set
    )


@torch.no_grad()
def measure_play(
    play: Play,
    opponent: OpponentKind = OpponentKind.IDLE,
    *,
    num_races: int = 64,
    turns: int = 300,
    seed: int = 12345,
    device: torch.device | str = "cpu",
    action_set: str = DEFAULT_ACTION_SET,
) -> Measure:
    """`measure` for any player 0 (a teacher's labels: how much a built-in loses to an action set)."""
    if opponent not in (OpponentKind.IDLE, OpponentKind.RUNNER, OpponentKind.BLOCKER):
        raise ValueError("measure plays scripted opponents only")
    env = TrainingEnv(num_races, device, seed=seed, action_set=action_set)

    def draw(count: int) -> tuple[torch.Tensor, torch.Tensor]:
        kinds = torch.full((count,), int(opponent), dtype=torch.long, device=env.device)
        return kinds, torch.zeros(count, dtype=torch.long, device=env.device)

    def unused(_features: torch.Tensor) -> torch.Tensor:
        raise AssertionError("no policy opponents here")

    env.reset(draw)
    weights = RewardWeightsConfig()
    passes = 0
    races = wins = 0
    for _ in range(turns):
        _, result = env.step(play(env), weights, unused, [], draw)
        passes += int(result.passes.sum())
        races += int(result.done.sum())
        wins += int((result.outcome > 0).sum())
    rate = 100.0 * passes / (turns * num_races)
    return Measure(rate, races, wins / races if races else None)
