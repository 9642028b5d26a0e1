"""The zero-sum reward for winning against a computation done by hand on a small track."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from services.trainer.features import RaceView
from services.trainer.rewards import lead, race_progress, winning_rewards
from shared.training.config import RewardWeightsConfig

# One lap of 3 checkpoints: cp0 (0, 0) -> cp1 (3000, 0) -> cp2 (3000, 4000) -> back to cp0.
# Segments: cp0->cp1 3000, cp1->cp2 4000, cp2->cp0 5000: a lap (and the race) is 12,000 units.
RACE = 12_000.0


def _view(xs: list[float], ys: list[float], passed: list[int], next_cp: list[int]) -> RaceView:
    zeros = torch.zeros(1, 4)
    return RaceView(
        x=torch.tensor([xs]),
        y=torch.tensor([ys]),
        vx=zeros,
        vy=zeros,
        angle=zeros,
        next_cp=torch.tensor([next_cp]),
        passed=torch.tensor([passed]),
        shield_cd=zeros,
        boost_available=zeros,
        cp_x=torch.tensor([[0.0, 3000.0, 3000.0]]),
        cp_y=torch.tensor([[0.0, 0.0, 4000.0]]),
        num_checkpoints=torch.tensor([3]),
        total_passes=torch.tensor([4]),  # 3 checkpoints x 1 lap + the start
        first_turn=torch.tensor([False]),
    )


BEFORE = _view(
    xs=[1000.0, 3000.0, 1500.0, 0.0],
    ys=[0.0, 1000.0, 2000.0, 0.0],
    passed=[1, 2, 3, 1],
    next_cp=[1, 2, 0, 1],
)


def test_race_progress_by_hand() -> None:
    # pod 0: 3000 covered up to cp1, 2000 from it; pod 1: 7000 up to cp2, 3000 from it;
    # pod 2: the whole lap up to cp0, 2500 from it; pod 3: on the start line, 3000 from cp1.
    expected = torch.tensor([[1000.0, 4000.0, 9500.0, 0.0]]) / RACE
    assert torch.allclose(race_progress(BEFORE), expected)
    # Best pods: ours 4000, theirs 9500.
    assert torch.allclose(lead(BEFORE), torch.tensor([(4000.0 - 9500.0) / RACE]))


def test_the_reward_is_the_lead_gained_plus_the_win() -> None:
    # Our best pod (pod 1) moves 1000 closer to cp2; their best pod does not move.
    after = dataclasses.replace(BEFORE, y=torch.tensor([[0.0, 2000.0, 2000.0, 0.0]]))
    weights = RewardWeightsConfig(lead=2.0, win=5.0)
    outcome = torch.tensor([0])
    running = winning_rewards(weights, lead(BEFORE), lead(after), outcome, torch.tensor([False]))
    assert running.tolist() == pytest.approx([2.0 * 1000.0 / RACE])
    # A race that ends pays the win (or loss) only: its pods are already on the next track.
    won = winning_rewards(weights, lead(BEFORE), lead(after), torch.tensor([1]), torch.tensor([True]))
    lost = winning_rewards(weights, lead(BEFORE), lead(after), torch.tensor([-1]), torch.tensor([True]))
    assert (won.item(), lost.item()) == (5.0, -5.0)


def test_the_lead_is_zero_sum() -> None:
    """Seen from player 1 (its pods first), the lead is the negative of player 0's."""
    order = [2, 3, 0, 1]
    swapped = dataclasses.replace(
        BEFORE,
        x=BEFORE.x[:, order],
        y=BEFORE.y[:, order],
        passed=BEFORE.passed[:, order],
        next_cp=BEFORE.next_cp[:, order],
    )
    assert torch.allclose(lead(swapped), -lead(BEFORE))


def test_shaping_is_off_by_default() -> None:
    assert not RewardWeightsConfig().shaped()
    assert RewardWeightsConfig(checkpoint=0.5).shaped()
