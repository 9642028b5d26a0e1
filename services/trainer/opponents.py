"""Scripted opponents on the batched engine: the built-in runner and blocker, vectorised.

They follow the reference built-ins (`shared.games.podracing.bots`) in spirit, not bit for bit:
the runner is `batched_env.runner_commands`; the blocker races its first pod and sends the
second between the opponent's leading pod and that pod's next checkpoint, ramming it with a
SHIELD just before impact. Evaluation always plays the real built-ins in the reference engine.
"""

from __future__ import annotations

import math
from enum import IntEnum

import torch

from shared.games.podracing.batched_env import runner_commands
from shared.games.podracing.torch_engine import TorchRaces

Commands = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]
"""(target [B, 2, 2], thrust [B, 2], boost [B, 2], shield [B, 2]) for one player's pods."""


class OpponentKind(IntEnum):
    """Who drives player 1 in a training race (stored per race, drawn again when it ends)."""

    IDLE = 0
    RUNNER = 1
    BLOCKER = 2
    SELF = 3
    LEAGUE = 4


def idle_commands(races: TorchRaces, player: int) -> Commands:
    """Stand still: aim at where the pods are, no thrust."""
    pods = slice(2 * player, 2 * player + 2)
    target = torch.stack((races.x[:, pods], races.y[:, pods]), dim=-1)
    zeros = torch.zeros_like(races.x[:, pods])
    flags = torch.zeros_like(races.boost_available[:, pods])
    return target, zeros, flags, flags


def runner(races: TorchRaces, player: int) -> Commands:
    target, thrust, boost, shield = runner_commands(races, player)
    return target, thrust, boost, shield


def blocker_commands(races: TorchRaces, player: int) -> Commands:
    """Pod 2p races; pod 2p+1 harasses the opponent's leading pod."""
    target, thrust, boost, shield = (t.clone() for t in runner_commands(races, player))
    me = 2 * player + 1
    theirs = slice(2 * (1 - player), 2 * (1 - player) + 2)
    x, y, vx, vy = races.x.T, races.y.T, races.vx.T, races.vy.T
    passed = races.passed.T[theirs]
    dist = races.distance_sq().T[theirs]
    second = (passed[1] > passed[0]) | ((passed[1] == passed[0]) & (dist[1] < dist[0]))
    victim = torch.where(second, 2 * (1 - player) + 1, 2 * (1 - player))[None, :]

    def of(t: torch.Tensor) -> torch.Tensor:
        return t.gather(0, victim)[0]

    px, py, pvx, pvy = x[me], y[me], vx[me], vy[me]
    vvx, vvy = of(vx), of(vy)
    ahead_x, ahead_y = of(x) + vvx, of(y) + vvy
    gate = of(races.next_cp.T)
    gx = races.cp_x.T.gather(0, gate[None, :])[0]
    gy = races.cp_y.T.gather(0, gate[None, :])[0]
    near = torch.hypot(ahead_x - px, ahead_y - py) < 2500.0
    wait_x = gx + (ahead_x - gx) * 0.25 - 3.5 * pvx
    wait_y = gy + (ahead_y - gy) * 0.25 - 3.5 * pvy
    aim_x = torch.where(near, ahead_x, wait_x)
    aim_y = torch.where(near, ahead_y, wait_y)
    wanted = torch.atan2(aim_y - py, aim_x - px) * (180.0 / math.pi)
    error = (torch.remainder(wanted - races.angle.T[me] + 540.0, 360.0) - 180.0).abs()
    error = torch.where(races.turn == 0, 0.0, (error - 18.0).clamp(min=0.0))
    max_thrust = float(races.config.max_thrust)
    power = torch.clamp((120.0 - error) / 60.0, 0.0, 1.0) * max_thrust
    distance = torch.hypot(aim_x - px, aim_y - py)
    power = torch.where(
        ~near & (distance < 1500.0), torch.minimum(power, max_thrust * distance / 1500.0), power
    )
    closing = torch.hypot(pvx - vvx, pvy - vvy)
    collide = (torch.hypot(px + pvx - ahead_x, py + pvy - ahead_y) < 850.0) & (closing > 250.0)
    ram = collide & (races.shield_cd.T[me] == 0)
    target[:, 1, 0] = aim_x
    target[:, 1, 1] = aim_y
    thrust[:, 1] = power
    boost[:, 1] = False
    shield[:, 1] = ram
    return target, thrust, boost, shield
