"""The categorical head's log-probabilities and entropy are those of the orders actually played,
the entropy bonus cannot push a parameter where it changes nothing played (the clipped Gaussian
head's failure), and DeepSets pooling does not care about the order of the other pods."""

from __future__ import annotations

import math

import pytest
import torch
from torch.distributions import Categorical

from services.trainer.actions import ACTION_SETS, ActionTable
from services.trainer.env import TrainingEnv, policy_commands
from services.trainer.features import ENTITY_DIM, OBS_DIM, SELF_DIM
from services.trainer.policy import Agent


def _random_agent(seed: int) -> Agent:
    torch.manual_seed(seed)
    agent = Agent()
    with torch.no_grad():
        for param in agent.actor.parameters():
            param.add_(torch.randn_like(param) * 0.3)
    return agent


def test_log_probabilities_and_entropy_are_the_categoricals() -> None:
    agent = _random_agent(0)
    obs = torch.randn(50, 2, OBS_DIM)
    action, logprob, entropy, value = agent.act(obs)
    played = Categorical(logits=agent.actor(obs))
    assert torch.allclose(logprob, played.log_prob(action), atol=1e-5)  # type: ignore[no-untyped-call]
    assert torch.allclose(entropy, played.entropy(), atol=1e-5)  # type: ignore[no-untyped-call]
    assert value.shape == (50, 2)
    assert action.dtype == torch.long
    assert int(action.min()) >= 0
    assert int(action.max()) < len(ACTION_SETS["r5t3"])


@pytest.mark.slow
def test_the_orders_played_follow_the_distribution_the_loss_sees() -> None:
    """Sampled actions have the categorical's frequencies, and every action is a different order
    (no two actions collapse onto one, as a clipped Gaussian collapses all of its tail onto 100)."""
    agent = _random_agent(1)
    obs = torch.randn(1, 2, OBS_DIM).expand(20_000, 2, OBS_DIM)
    samples = agent.sample(obs)[:, 0]
    probs = agent.log_probs(obs[:1, 0]).exp()[0]
    frequencies = torch.bincount(samples, minlength=probs.numel()).float() / samples.numel()
    # 20,000 samples: a frequency's standard error is at most 0.0036; 5 of them.
    assert (frequencies - probs).abs().max() < 0.018, (frequencies, probs)

    env = TrainingEnv(1, action_set="r5t3")
    env.reset(lambda n: (torch.ones(n, dtype=torch.long), torch.zeros(n, dtype=torch.long)))
    table = ActionTable.of("r5t3")
    every = torch.arange(len(table))
    view = env.view
    orders = set()
    for index in every.tolist():
        target, thrust, boost, shield = policy_commands(view, 0, torch.tensor([[index, index]]), 100.0, table)
        orders.add(
            (
                round(float(target[0, 0, 0])),
                round(float(target[0, 0, 1])),
                float(thrust[0, 0]),
                bool(boost[0, 0]),
                bool(shield[0, 0]),
            )
        )
    assert len(orders) == len(table), "two actions play the same order"


@pytest.mark.slow
def test_the_entropy_gradient_cannot_push_a_parameter_out_of_the_played_range() -> None:
    """Pure entropy ascent: the entropy the loss sees stays the entropy of the orders played (never
    above log A), and every parameter stays finite and bounded; with the old clipped Gaussian the
    loss's entropy grew without bound while the played thrust piled up at its clip."""
    agent = _random_agent(2)
    optimizer = torch.optim.Adam(agent.actor.parameters(), lr=0.05)
    obs = torch.randn(256, 2, OBS_DIM)
    actions = len(ACTION_SETS["r5t3"])
    for _ in range(300):
        _, _, entropy, _ = agent.act(obs)
        optimizer.zero_grad()
        (-entropy.mean()).backward()  # type: ignore[no-untyped-call]
        optimizer.step()
    with torch.no_grad():
        _, _, entropy, _ = agent.act(obs)
        samples = agent.sample(obs[:1, :1].expand(20_000, 1, OBS_DIM)).flatten()
    frequencies = torch.bincount(samples, minlength=actions).float() / samples.numel()
    played = -(frequencies * frequencies.clamp(min=1e-12).log()).sum()
    assert float(entropy.max()) <= math.log(actions) + 1e-5
    assert abs(float(entropy[0, 0]) - float(played)) < 0.01, (entropy[0, 0], played)
    for name, param in agent.actor.named_parameters():
        assert torch.isfinite(param).all(), name
        assert float(param.detach().abs().max()) < 100.0, name


def test_the_other_pods_order_does_not_matter() -> None:
    torch.manual_seed(1)
    agent = Agent()
    obs = torch.randn(20, OBS_DIM)
    entities = obs[:, SELF_DIM:].reshape(20, 3, ENTITY_DIM)
    swapped = torch.cat((obs[:, :SELF_DIM], entities[:, [2, 0, 1]].reshape(20, -1)), dim=1)
    assert torch.allclose(agent.actor(obs), agent.actor(swapped), atol=1e-6)
    assert torch.allclose(agent.value(obs), agent.value(swapped), atol=1e-6)
