"""The DeepSets policy: one network for both of a player's pods.

A shared encoder embeds each other pod (teammate, two opponents) seen from the acting pod; a max
over the three embeddings is a context that does not depend on their order; a head maps the pod's
own features plus that context to the action. The critic has the same shape and its own weights
(it is never exported).

Action per pod: one of the action set's discrete actions (`actions.ACTION_SETS`: a rotation and
a thrust, SHIELD or BOOST), drawn from a categorical distribution over the actor's logits; a
rollout stores its index. Log-probabilities and entropy are the categorical's, which is exactly the
distribution of the orders played (each action is one order), so the entropy bonus can never push
a parameter where it changes nothing played: the Gaussian head clipped to [-1, 1] that this
replaced had its thrust standard deviation driven to its clamp that way (docs/trainer.md). The
deterministic action (export, evaluation) is the argmax.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from services.trainer.actions import ACTION_SETS, DEFAULT_ACTION_SET, Kind
from services.trainer.features import ENTITY_DIM, NUM_ENTITIES, SELF_DIM
from shared.training.config import NetShapeConfig

SPECIAL_LOGIT = -2.0
"""A fresh policy's logit for SHIELD and BOOST actions (0 for the others): SHIELD costs three
turns without thrust, so an untrained racer should rarely try it."""


CRITIC_GAIN = 0.01
"""The critic's last layer starts near 0: the zero-sum reward is small per turn (a race's lead
changes add up to about 1), and a critic starting at values of order 1 would bury it in noise."""


class DeepSets(nn.Module):
    """encoder (entity -> embedding), max-pool over entities, head (self + context -> outputs)."""

    def __init__(self, outputs: int, shape: NetShapeConfig, head_gain: float = 0.01) -> None:
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


def action_count(action_set: str) -> int:
    if action_set not in ACTION_SETS:
        raise ValueError(f"unknown action set {action_set!r}; known: {', '.join(ACTION_SETS)}")
    return len(ACTION_SETS[action_set])


class Agent(nn.Module):
    """Actor (one logit per action of the set) and critic."""

    def __init__(self, shape: NetShapeConfig | None = None, action_set: str = DEFAULT_ACTION_SET) -> None:
        super().__init__()
        self.shape = shape or NetShapeConfig()
        self.action_set = action_set
        self.actor = DeepSets(action_count(action_set), self.shape, head_gain=0.01)
        self.critic = DeepSets(1, self.shape, head_gain=CRITIC_GAIN)
        last = self.actor.head[-1]
        assert isinstance(last, nn.Linear)
        special = torch.tensor([kind != Kind.THRUST for _, _, kind in ACTION_SETS[action_set]])
        with torch.no_grad():
            last.bias.copy_(torch.where(special, SPECIAL_LOGIT, 0.0))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)  # type: ignore[no-any-return]

    def log_probs(self, obs: torch.Tensor) -> torch.Tensor:
        """[..., A] log-probability of every action."""
        return F.log_softmax(self.actor(obs), dim=-1)

    def act(
        self, obs: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(action, log-probability, entropy, value); samples an action when none is given."""
        log_p = self.log_probs(obs)
        if action is None:
            action = sample_action(log_p)
        return action, log_p.gather(-1, action[..., None]).squeeze(-1), entropy(log_p), self.value(obs)

    @torch.no_grad()
    def sample(self, obs: torch.Tensor) -> torch.Tensor:
        """An action without log-probabilities or values (opponents playing the current policy)."""
        return sample_action(self.actor(obs))


def entropy(log_p: torch.Tensor) -> torch.Tensor:
    """The categorical's entropy from its log-probabilities [..., A]."""
    return -(log_p.exp() * log_p).sum(-1)


def sample_action(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """An action index per row of logits (or log-probabilities), by the Gumbel-max trick: the
    argmax of logits plus Gumbel noise is a sample of their softmax."""
    uniform = torch.rand(logits.shape, device=logits.device, dtype=logits.dtype, generator=generator)
    gumbel = -torch.log(-torch.log(uniform.clamp(min=1e-12)))
    return (logits + gumbel).argmax(-1)


def deterministic_action(actor: nn.Module, obs: torch.Tensor) -> torch.Tensor:
    """The export's action: the most likely one."""
    return actor(obs).argmax(-1)  # type: ignore[no-any-return]
