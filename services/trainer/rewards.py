"""Rewards for the trainer: a zero-sum reward for winning, plus optional shaping (docs/trainer.md).

    reward   = lead x (change in the team's lead this turn) + win x (+1 won, -1 lost, at the end)
               + shaping (all weights 0 by default)
    lead     = own best pod's race progress - the opponent's best pod's race progress

Both of a player's pods get the same reward (team-shared), and the other player's is its negative
(zero-sum): a turn that moves our runner forwards by what theirs moves counts nothing. A pod's race
progress is its potential (the track distance covered up to its next checkpoint minus its distance
to it) as a share of the race's length, so the lead changes add up to at most about +-1 over a
race, as large as the win. The lead term is 0 on the turn a race ends (the pods are already on the
next track): the win says who was ahead then.

The shaping terms are the earlier dense rewards, kept configurable (each one off unless its weight
is set):

    dense_i  = progress x progress_i x (1 for the runner, blocker_progress for the blocker)
               + checkpoint x passes_i
               - runner_contact (the runner touches an enemy pod)
               + blocker_contact (the blocker touches the enemy runner)
               - blocker_hinder x the enemy runner's progress (blocker only)
    shaping_i = (1 - team_spirit) x dense_i + team_spirit x dense_teammate
"""

from __future__ import annotations

import torch

from services.trainer.features import RaceView
from shared.training.config import RewardWeightsConfig

CONTACT_DISTANCE = 850.0
"""Pods whose centres end a turn this close have touched (the pod radius is 400)."""


def checkpoint_distance(view: RaceView) -> torch.Tensor:
    """[B, 4] distance of each pod to its next checkpoint."""
    cx = view.cp_x.gather(1, view.next_cp)
    cy = view.cp_y.gather(1, view.next_cp)
    return torch.hypot(cx - view.x, cy - view.y)


def race_progress(view: RaceView) -> torch.Tensor:
    """[B, 4] each pod's share of the race covered: (track distance up to its next checkpoint -
    its distance to it) / the race's length (laps x lap length), 0 at the start, 1 at the finish.

    With `passed` p (the start counts as the first pass), the next checkpoint is p mod C and the
    track distance up to it is (p // C) laps plus the segments 1..(p mod C) of a lap."""
    count = view.num_checkpoints[:, None]
    width = view.cp_x.shape[1]
    index = torch.arange(width, device=view.cp_x.device)[None, :]
    previous = torch.where(index == 0, count - 1, index - 1)
    segment = torch.hypot(
        view.cp_x - view.cp_x.gather(1, previous), view.cp_y - view.cp_y.gather(1, previous)
    )
    segment = torch.where(index < count, segment, 0.0)
    lap = segment.sum(1, keepdim=True)
    # before[k] = segments 1..k: the distance from checkpoint 0 to checkpoint k.
    before = segment.cumsum(1) - segment[:, :1]
    laps = (view.total_passes[:, None] - 1) // count
    passed = view.passed
    covered = (passed // count).to(lap.dtype) * lap + before.gather(1, passed % count)
    return (covered - checkpoint_distance(view)) / (laps.to(lap.dtype) * lap)


def lead(view: RaceView) -> torch.Tensor:
    """[B] player 0's best pod's race progress minus player 1's."""
    share = race_progress(view)
    return share[:, :2].amax(1) - share[:, 2:].amax(1)


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


def winning_rewards(
    weights: RewardWeightsConfig,
    lead_before: torch.Tensor,
    lead_after: torch.Tensor,
    outcome: torch.Tensor,
    done: torch.Tensor,
) -> torch.Tensor:
    """[B] player 0's zero-sum reward (both pods get it): the lead gained, and the win or loss."""
    gained = torch.where(done, 0.0, lead_after - lead_before)
    return weights.lead * gained + weights.win * torch.where(done, outcome.to(gained.dtype), 0.0)


def shaping_rewards(
    weights: RewardWeightsConfig,
    player: int,
    gained: torch.Tensor,
    passes: torch.Tensor,
    contact: torch.Tensor,
    runners: torch.Tensor,
    done: torch.Tensor,
) -> torch.Tensor:
    """[B, 2] shaping rewards of `player`'s pods. `gained` [B, 4] progress, `passes` [B, 4],
    `contact` [B, 4, 4], `runners` [B, 2] (runner pod per player)."""
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
    return (1.0 - spirit) * dense + spirit * dense.flip(1)
