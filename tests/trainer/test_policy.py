"""The policy's hand-written distributions agree with torch.distributions, and DeepSets pooling
does not care about the order of the other pods."""

from __future__ import annotations

import torch
from torch.distributions import Bernoulli, Normal

from services.trainer.features import ENTITY_DIM, OBS_DIM, SELF_DIM
from services.trainer.policy import Agent


def test_log_probabilities_and_entropy_match_torch_distributions() -> None:
    torch.manual_seed(0)
    agent = Agent()
    with torch.no_grad():
        agent.log_std.copy_(torch.tensor([-0.3, 0.2]))
        for param in agent.actor.parameters():
            param.add_(torch.randn_like(param) * 0.3)
    obs = torch.randn(50, 2, OBS_DIM)
    action, logprob, entropy, value = agent.act(obs)
    out = agent.actor(obs)
    std = agent.log_std.exp()
    steer = Normal(out[..., :2], std)  # type: ignore[no-untyped-call]
    switches = Bernoulli(logits=out[..., 2:])  # type: ignore[no-untyped-call]
    expected = steer.log_prob(action[..., :2]).sum(-1) + switches.log_prob(action[..., 2:]).sum(-1)  # type: ignore[no-untyped-call]
    expected_entropy = steer.entropy().sum(-1) + switches.entropy().sum(-1)  # type: ignore[no-untyped-call]
    assert torch.allclose(logprob, expected, atol=1e-5)
    assert torch.allclose(entropy, expected_entropy, atol=1e-5)
    assert value.shape == (50, 2)
    assert set(action[..., 2:].unique().tolist()) <= {0.0, 1.0}


def test_the_other_pods_order_does_not_matter() -> None:
    torch.manual_seed(1)
    agent = Agent()
    obs = torch.randn(20, OBS_DIM)
    entities = obs[:, SELF_DIM:].reshape(20, 3, ENTITY_DIM)
    swapped = torch.cat((obs[:, :SELF_DIM], entities[:, [2, 0, 1]].reshape(20, -1)), dim=1)
    assert torch.allclose(agent.actor(obs), agent.actor(swapped), atol=1e-6)
    assert torch.allclose(agent.value(obs), agent.value(swapped), atol=1e-6)
