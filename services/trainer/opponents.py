"""Scripted opponents on the batched engine: the built-in runner and blocker, vectorised.

`race_pods` is the built-in runner's `race_pod` (`shared.games.podracing.bots`) rule for rule:
velocity-compensated aim, anticipation of the next checkpoint when the pod will coast into the
current one (thrust halved until the coast still makes it), thrust by heading error, no thrust
while sliding past a checkpoint, BOOST on long straight lines (the first turn included). It is
computed in float32 on the device, so a rounding may differ from the reference now and then; a
test holds it to the reference. The blocker races its first pod the same way and sends the
second between the opponent's leading pod and that pod's next checkpoint, ramming it with a
SHIELD just before impact. Evaluation always plays the real built-ins in the reference engine.
"""

from __future__ import annotations

from enum import IntEnum

import torch

from shared.games.podracing import bots
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
    SEARCH = 5
    """builtin:search, in worker processes (`search_opponents.py`)."""


def idle_commands(races: TorchRaces, player: int) -> Commands:
    """Stand still: aim at where the pods are, no thrust."""
    pods = slice(2 * player, 2 * player + 2)
    target = torch.stack((races.x[:, pods], races.y[:, pods]), dim=-1)
    zeros = torch.zeros_like(races.x[:, pods])
    flags = torch.zeros_like(races.boost_available[:, pods])
    return target, zeros, flags, flags


THRUST_HALVINGS = 8
"""100 -> 50 -> 25 -> 12 -> 6 -> 3 -> 1 -> 0: every thrust the built-in's halving loop can try."""


def _angle_diff(wanted: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    return torch.remainder(wanted - angle + 540.0, 360.0) - 180.0


def _coasts_into(
    x: torch.Tensor,
    y: torch.Tensor,
    vx: torch.Tensor,
    vy: torch.Tensor,
    cx: torch.Tensor,
    cy: torch.Tensor,
    turns: int,
) -> torch.Tensor:
    """Whether each pod reaches (cx, cy) within `turns` turns without more thrust (`bots._coasts_into`)."""
    hit = torch.zeros_like(x, dtype=torch.bool)
    radius_sq = bots.CHECKPOINT_AIM_RADIUS**2
    for _ in range(turns):
        nx, ny = x + vx, y + vy
        sx, sy = nx - x, ny - y
        length_sq = sx * sx + sy * sy
        u = ((cx - x) * sx + (cy - y) * sy) / torch.where(length_sq == 0, 1.0, length_sq)
        u = torch.where(length_sq == 0, 0.0, u.clamp(0.0, 1.0))
        px, py = x + u * sx - cx, y + u * sy - cy
        hit = hit | (px * px + py * py < radius_sq)
        x, y = nx, ny
        vx, vy = torch.trunc(vx * bots.FRICTION), torch.trunc(vy * bots.FRICTION)
    return hit


def _heading_error(
    x: torch.Tensor,
    y: torch.Tensor,
    angle: torch.Tensor,
    first: torch.Tensor,
    ax: torch.Tensor,
    ay: torch.Tensor,
) -> torch.Tensor:
    """Degrees still off the aim after this turn's rotation (0 on the first turn)."""
    wanted = torch.rad2deg(torch.atan2(ay - y, ax - x))
    error = (_angle_diff(wanted, angle).abs() - bots.MAX_ROTATION).clamp(min=0.0)
    return torch.where(first, 0.0, error)


def _thrust_for(error: torch.Tensor, max_thrust: float) -> torch.Tensor:
    fading = torch.floor(max_thrust * (120.0 - error) / 60.0)
    return torch.where(error < 60.0, max_thrust, torch.where(error >= 120.0, 0.0, fading))


def race_pods(races: TorchRaces, pods: slice) -> Commands:
    """The built-in runner's command for the pods `pods` (a slice of 1 or 2 pods) of every race."""
    x, y = races.x[:, pods].float(), races.y[:, pods].float()
    vx, vy = races.vx[:, pods].float(), races.vy[:, pods].float()
    # Bots see their heading in whole degrees (round half away; angles are never negative).
    angle = torch.remainder(torch.floor(races.angle[:, pods].float() + 0.5), 360.0)
    first = (races.turn == 0)[:, None].expand_as(x)
    nxt = races.next_cp[:, pods]
    count = races.num_checkpoints[:, None]
    cpx, cpy = races.cp_x.float(), races.cp_y.float()
    cx, cy = cpx.gather(1, nxt), cpy.gather(1, nxt)
    following = torch.where(nxt + 1 >= count, 0, nxt + 1)
    fx, fy = cpx.gather(1, following), cpy.gather(1, following)
    max_thrust = float(races.config.max_thrust)
    final = races.passed[:, pods] >= races.total_passes[:, None] - 1

    # Anticipation: aim at the following checkpoint, with the largest halving of the thrust
    # after which the pod still coasts into the current one.
    anticipate = ~final & _coasts_into(x, y, vx, vy, cx, cy, bots.COAST_TURNS)
    ax, ay = fx - bots.VELOCITY_COMPENSATION * vx, fy - bots.VELOCITY_COMPENSATION * vy
    wanted = torch.rad2deg(torch.atan2(ay - y, ax - x))
    turned = torch.where(
        first, wanted, angle + _angle_diff(wanted, angle).clamp(-bots.MAX_ROTATION, bots.MAX_ROTATION)
    )
    rad = torch.deg2rad(turned)
    start = _thrust_for(_heading_error(x, y, angle, first, ax, ay), max_thrust)
    # Every thrust the halving loop may try, simulated at once: [THRUST_HALVINGS, B, pods].
    halvings = torch.exp2(-torch.arange(THRUST_HALVINGS, device=x.device, dtype=x.dtype))
    candidates = torch.floor(start[None] * halvings[:, None, None])
    nvx, nvy = vx + torch.cos(rad) * candidates, vy + torch.sin(rad) * candidates
    after = (
        torch.round(x + nvx),
        torch.round(y + nvy),
        torch.trunc(nvx * bots.FRICTION),
        torch.trunc(nvy * bots.FRICTION),
    )
    ok = _coasts_into(*after, cx, cy, bots.COAST_TURNS - 1) | (candidates <= 0)
    # The first candidate that still coasts in (the last one, 0, always does).
    chosen = candidates.gather(0, ok.to(torch.uint8).argmax(0, keepdim=True))[0]

    # Otherwise: aim at the current checkpoint, slow down while sliding past it, boost when far.
    bx, by = cx - bots.VELOCITY_COMPENSATION * vx, cy - bots.VELOCITY_COMPENSATION * vy
    error = _heading_error(x, y, angle, first, bx, by)
    thrust = _thrust_for(error, max_thrust)
    distance = torch.hypot(cx - x, cy - y)
    moving = (vx != 0) | (vy != 0)
    drift = torch.rad2deg(torch.atan2(cy - y, cx - x) - torch.atan2(vy, vx))
    drift = torch.where(moving, (torch.remainder(drift + 540.0, 360.0) - 180.0).abs(), 0.0)
    orbiting = (distance < bots.ORBIT_DISTANCE) & (drift > bots.ORBIT_ERROR)
    thrust = torch.where(
        orbiting, torch.minimum(thrust, torch.floor(torch.tensor(max_thrust * bots.ORBIT_THRUST))), thrust
    )
    boost = (
        races.boost_available[:, pods]
        & (error <= bots.BOOST_MAX_ERROR)
        & (distance > bots.BOOST_MIN_DISTANCE)
        & ~anticipate
    )
    tx = torch.where(anticipate, torch.round(ax), torch.round(bx))
    ty = torch.where(anticipate, torch.round(ay), torch.round(by))
    thrust = torch.where(anticipate, chosen, thrust)
    dtype = races.dtype
    shield = torch.zeros_like(boost)
    return torch.stack((tx, ty), -1).to(dtype), thrust.to(dtype), boost, shield


def runner(races: TorchRaces, player: int) -> Commands:
    """The built-in runner: both pods race."""
    return race_pods(races, slice(2 * player, 2 * player + 2))


def blocker_commands(races: TorchRaces, player: int) -> Commands:
    """The built-in blocker: pod 2p races, pod 2p+1 harasses the opponent's leading pod
    (`bots.harass_pod`): SHIELD just before a hard impact, chase it when near, else wait a little
    in front of the checkpoint it is heading for."""
    target, thrust, boost, shield = race_pods(races, slice(2 * player, 2 * player + 2))
    me = 2 * player + 1
    theirs = slice(2 * (1 - player), 2 * (1 - player) + 2)
    x, y = races.x.T.float(), races.y.T.float()
    vx, vy = races.vx.T.float(), races.vy.T.float()
    passed = races.passed.T[theirs]
    dist = races.distance_sq().T[theirs]
    second = (passed[1] > passed[0]) | ((passed[1] == passed[0]) & (dist[1] < dist[0]))
    victim = torch.where(second, 2 * (1 - player) + 1, 2 * (1 - player))[None, :]

    def of(t: torch.Tensor) -> torch.Tensor:
        return t.gather(0, victim)[0]

    px, py, pvx, pvy = x[me], y[me], vx[me], vy[me]
    angle = torch.remainder(torch.floor(races.angle.T[me].float() + 0.5), 360.0)
    first = races.turn == 0
    victim_x, victim_y, victim_vx, victim_vy = of(x), of(y), of(vx), of(vy)
    ahead_x, ahead_y = victim_x + victim_vx, victim_y + victim_vy
    gate = of(races.next_cp.T)[None, :]
    gx, gy = races.cp_x.T.float().gather(0, gate)[0], races.cp_y.T.float().gather(0, gate)[0]
    near = torch.hypot(ahead_x - px, ahead_y - py) < 2500.0
    wait_x = gx + (ahead_x - gx) * 0.25 - bots.VELOCITY_COMPENSATION * pvx
    wait_y = gy + (ahead_y - gy) * 0.25 - bots.VELOCITY_COMPENSATION * pvy
    aim_x = torch.where(near, ahead_x, wait_x)
    aim_y = torch.where(near, ahead_y, wait_y)
    max_thrust = float(races.config.max_thrust)
    power = _thrust_for(_heading_error(px, py, angle, first, aim_x, aim_y), max_thrust)
    distance = torch.hypot(px - aim_x, py - aim_y)
    slowed = torch.minimum(power, torch.floor(max_thrust * distance / 1500.0))
    power = torch.where(~near & (distance < 1500.0), slowed, power)
    closing = torch.hypot(pvx - victim_vx, pvy - victim_vy)
    collide = (torch.hypot(px + pvx - ahead_x, py + pvy - ahead_y) < 850.0) & (closing > 250.0)
    ram = collide & (races.shield_cd.T[me] == 0)
    dtype = races.dtype
    target[:, 1, 0] = torch.where(ram, victim_x, torch.round(aim_x)).to(dtype)
    target[:, 1, 1] = torch.where(ram, victim_y, torch.round(aim_y)).to(dtype)
    thrust[:, 1] = torch.where(ram, 0.0, power).to(dtype)
    boost[:, 1] = False
    shield[:, 1] = ram
    return target, thrust, boost, shield
