"""Reward shaping for the trainer: configurable weights, one function per term (docs/trainer.md).

    dense_i  = progress_i x (1 if runner else blocker_progress) + checkpoint x passes_i
               + role terms (runner: - runner_contact when touching an enemy pod;
                             blocker: + blocker_contact when touching the enemy runner,
                                      - blocker_hinder x the enemy runner's progress)
    team_i   = (1 - team_spirit) x dense_i + team_spirit x dense_teammate
    reward_i = (1 - tau) x team_i + tau x win x (+1 won, -1 lost, 0 otherwise; at the race's end)

Progress is potential-based: the potential of a pod is the track distance covered up to its next
checkpoint minus its distance to it, so going forward earns exactly what going back costs and
circling earns nothing. It is counted in thousands of map units.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from services.trainer.features import RaceView

CONTACT_DISTANCE = 850.0
"""Pods whose centres end a turn this close have touched (the pod radius is 400)."""


@dataclass(frozen=True, slots=True)
class RewardWeights:
    """Weights of the reward terms; every field may be changed while a run trains."""

    progress: float = 1.0
    """Per 1,000 map units of progress along the track."""
    checkpoint: float = 0.5
    """Per checkpoint passed."""
    win: float = 20.0
    """Won (+) or lost (-) race, scaled by tau."""
    tau: float = 0.3
    """Mix of the sparse win/loss term against the dense ones (0: dense only, 1: sparse only)."""
    team_spirit: float = 0.3
    """Share of the teammate's dense reward in each pod's reward."""
    blocker_progress: float = 0.3
    """How much a blocker's own progress counts (the runner's counts 1)."""
    runner_contact: float = 0.05
    """Penalty per turn the runner touches an enemy pod."""
    blocker_contact: float = 0.1
    """Bonus per turn the blocker touches the enemy runner."""
    blocker_hinder: float = 0.5
    """Penalty per 1,000 units of the enemy runner's progress, for the blocker."""


def checkpoint_distance(view: RaceView) -> torch.Tensor:
    """[B, 4] distance of each pod to its next checkpoint."""
    cx = view.cp_x.gather(1, view.next_cp)
    cy = view.cp_y.gather(1, view.next_cp)
    return torch.hypot(cx - view.x, cy - view.y)


def progress(before: torch.Tensor, after: RaceView, passes: torch.Tensor, done: torch.Tensor) -> torch.Tensor:
    """[B, 4] potential gained in the turn, in thousands of units (0 in races that just ended,
    whose pods are already on the next track).

    `before` is the distance to the next checkpoint before the turn; on a pass the potential grows
    by the length of the new segment."""
    now = checkpoint_distance(after)
    count = after.num_checkpoints[:, None]
    previous = after.next_cp - 1
    previous = torch.where(previous < 0, count - 1, previous)
    px, py = after.cp_x.gather(1, previous), after.cp_y.gather(1, previous)
    nx, ny = after.cp_x.gather(1, after.next_cp), after.cp_y.gather(1, after.next_cp)
    segment = torch.hypot(nx - px, ny - py)
    gained = before - now + torch.where(passes > 0, segment, 0.0)
    return torch.where(done[:, None], 0.0, gained) * 0.001


def touching(view: RaceView) -> torch.Tensor:
    """[B, 4, 4] whether pods i and j end the turn in contact."""
    dx = view.x[:, :, None] - view.x[:, None, :]
    dy = view.y[:, :, None] - view.y[:, None, :]
    return torch.hypot(dx, dy) < CONTACT_DISTANCE


def team_rewards(
    weights: RewardWeights,
    player: int,
    gained: torch.Tensor,
    passes: torch.Tensor,
    contact: torch.Tensor,
    runners: torch.Tensor,
    outcome: torch.Tensor,
    done: torch.Tensor,
) -> torch.Tensor:
    """[B, 2] rewards of `player`'s pods. `gained` [B, 4] progress, `passes` [B, 4], `contact`
    [B, 4, 4], `runners` [B, 2] (runner pod per player), `outcome` [B] (+1 player 0 won, -1 lost)."""
    dtype = gained.dtype
    mine = slice(2 * player, 2 * player + 2)
    enemy = 1 - player
    is_runner = torch.arange(2, device=gained.device)[None, :] == runners[:, player : player + 1]
    enemy_runner = 2 * enemy + runners[:, enemy]
    enemy_pods = slice(2 * enemy, 2 * enemy + 2)
    own_contact = contact[:, mine, enemy_pods].any(-1) & ~done[:, None]
    hits_runner = contact[:, mine].gather(2, enemy_runner[:, None, None].expand(-1, 2, 1)).squeeze(-1)
    hits_runner = hits_runner & ~done[:, None]
    enemy_progress = gained.gather(1, enemy_runner[:, None])
    runner_w = is_runner.to(dtype)
    blocker_w = 1.0 - runner_w
    dense = (
        weights.progress * gained[:, mine] * (runner_w + blocker_w * weights.blocker_progress)
        + weights.checkpoint * passes[:, mine].to(dtype)
        - runner_w * weights.runner_contact * own_contact.to(dtype)
        + blocker_w
        * (weights.blocker_contact * hits_runner.to(dtype) - weights.blocker_hinder * enemy_progress)
    )
    spirit = weights.team_spirit
    team = (1.0 - spirit) * dense + spirit * dense.flip(1)
    sign = 1.0 if player == 0 else -1.0
    sparse = torch.where(done, outcome.to(dtype) * sign, 0.0)[:, None]
    return (1.0 - weights.tau) * team + weights.tau * weights.win * sparse
