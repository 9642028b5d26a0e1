"""Batched podracing environment on `TorchRaces`: the trainer's view of the game, all tensors.

Player 0's two pods are driven by the policy; player 1 by a built-in torch opponent. Everything
stays on the engine's device, and `step` does not synchronise with the host, so rollouts of
thousands of races run at GPU speed. Finished races restart at once on a new track (the returned
observation is then the first of the new race, the usual vector-env convention; `info` carries
how the finished one ended).

Action per pod (4 values in [-1, 1]): heading offset (x 180 degrees from the bearing of the pod's
next checkpoint), thrust (-1 -> 0, 1 -> max_thrust), shield (> 0 = SHIELD), boost (> 0 = BOOST).
Non-finite actions are passed on as such and counted by the engine's sanitiser.

Observation (`OBS_DIM` = 45 floats, all finite and roughly in [-1, 1], clipped to [-10, 10]): for
each own pod, in the pod's own frame (x along its heading): next checkpoint offset (2), velocity
(2), offset from next to following checkpoint (2), shield cooldown / 3, boost available,
checkpoints passed / passes to win, then relative position (2) and velocity (2) of the teammate
and the two opponents; then turn / max_turns and both players' timeout counters / timeout_turns.
"""

from __future__ import annotations

import math
from typing import Literal

import torch

from shared.games.podracing.engine import RaceConfig
from shared.games.podracing.torch_engine import TorchRaces

POS_SCALE = 1.0 / 10000.0
VEL_SCALE = 1.0 / 1000.0
POD_OBS = 21
OBS_DIM = 2 * POD_OBS + 3
ACTION_DIM = 8
AIM_DISTANCE = 10000.0
"""How far ahead of a pod the target point of an action is put (any distance gives the same heading)."""

OpponentName = Literal["runner", "idle"]


def observe(races: TorchRaces, player: int) -> torch.Tensor:
    """[B, OBS_DIM] egocentric observation of `player` (0 or 1) in every race."""
    x, y, vx, vy = races.x, races.y, races.vx, races.vy
    nxt = races.next_cp
    count = races.num_checkpoints[:, None]
    after = torch.remainder(nxt + 1, count)
    cx, cy = races.cp_x.gather(1, nxt), races.cp_y.gather(1, nxt)
    ax, ay = races.cp_x.gather(1, after), races.cp_y.gather(1, after)
    heading = races.angle * (math.pi / 180.0)
    cos, sin = torch.cos(heading), torch.sin(heading)
    order = [2 * player, 2 * player + 1, 2 * (1 - player), 2 * (1 - player) + 1]
    blocks = []
    for slot in range(2):
        me = order[slot]
        others = [order[1 - slot], order[2], order[3]]
        c, s = cos[:, me : me + 1], sin[:, me : me + 1]

        def local(
            dx: torch.Tensor, dy: torch.Tensor, c: torch.Tensor = c, s: torch.Tensor = s
        ) -> list[torch.Tensor]:
            return [dx * c + dy * s, dy * c - dx * s]

        mx, my = x[:, me : me + 1], y[:, me : me + 1]
        feats = [
            *local((cx[:, me : me + 1] - mx) * POS_SCALE, (cy[:, me : me + 1] - my) * POS_SCALE),
            *local(vx[:, me : me + 1] * VEL_SCALE, vy[:, me : me + 1] * VEL_SCALE),
            *local(
                (ax[:, me : me + 1] - cx[:, me : me + 1]) * POS_SCALE,
                (ay[:, me : me + 1] - cy[:, me : me + 1]) * POS_SCALE,
            ),
            races.shield_cd[:, me : me + 1].to(x.dtype) / 3.0,
            races.boost_available[:, me : me + 1].to(x.dtype),
            races.passed[:, me : me + 1].to(x.dtype) / races.total_passes[:, None].to(x.dtype),
        ]
        for o in others:
            feats += local((x[:, o : o + 1] - mx) * POS_SCALE, (y[:, o : o + 1] - my) * POS_SCALE)
            feats += local(
                (vx[:, o : o + 1] - vx[:, me : me + 1]) * VEL_SCALE,
                (vy[:, o : o + 1] - vy[:, me : me + 1]) * VEL_SCALE,
            )
        blocks.append(torch.cat(feats, dim=1))
    cfg = races.config
    timeouts = races.timeouts.to(x.dtype) / float(cfg.timeout_turns)
    glob = torch.stack(
        (races.turn.to(x.dtype) / float(cfg.max_turns), timeouts[:, player], timeouts[:, 1 - player]), dim=1
    )
    obs = torch.cat([*blocks, glob], dim=1)
    return torch.clamp(torch.nan_to_num(obs, nan=0.0, posinf=10.0, neginf=-10.0), -10.0, 10.0)


def actions_to_commands(
    races: TorchRaces, player: int, actions: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """[B, 8] actions of `player` -> (target [B, 2, 2], thrust [B, 2], boost [B, 2], shield [B, 2])."""
    a = actions.to(races.dtype).view(-1, 2, 4)
    pods = slice(2 * player, 2 * player + 2)
    x, y = races.x[:, pods], races.y[:, pods]
    nxt = races.next_cp[:, pods]
    bearing = torch.atan2(races.cp_y.gather(1, nxt) - y, races.cp_x.gather(1, nxt) - x)
    heading = bearing + a[..., 0] * math.pi
    target = torch.stack((x + torch.cos(heading) * AIM_DISTANCE, y + torch.sin(heading) * AIM_DISTANCE), -1)
    thrust = (a[..., 1] + 1.0) * (0.5 * races.config.max_thrust)
    return target, thrust, a[..., 3] > 0.0, a[..., 2] > 0.0


def runner_commands(races: TorchRaces, player: int) -> tuple[torch.Tensor, ...]:
    """A vectorised racing policy: aim at the next checkpoint minus 3 turns of drift, slow down
    when facing away, boost on long straight lines. Good enough to be beaten only by learning."""
    pods = slice(2 * player, 2 * player + 2)
    x, y, vx, vy = races.x[:, pods], races.y[:, pods], races.vx[:, pods], races.vy[:, pods]
    nxt = races.next_cp[:, pods]
    cx, cy = races.cp_x.gather(1, nxt), races.cp_y.gather(1, nxt)
    tx, ty = cx - 3.0 * vx, cy - 3.0 * vy
    wanted = torch.atan2(ty - y, tx - x) * (180.0 / math.pi)
    error = torch.remainder(wanted - races.angle[:, pods] + 540.0, 360.0) - 180.0
    first = (races.turn == 0)[:, None]
    error = torch.where(first, torch.zeros_like(error), error).abs()
    max_thrust = float(races.config.max_thrust)
    thrust = torch.clamp((90.0 - error) / 90.0, 0.0, 1.0) * max_thrust
    dist = torch.sqrt((cx - x) ** 2 + (cy - y) ** 2)
    boost = (dist > 5000.0) & (error < 4.0) & races.boost_available[:, pods] & ~first
    shield = torch.zeros_like(boost)
    return torch.stack((tx, ty), -1), thrust, boost, shield


class BatchedPodracingEnv:
    """`num_envs` races; `reset()` -> obs [N, 45]; `step(actions [N, 8])` -> (obs, reward,
    terminated, truncated, info), all tensors on `device`."""

    def __init__(
        self,
        num_envs: int,
        device: torch.device | str = "cpu",
        dtype: torch.dtype = torch.float32,
        opponent: OpponentName = "runner",
        *,
        config: RaceConfig | None = None,
        collision_iters: int = 4,
        seed: int = 0,
        checkpoint_reward: float = 1.0,
        distance_reward: float = 1.0,
        win_reward: float = 10.0,
    ) -> None:
        if opponent not in ("runner", "idle"):
            raise ValueError(f"unknown opponent {opponent!r}; use 'runner' or 'idle'")
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.opponent = opponent
        self.races = TorchRaces(
            num_envs,
            config,
            device=self.device,
            dtype=dtype,
            collision_iters=collision_iters,
            auto_reset=True,
            seed=seed,
        )
        self.observation_dim = OBS_DIM
        self.action_dim = ACTION_DIM
        self.checkpoint_reward = checkpoint_reward
        self.distance_reward = distance_reward
        self.win_reward = win_reward
        self._target = torch.zeros(num_envs, 4, 2, dtype=dtype, device=self.device)
        self._thrust = torch.zeros(num_envs, 4, dtype=dtype, device=self.device)
        self._boost = torch.zeros(num_envs, 4, dtype=torch.bool, device=self.device)
        self._shield = torch.zeros(num_envs, 4, dtype=torch.bool, device=self.device)
        self._dist = torch.zeros(num_envs, 2, dtype=dtype, device=self.device)
        self._truncated = torch.zeros(num_envs, dtype=torch.bool, device=self.device)

    def _own_distance(self) -> torch.Tensor:
        return torch.sqrt(self.races.distance_sq()[:, :2])

    def reset(self) -> torch.Tensor:
        self.races.reset()
        self._dist.copy_(self._own_distance())
        return observe(self.races, 0)

    def step(
        self, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict]:
        races = self.races
        target, thrust, boost, shield = actions_to_commands(races, 0, actions)
        self._target[:, :2] = target
        self._thrust[:, :2] = thrust
        self._boost[:, :2] = boost
        self._shield[:, :2] = shield
        if self.opponent == "runner":
            target, thrust, boost, shield = runner_commands(races, 1)
            self._target[:, 2:] = target
            self._thrust[:, 2:] = thrust
            self._boost[:, 2:] = boost
            self._shield[:, 2:] = shield
        else:
            self._target[:, 2:, 0] = races.x[:, 2:]
            self._target[:, 2:, 1] = races.y[:, 2:]
            self._thrust[:, 2:] = 0.0
        races.step(self._target, self._thrust, self._boost, self._shield)

        done = races.just_finished
        passes = races.passes
        new_dist = self._own_distance()
        # Distance shaping only for pods that kept the same checkpoint, and not across a reset.
        closer = torch.where((passes[:, :2] == 0) & ~done[:, None], self._dist - new_dist, 0.0)
        won = done & (races.episode_winner == 0)
        lost = done & (races.episode_winner == 1)
        reward = (
            self.checkpoint_reward * passes[:, :2].sum(1).to(closer.dtype)
            + self.distance_reward * closer.sum(1) * 0.001
            + self.win_reward * (won.to(closer.dtype) - lost.to(closer.dtype))
        )
        self._dist.copy_(new_dist)
        obs = observe(races, 0)
        info = {
            "winner": races.episode_winner,
            "reason": races.episode_reason,
            "episode_turns": races.episode_turns,
            "invalid_commands": races.invalid_commands,
            "collisions_capped": races.collisions_capped,
        }
        return obs, reward, done.clone(), self._truncated, info
