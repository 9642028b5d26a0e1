"""The DeepSets policy: one network for both of a player's pods.

A shared encoder embeds each other pod (teammate, two opponents) seen from the acting pod; a max
over the three embeddings is a context that does not depend on their order; a head maps the pod's
own features plus that context to the action. The critic has the same shape and its own weights
(it is never exported).

Action per pod, 4 numbers (what rollouts store):
  0: rotation, clamped to [-1, 1] x 18 degrees from the pod's frame heading (`features`);
  1: thrust, (clamp(a, -1, 1) + 1) / 2 x max thrust;
  2: SHIELD (a Bernoulli sample, 0 or 1);
  3: BOOST (a Bernoulli sample, 0 or 1; SHIELD wins if both).
The first two are Gaussian with a learned, state-independent standard deviation. The
deterministic action (export, evaluation) takes the means and the heads' logits > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from services.trainer.features import ENTITY_DIM, NUM_ENTITIES, SELF_DIM

ACTION_DIM = 4
MAX_ROTATION_DEG = 18.0


@dataclass(frozen=True, slots=True)
class NetShape:
    """Layer widths, stored in checkpoints so that export rebuilds the same network."""

    encoder_hidden: int = 32
    embedding: int = 16
    hidden: int = 64


class DeepSets(nn.Module):
    """encoder (entity -> embedding), max-pool over entities, head (self + context -> outputs)."""

    def __init__(self, outputs: int, shape: NetShape, head_gain: float = 0.01) -> None:
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(ENTITY_DIM, shape.encoder_hidden),
            nn.ReLU(),
            nn.Linear(shape.encoder_hidden, shape.embedding),
        )
        self.head = nn.Sequential(
            nn.Linear(SELF_DIM + shape.embedding, shape.hidden),
            nn.ReLU(),
            nn.Linear(shape.hidden, shape.hidden),
            nn.ReLU(),
            nn.Linear(shape.hidden, outputs),
        )
        for layer in [*self.encoder, *self.head]:
            if isinstance(layer, nn.Linear):
                nn.init.orthogonal_(layer.weight, math.sqrt(2.0))
                nn.init.zeros_(layer.bias)
        last = self.head[-1]
        assert isinstance(last, nn.Linear)
        nn.init.orthogonal_(last.weight, head_gain)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        own = obs[..., :SELF_DIM]
        entities = obs[..., SELF_DIM:].reshape(*obs.shape[:-1], NUM_ENTITIES, ENTITY_DIM)
        context = self.encoder(entities).amax(dim=-2)
        return self.head(torch.cat((own, context), dim=-1))  # type: ignore[no-any-return]


class Agent(nn.Module):
    """Actor (4 outputs: rotation mean, thrust mean, SHIELD logit, BOOST logit) and critic."""

    def __init__(self, shape: NetShape | None = None) -> None:
        super().__init__()
        self.shape = shape or NetShape()
        self.actor = DeepSets(ACTION_DIM, self.shape, head_gain=0.01)
        self.critic = DeepSets(1, self.shape, head_gain=1.0)
        self.log_std = nn.Parameter(torch.full((2,), -0.5))
        last = self.actor.head[-1]
        assert isinstance(last, nn.Linear)
        with torch.no_grad():
            # Start with SHIELD and BOOST unlikely, thrust on: a fresh policy drives forwards.
            last.bias.copy_(torch.tensor([0.0, 0.5, -3.0, -3.0]))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)  # type: ignore[no-any-return]

    def log_std_clamped(self) -> torch.Tensor:
        return self.log_std.clamp(-5.0, 1.0)

    def act(
        self, obs: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(action, log-probability, entropy, value); samples an action when none is given."""
        out = self.actor(obs)
        mean, logits = out[..., :2], out[..., 2:]
        log_std = self.log_std_clamped()
        if action is None:
            action = sample_action(out, log_std)
        steer, switches = action[..., :2], action[..., 2:]
        # Gaussian rotation and thrust, Bernoulli SHIELD and BOOST (log p(x) = x l - softplus(l)).
        steer_logprob = -((steer - mean) ** 2) / (2.0 * (2.0 * log_std).exp()) - log_std - LOG_SQRT_2PI
        switch_logprob = switches * logits - F.softplus(logits)
        logprob = steer_logprob.sum(-1) + switch_logprob.sum(-1)
        steer_entropy = (0.5 + LOG_SQRT_2PI + log_std).sum().expand(obs.shape[:-1])
        switch_entropy = (F.softplus(logits) - logits * torch.sigmoid(logits)).sum(-1)
        return action, logprob, steer_entropy + switch_entropy, self.value(obs)

    @torch.no_grad()
    def sample(self, obs: torch.Tensor) -> torch.Tensor:
        """An action without log-probabilities or values (opponents playing the current policy)."""
        return sample_action(self.actor(obs), self.log_std_clamped())


LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def sample_action(
    out: torch.Tensor, log_std: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """A stochastic action from the actor's outputs: Gaussian steering, Bernoulli switches."""
    mean, logits = out[..., :2], out[..., 2:]
    noise = torch.randn(mean.shape, device=out.device, dtype=out.dtype, generator=generator)
    switches = torch.bernoulli(torch.sigmoid(logits), generator=generator)
    return torch.cat((mean + noise * log_std.exp(), switches), dim=-1)


def deterministic_action(actor: nn.Module, obs: torch.Tensor) -> torch.Tensor:
    """The export's action: Gaussian means, and SHIELD / BOOST when their logits are positive."""
    out = actor(obs)
    return torch.cat((out[..., :2], (out[..., 2:] > 0.0).to(out.dtype)), dim=-1)
