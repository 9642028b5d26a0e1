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
from typing import Any, Literal

import torch

from shared.games.podracing.engine import RaceConfig
from shared.games.podracing.torch_engine import SYNC_FREE_COLLISION_ITERS, TorchRaces
from shared.games.podracing.torch_ops import pod_major, weight

POS_SCALE = 1.0 / 10000.0
VEL_SCALE = 1.0 / 1000.0
POD_OBS = 21
OBS_DIM = 2 * POD_OBS + 3
ACTION_DIM = 8
AIM_DISTANCE = 10000.0
"""How far ahead of a pod the target point of an action is put (any distance gives the same heading)."""

OpponentName = Literal["runner", "idle"]


def observe(races: TorchRaces, player: int) -> torch.Tensor:
    """[B, OBS_DIM] egocentric observation of `player` (0 or 1) in every race.

    Computed on the engine's pod-major rows (contiguous [B] vectors, where elementwise kernels are
    fastest) and transposed once at the end."""
    x, y, vx, vy = races.x.T, races.y.T, races.vx.T, races.vy.T
    nxt = races.next_cp.T
    count = races.num_checkpoints[None, :]
    after = nxt + 1
    after = after - count * (after >= count)
    cp_x, cp_y = races.cp_x.T, races.cp_y.T
    cx, cy = cp_x.gather(0, nxt), cp_y.gather(0, nxt)
    ax, ay = cp_x.gather(0, after), cp_y.gather(0, after)
    heading = races.angle.T * (math.pi / 180.0)
    cos, sin = torch.cos(heading), torch.sin(heading)
    dtype = x.dtype
    shield_cd = races.shield_cd.T.to(dtype) / 3.0
    boost = races.boost_available.T.to(dtype)
    progress = races.passed.T.to(dtype) / races.total_passes.to(dtype)
    order = [2 * player, 2 * player + 1, 2 * (1 - player), 2 * (1 - player) + 1]
    rows: list[torch.Tensor] = []
    for slot in range(2):
        me = order[slot]
        others = [order[1 - slot], order[2], order[3]]
        c, s = cos[me], sin[me]

        def local(
            dx: torch.Tensor, dy: torch.Tensor, c: torch.Tensor = c, s: torch.Tensor = s
        ) -> list[torch.Tensor]:
            return [dx * c + dy * s, dy * c - dx * s]

        mx, my = x[me], y[me]
        rows += [
            *local((cx[me] - mx) * POS_SCALE, (cy[me] - my) * POS_SCALE),
            *local(vx[me] * VEL_SCALE, vy[me] * VEL_SCALE),
            *local((ax[me] - cx[me]) * POS_SCALE, (ay[me] - cy[me]) * POS_SCALE),
            shield_cd[me],
            boost[me],
            progress[me],
        ]
        for o in others:
            rows += local((x[o] - mx) * POS_SCALE, (y[o] - my) * POS_SCALE)
            rows += local((vx[o] - vx[me]) * VEL_SCALE, (vy[o] - vy[me]) * VEL_SCALE)
    cfg = races.config
    timeouts = races.timeouts.T.to(dtype) / float(cfg.timeout_turns)
    rows += [races.turn.to(dtype) / float(cfg.max_turns), timeouts[player], timeouts[1 - player]]
    obs = torch.clamp(torch.nan_to_num(torch.stack(rows), nan=0.0, posinf=10.0, neginf=-10.0), -10.0, 10.0)
    return pod_major(obs)


def actions_to_commands(
    races: TorchRaces, player: int, actions: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """[B, 8] actions of `player` -> (target [B, 2, 2], thrust [B, 2], boost [B, 2], shield [B, 2]).

    The results are views of pod-major tensors (see `runner_commands`)."""
    a = pod_major(actions.to(races.dtype))
    pods = slice(2 * player, 2 * player + 2)
    x, y = races.x.T[pods], races.y.T[pods]
    nxt = races.next_cp.T[pods]
    bearing = torch.atan2(races.cp_y.T.gather(0, nxt) - y, races.cp_x.T.gather(0, nxt) - x)
    heading = bearing + a[0::4] * math.pi
    target = torch.stack((x + torch.cos(heading) * AIM_DISTANCE, y + torch.sin(heading) * AIM_DISTANCE))
    thrust = (a[1::4] + 1.0) * (0.5 * races.config.max_thrust)
    return target.permute(2, 1, 0), thrust.T, (a[3::4] > 0.0).T, (a[2::4] > 0.0).T


def runner_commands(races: TorchRaces, player: int) -> tuple[torch.Tensor, ...]:
    """A vectorised racing policy: aim at the next checkpoint minus 3 turns of drift, slow down
    when facing away, boost on long straight lines. Good enough to be beaten only by learning.

    Returns (target [B, 2, 2], thrust [B, 2], boost [B, 2], shield [B, 2]) as transposed views of
    pod-major tensors: copied into pod-major command buffers (as `BatchedPodracingEnv` does) they
    never need a transposing copy."""
    pods = slice(2 * player, 2 * player + 2)
    x, y, vx, vy = races.x.T[pods], races.y.T[pods], races.vx.T[pods], races.vy.T[pods]
    nxt = races.next_cp.T[pods]
    cx, cy = races.cp_x.T.gather(0, nxt), races.cp_y.T.gather(0, nxt)
    tx, ty = cx - 3.0 * vx, cy - 3.0 * vy
    wanted = torch.atan2(ty - y, tx - x) * (180.0 / math.pi)
    error = torch.remainder(wanted - races.angle.T[pods] + 540.0, 360.0) - 180.0
    later = ~(races.turn == 0)[None, :]
    error = error.abs_().mul_(weight(later, error.dtype))
    max_thrust = float(races.config.max_thrust)
    thrust = torch.clamp((90.0 - error) / 90.0, 0.0, 1.0) * max_thrust
    dx, dy = cx - x, cy - y
    far = dx * dx + dy * dy > 5000.0**2
    boost = far & (error < 4.0) & races.boost_available.T[pods] & later
    shield = torch.zeros_like(boost)
    return torch.stack((tx, ty)).permute(2, 1, 0), thrust.T, boost.T, shield.T


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
        collision_iters: int | None = None,
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
        if collision_iters is None:
            # The CPU step runs only the collisions that happen, so the reference's cap is free there.
            cap = (config or RaceConfig()).max_collisions_per_turn
            collision_iters = cap if self.device.type == "cpu" else SYNC_FREE_COLLISION_ITERS
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
        # Commands are gathered in pod-major buffers and passed as [B, ...] views of them, which
        # the engine reads without a transposing copy.
        self._target = torch.zeros(2, 4, num_envs, dtype=dtype, device=self.device).permute(2, 1, 0)
        self._thrust = torch.zeros(4, num_envs, dtype=dtype, device=self.device).T
        self._boost = torch.zeros(4, num_envs, dtype=torch.bool, device=self.device).T
        self._shield = torch.zeros(4, num_envs, dtype=torch.bool, device=self.device).T
        self._dist = torch.zeros(num_envs, 2, dtype=dtype, device=self.device)
        self._truncated = torch.zeros(num_envs, dtype=torch.bool, device=self.device)

    def _own_distance(self) -> torch.Tensor:
        return torch.sqrt(self.races.distance_sq()[:, :2])

    def reset(self) -> torch.Tensor:
        self.races.reset()
        self._dist.copy_(self._own_distance())
        return observe(self.races, 0)

    def observe(self, player: int = 0) -> torch.Tensor:
        """[N, OBS_DIM] the observation of either player (1 sees the same race from the other side)."""
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, not {player}")
        return observe(self.races, player)

    def step_commands(
        self, target: torch.Tensor, thrust: torch.Tensor, boost: torch.Tensor, shield: torch.Tensor
    ) -> torch.Tensor:
        """Play one turn with commands for all four pods, both players supplied by the caller (a
        trainer whose opponents are policies); returns the races that just ended [N] (they have
        already restarted). Rewards are the caller's business."""
        self.races.step(target, thrust, boost, shield)
        return self.races.just_finished

    def step(
        self, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
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
