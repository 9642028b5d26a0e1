"""GAE against a computation done by hand on a tiny rollout."""

from __future__ import annotations

import torch

from services.trainer.ppo import compute_gae


def test_gae_matches_the_hand_computation() -> None:
    # Two races, three steps. Race 1 ends after step 0 (its observation at t=1 starts a new race).
    rewards = torch.tensor([[1.0, 0.5], [0.0, 1.0], [2.0, -1.0]])
    values = torch.tensor([[0.5, 1.0], [1.0, 0.0], [0.5, 2.0]])
    dones = torch.tensor([[0.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    next_value = torch.tensor([1.0, 3.0])
    next_done = torch.tensor([0.0, 1.0])
    gamma, lam = 0.9, 0.8
    advantages, returns = compute_gae(rewards, values, dones, next_value, next_done, gamma, lam)

    # Race 0, no ends: deltas d_t = r_t + g V_{t+1} - V_t.
    d2 = 2.0 + 0.9 * 1.0 - 0.5  # 2.4
    d1 = 0.0 + 0.9 * 0.5 - 1.0  # -0.55
    d0 = 1.0 + 0.9 * 1.0 - 0.5  # 1.4
    a2 = d2
    a1 = d1 + 0.9 * 0.8 * a2
    a0 = d0 + 0.9 * 0.8 * a1
    # Race 1: the race ends after step 0 and after step 2 (next_done), so nothing is bootstrapped there.
    e2 = -1.0 - 2.0  # no bootstrap: next_done
    e1 = 1.0 + 0.9 * 2.0 - 0.0
    e0 = 0.5 - 1.0  # dones[1] = 1: the step-0 race ended
    b2 = e2
    b1 = e1 + 0.9 * 0.8 * b2
    b0 = e0
    expected = torch.tensor([[a0, b0], [a1, b1], [a2, b2]])
    assert torch.allclose(advantages, expected, atol=1e-6)
    assert torch.allclose(returns, expected + values, atol=1e-6)


def test_gae_with_lambda_one_is_the_discounted_return_minus_the_value() -> None:
    rewards = torch.tensor([[1.0], [2.0], [3.0]])
    values = torch.tensor([[0.3], [0.2], [0.1]])
    dones = torch.zeros(3, 1)
    advantages, returns = compute_gae(
        rewards, values, dones, torch.tensor([10.0]), torch.tensor([0.0]), 0.5, 1.0
    )
    expected_returns = torch.tensor(
        [[1 + 0.5 * 2 + 0.25 * 3 + 0.125 * 10], [2 + 0.5 * 3 + 0.25 * 10], [3 + 0.5 * 10]]
    )
    assert torch.allclose(returns, expected_returns, atol=1e-6)
    assert torch.allclose(advantages, expected_returns - values, atol=1e-6)
