"""What the policy sees: per-pod features in the pod's own frame, computed the same way in torch
(training, from the batched engine) and in the exported stdlib bot (from the JSON observation).

Everything here must be computable from what a CodinGame bot is told (positions, velocities,
headings rounded to whole degrees, next checkpoints) plus what a bot can track itself (passes,
its own shield cooldown and boost): the exported file mirrors these formulas line for line
(`services/trainer/bot_template.py`), and the export test holds the two to agreement.

Frame: x along the pod's heading, as shown to bots (whole degrees), or, on the first turn where
the heading is not shown and rotation is free, along the bearing of its next checkpoint.

Self features (`SELF_DIM`): next checkpoint offset (2) and distance, offset from the next to the
following checkpoint (2), velocity (2), shield cooldown / 3, boost available, runner role, passes
so far / passes to win, first turn, the next checkpoint is the finish, the following one is.

Entity features (`ENTITY_DIM`, for the teammate and both opponents, pooled by the DeepSets
encoder): relative position (2) and distance, relative velocity (2), own velocity (2), heading
relative to ours (cos, sin), offset to its next checkpoint (2), passes ahead of ours / 4,
teammate, its team's runner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from shared.games.podracing.torch_engine import TorchRaces

POS_SCALE = 1.0 / 10000.0
VEL_SCALE = 1.0 / 1000.0
PASS_SCALE = 0.25
SELF_DIM = 14
ENTITY_DIM = 14
NUM_ENTITIES = 3
OBS_DIM = SELF_DIM + NUM_ENTITIES * ENTITY_DIM

OTHERS = ((1, 2, 3), (0, 2, 3), (3, 0, 1), (2, 0, 1))
"""For each pod: its teammate first, then the two opponents (pods 2p and 2p+1 belong to player p)."""


@dataclass(frozen=True, slots=True)
class RaceView:
    """The observable state of B races, as [B, 4] pod tensors (pods 0, 1: player 0; 2, 3: player 1)."""

    x: torch.Tensor
    y: torch.Tensor
    vx: torch.Tensor
    vy: torch.Tensor
    angle: torch.Tensor
    """Whole degrees as shown to bots (ignored on the first turn)."""
    next_cp: torch.Tensor
    passed: torch.Tensor
    shield_cd: torch.Tensor
    boost_available: torch.Tensor
    cp_x: torch.Tensor
    """[B, C] checkpoints (padded)."""
    cp_y: torch.Tensor
    num_checkpoints: torch.Tensor
    """[B]"""
    total_passes: torch.Tensor
    """[B] passes that win (the start counts as the first)."""
    first_turn: torch.Tensor
    """[B] bool"""

    @classmethod
    def from_races(cls, races: TorchRaces, dtype: torch.dtype = torch.float32) -> RaceView:
        angle = races.angle.to(dtype)
        # Bots see round-half-away whole degrees in [0, 360); angles are never negative here.
        shown = torch.floor(angle + 0.5).remainder(360.0)
        return cls(
            x=races.x.to(dtype),
            y=races.y.to(dtype),
            vx=races.vx.to(dtype),
            vy=races.vy.to(dtype),
            angle=shown,
            next_cp=races.next_cp,
            passed=races.passed,
            shield_cd=races.shield_cd.to(dtype),
            boost_available=races.boost_available.to(dtype),
            cp_x=races.cp_x.to(dtype),
            cp_y=races.cp_y.to(dtype),
            num_checkpoints=races.num_checkpoints,
            total_passes=races.total_passes,
            first_turn=races.turn == 0,
        )

    @classmethod
    def from_observations(
        cls, observations: list[dict[str, Any]], device: torch.device | str = "cpu"
    ) -> RaceView:
        """Views of JSON observations, each seen by its own player: its pods become pods 0 and 1."""
        pods = [[*obs["pods"], *obs["opponents"]] for obs in observations]

        def field(name: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
            return torch.tensor([[float(p[name]) for p in row] for row in pods], dtype=dtype, device=device)

        width = max(len(obs["checkpoints"]) for obs in observations)
        cps = [
            [*obs["checkpoints"], *[obs["checkpoints"][0]] * (width - len(obs["checkpoints"]))]
            for obs in observations
        ]
        return cls(
            x=field("x"),
            y=field("y"),
            vx=field("vx"),
            vy=field("vy"),
            angle=field("angle").clamp(min=0.0),
            next_cp=field("next_checkpoint", torch.long),
            passed=field("checkpoints_passed", torch.long),
            shield_cd=field("shield_cooldown"),
            boost_available=torch.tensor(
                [[1.0 if p["boost_available"] else 0.0 for p in row] for row in pods], device=device
            ),
            cp_x=torch.tensor([[float(c[0]) for c in row] for row in cps], device=device),
            cp_y=torch.tensor([[float(c[1]) for c in row] for row in cps], device=device),
            num_checkpoints=torch.tensor([obs["checkpoint_count"] for obs in observations], device=device),
            total_passes=torch.tensor(
                [obs["checkpoint_count"] * obs["laps"] + 1 for obs in observations], device=device
            ),
            first_turn=torch.tensor([obs["turn"] == 0 for obs in observations], device=device),
        )


def update_runners(view: RaceView, runners: torch.Tensor) -> torch.Tensor:
    """Each player's runner pod (0 or 1 within the player) [B, 2], with hysteresis.

    On the first turn the runner is the pod with more passes, then the one nearer its next
    checkpoint (pod 0 on a tie). Later the other pod takes over only once it has passed more
    checkpoints than the runner: a full checkpoint ahead, so roles do not flicker."""
    passed = view.passed.reshape(-1, 2, 2)
    cx = view.cp_x.gather(1, view.next_cp)
    cy = view.cp_y.gather(1, view.next_cp)
    dist = ((cx - view.x) ** 2 + (cy - view.y) ** 2).reshape(-1, 2, 2)
    second_first = (passed[..., 1] > passed[..., 0]) | (
        (passed[..., 1] == passed[..., 0]) & (dist[..., 1] < dist[..., 0])
    )
    current = passed.gather(2, runners.unsqueeze(2)).squeeze(2)
    other = passed.gather(2, (1 - runners).unsqueeze(2)).squeeze(2)
    swapped = torch.where(other > current, 1 - runners, runners)
    return torch.where(view.first_turn[:, None], second_first.long(), swapped)


def features(view: RaceView, runners: torch.Tensor) -> torch.Tensor:
    """[B, 4, OBS_DIM] features of every pod (self features, then the 3 entities)."""
    x, y, vx, vy = view.x, view.y, view.vx, view.vy
    cx = view.cp_x.gather(1, view.next_cp)
    cy = view.cp_y.gather(1, view.next_cp)
    following = view.next_cp + 1
    following = torch.where(following >= view.num_checkpoints[:, None], 0, following)
    fx = view.cp_x.gather(1, following)
    fy = view.cp_y.gather(1, following)
    dx, dy = cx - x, cy - y
    heading = frame_heading(view)
    cos, sin = torch.cos(heading), torch.sin(heading)

    def local(ax: torch.Tensor, ay: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _rotate(ax, ay, cos, sin)

    total = view.total_passes[:, None].to(x.dtype)
    is_runner = (
        (torch.arange(2, device=x.device)[None, None, :] == runners[:, :, None]).reshape(-1, 4).to(x.dtype)
    )
    first = view.first_turn[:, None].to(x.dtype).expand_as(x)
    ncx, ncy = local(dx * POS_SCALE, dy * POS_SCALE)
    nfx, nfy = local((fx - cx) * POS_SCALE, (fy - cy) * POS_SCALE)
    lvx, lvy = local(vx * VEL_SCALE, vy * VEL_SCALE)
    own = [
        ncx,
        ncy,
        torch.sqrt(dx * dx + dy * dy) * POS_SCALE,
        nfx,
        nfy,
        lvx,
        lvy,
        view.shield_cd / 3.0,
        view.boost_available,
        is_runner,
        view.passed.to(x.dtype) / total,
        first,
        (view.passed.to(x.dtype) == total - 1.0).to(x.dtype),
        (view.passed.to(x.dtype) == total - 2.0).to(x.dtype),
    ]
    index = torch.tensor(OTHERS, device=x.device)

    def others(t: torch.Tensor) -> torch.Tensor:
        return t[:, index]

    def local3(ax: torch.Tensor, ay: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _rotate(ax, ay, cos[:, :, None], sin[:, :, None])

    ox, oy, ovx, ovy = others(x), others(y), others(vx), others(vy)
    rx, ry = ox - x[:, :, None], oy - y[:, :, None]
    lrx, lry = local3(rx * POS_SCALE, ry * POS_SCALE)
    rvx, rvy = local3((ovx - vx[:, :, None]) * VEL_SCALE, (ovy - vy[:, :, None]) * VEL_SCALE)
    avx, avy = local3(ovx * VEL_SCALE, ovy * VEL_SCALE)
    rel_heading = others(heading) - heading[:, :, None]
    ocx, ocy = local3((others(cx) - ox) * POS_SCALE, (others(cy) - oy) * POS_SCALE)
    ahead = (others(view.passed) - view.passed[:, :, None]).to(x.dtype) * PASS_SCALE
    mate = torch.tensor([1.0, 0.0, 0.0], device=x.device, dtype=x.dtype).expand_as(ahead)
    entity = [
        lrx,
        lry,
        torch.sqrt(rx * rx + ry * ry) * POS_SCALE,
        rvx,
        rvy,
        avx,
        avy,
        torch.cos(rel_heading),
        torch.sin(rel_heading),
        ocx,
        ocy,
        ahead.clamp(-2.0, 2.0),
        mate,
        others(is_runner),
    ]
    own_t = torch.stack(own, dim=-1)
    entity_t = torch.stack(entity, dim=-1).flatten(2)
    return torch.cat((own_t, entity_t), dim=-1)


def _rotate(
    ax: torch.Tensor, ay: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(ax, ay) in the frame whose x axis has this cosine and sine."""
    return ax * cos + ay * sin, ay * cos - ax * sin


def frame_heading(view: RaceView) -> torch.Tensor:
    """[B, 4] the heading (radians) each pod's features and actions are relative to."""
    cx = view.cp_x.gather(1, view.next_cp)
    cy = view.cp_y.gather(1, view.next_cp)
    bearing = torch.atan2(cy - view.y, cx - view.x)
    return torch.where(view.first_turn[:, None], bearing, view.angle * (math.pi / 180.0))
