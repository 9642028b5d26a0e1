"""Quick strength measures of a policy on the batched engine (deterministic actions).

Used by the learning test, the benchmark and progress reports; the real yardstick is
`services.trainer.evaluate` in the reference engine against the built-in bots.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from services.trainer.env import TrainingEnv
from services.trainer.opponents import OpponentKind
from services.trainer.policy import deterministic_action
from services.trainer.rewards import RewardWeights


@dataclass(frozen=True, slots=True)
class Measure:
    checkpoints_per_100_turns: float
    """Checkpoints passed by the policy's two pods per 100 race turns."""
    races: int
    """Races that ended within the measured turns."""
    win_rate: float | None


@torch.no_grad()
def measure(
    actor: nn.Module,
    opponent: OpponentKind = OpponentKind.IDLE,
    *,
    num_races: int = 64,
    turns: int = 300,
    seed: int = 12345,
    device: torch.device | str = "cpu",
) -> Measure:
    """Play `num_races` races for `turns` turns against a scripted opponent (or idle pods)."""
    if opponent not in (OpponentKind.IDLE, OpponentKind.RUNNER, OpponentKind.BLOCKER):
        raise ValueError("measure plays scripted opponents only")
    env = TrainingEnv(num_races, device, seed=seed)

    def draw(count: int) -> tuple[torch.Tensor, torch.Tensor]:
        kinds = torch.full((count,), int(opponent), dtype=torch.long, device=env.device)
        return kinds, torch.zeros(count, dtype=torch.long, device=env.device)

    def unused(features: torch.Tensor) -> torch.Tensor:
        raise AssertionError("no policy opponents here")

    features = env.reset(draw)
    weights = RewardWeights()
    passes = 0
    races = wins = 0
    for _ in range(turns):
        action = deterministic_action(actor, features[:, :2])
        features, result = env.step(action, weights, unused, [], draw)
        passes += int(result.passes.sum())
        races += int(result.done.sum())
        wins += int((result.outcome > 0).sum())
    rate = 100.0 * passes / (turns * num_races)
    return Measure(rate, races, wins / races if races else None)
