"""The discrete actions a pod may play, and the nearest one to any command (to label a teacher).

An action is a rotation from the pod's frame heading (`features.frame_heading`), a thrust as a
share of the maximum, and a kind: a plain thrust, SHIELD or BOOST. The policy picks one per pod
with a categorical head (`policy.Agent`), so the log-probability and entropy it learns from are
exactly those of the orders played: every action maps to one order and no two to the same.

Action sets are named by their grids, e.g. "r5t3": rotations {-18, -9, 0, 9, 18} degrees x
thrusts {0, 50, 100}%, then SHIELD and BOOST straight ahead (17 actions). The name is stored in
the run's args and written into the exported bot with the table itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import torch

MAX_ROTATION_DEG = 18.0
"""The engine turns a pod at most this much a turn (every turn but the first)."""
KIND_MISMATCH_COST = 100.0
"""Added to the distance of an action of another kind (thrust / SHIELD / BOOST) than the command's:
larger than any rotation-plus-thrust distance (at most 2^2 + 1^2), so the kind always wins."""


class Kind(IntEnum):
    THRUST = 0
    SHIELD = 1
    BOOST = 2


Action = tuple[float, float, Kind]
"""(rotation in degrees from the frame heading, thrust as a share of max thrust, kind)."""


def _grid(
    rotations: tuple[float, ...], thrusts: tuple[float, ...], specials: tuple[float, ...]
) -> tuple[Action, ...]:
    plain = tuple((r, t, Kind.THRUST) for r in rotations for t in thrusts)
    shield = tuple((r, 0.0, Kind.SHIELD) for r in specials)
    boost = tuple((r, 1.0, Kind.BOOST) for r in specials)
    return plain + shield + boost


ACTION_SETS: dict[str, tuple[Action, ...]] = {
    "r5t3": _grid((-18.0, -9.0, 0.0, 9.0, 18.0), (0.0, 0.5, 1.0), (0.0,)),
    "r5t3s3": _grid((-18.0, -9.0, 0.0, 9.0, 18.0), (0.0, 0.5, 1.0), (-18.0, 0.0, 18.0)),
    "r7t5": _grid((-18.0, -12.0, -6.0, 0.0, 6.0, 12.0, 18.0), (0.0, 0.25, 0.5, 0.75, 1.0), (0.0,)),
    "r3t2": _grid((-18.0, 0.0, 18.0), (0.0, 1.0), (0.0,)),
}
"""The sets measured (docs/trainer.md, "Action sets"); "r5t3" is the default."""
DEFAULT_ACTION_SET = "r5t3"


@dataclass(frozen=True)
class ActionTable:
    """An action set as tensors on a device: what `env.policy_commands` and the labels use."""

    name: str
    rotation: torch.Tensor
    """[A] radians."""
    thrust: torch.Tensor
    """[A] share of max thrust."""
    kind: torch.Tensor
    """[A] `Kind` values."""

    @classmethod
    def of(cls, name: str, device: torch.device | str = "cpu") -> ActionTable:
        if name not in ACTION_SETS:
            raise ValueError(f"unknown action set {name!r}; known: {', '.join(ACTION_SETS)}")
        actions = ACTION_SETS[name]
        return cls(
            name=name,
            rotation=torch.tensor([a[0] for a in actions], device=device).deg2rad(),
            thrust=torch.tensor([a[1] for a in actions], device=device),
            kind=torch.tensor([int(a[2]) for a in actions], device=device),
        )

    def __len__(self) -> int:
        return int(self.rotation.numel())


def nearest_actions(
    table: ActionTable,
    rotation: torch.Tensor,
    thrust: torch.Tensor,
    shield: torch.Tensor,
    boost: torch.Tensor,
) -> torch.Tensor:
    """The action nearest each command (any shape of pods): same kind first, then the smallest
    (rotation error / 18 degrees)^2 + (thrust share error)^2. `rotation` in radians from the frame
    heading (clamped to the engine's 18 degrees), `thrust` a share of max thrust."""
    limit = torch.deg2rad(torch.tensor(MAX_ROTATION_DEG))
    rotation = rotation.clamp(-limit, limit)
    kind = torch.where(shield, int(Kind.SHIELD), torch.where(boost, int(Kind.BOOST), int(Kind.THRUST)))
    turn = (rotation[..., None] - table.rotation) / limit
    push = thrust[..., None] - table.thrust
    cost = turn * turn + torch.where(kind[..., None] == table.kind, 0.0, KIND_MISMATCH_COST)
    cost = cost + torch.where(table.kind == int(Kind.THRUST), push * push, 0.0)
    return cost.argmin(-1)
