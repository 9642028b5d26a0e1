"""Random podracing tracks for the torch engine, generated in batches on the device, and start grids."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from shared.games.podracing.engine import (
    HEIGHT,
    MARGIN,
    MIN_CHECKPOINT_DISTANCE,
    START_OFFSETS,
    WIDTH,
    RaceConfig,
)
from shared.games.podracing.torch_ops import round_half_away

MAX_CHECKPOINTS = 8
"""Checkpoint tensors are padded to this many slots; `num_checkpoints` says how many are real."""

_FALLBACK_TRACK = (
    (2000, 2000),
    (6000, 2000),
    (10000, 2000),
    (14000, 2000),
    (14000, 7000),
    (10000, 7000),
    (6000, 7000),
    (2000, 7000),
)
"""Used only if the generator failed in every round: any prefix of it is a valid track."""


@dataclass
class Tracks:
    """A batch of tracks: checkpoint coordinates padded to 8 slots, and the real count per track."""

    x: torch.Tensor
    """[N, 8] checkpoint x (padding repeats checkpoint 0)."""
    y: torch.Tensor
    """[N, 8] checkpoint y."""
    count: torch.Tensor
    """[N] int64, in [checkpoints_min, checkpoints_max]."""


def generate_tracks(
    n: int,
    config: RaceConfig,
    *,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float64,
    generator: torch.Generator | None = None,
    candidates: int = 48,
    rounds: int = 4,
) -> Tracks:
    """Vectorised rejection sampling of `n` tracks with the reference's constraints.

    Checkpoints are integers in [2000, W-2000] x [2000, H-2000], more than 3000 apart, and their
    count is uniform in [checkpoints_min, checkpoints_max]. Each slot draws `candidates` points at
    once and keeps the first that fits; a track that cannot place all its points retries from
    scratch in the next round (up to `rounds`). Tracks still unfinished keep the points they placed
    if that is at least `checkpoints_min`, else they take their count from a fixed valid track. No
    host sync, so it can also run inside a training loop. The distribution differs from `generate_track`'s.
    """
    device = torch.device(device)
    lo, hi = config.checkpoints_min, config.checkpoints_max
    if not 2 <= lo <= hi <= MAX_CHECKPOINTS:
        raise ValueError(f"checkpoint counts must satisfy 2 <= min <= max <= {MAX_CHECKPOINTS}")
    limit_sq = float(MIN_CHECKPOINT_DISTANCE * MIN_CHECKPOINT_DISTANCE)
    count = torch.randint(lo, hi + 1, (n,), generator=generator, device=device)
    best_x = torch.zeros(n, MAX_CHECKPOINTS, dtype=dtype, device=device)
    best_y = torch.zeros_like(best_x)
    best_placed = torch.zeros(n, dtype=torch.long, device=device)
    slots = torch.arange(MAX_CHECKPOINTS, device=device)
    for _ in range(rounds):
        px = torch.zeros(n, MAX_CHECKPOINTS, dtype=dtype, device=device)
        py = torch.zeros_like(px)
        placed = torch.zeros(n, dtype=torch.long, device=device)
        alive = torch.ones(n, dtype=torch.bool, device=device)
        for slot in range(MAX_CHECKPOINTS):
            cx = torch.randint(
                MARGIN, WIDTH - MARGIN + 1, (n, candidates), generator=generator, device=device
            )
            cy = torch.randint(
                MARGIN, HEIGHT - MARGIN + 1, (n, candidates), generator=generator, device=device
            )
            cx = cx.to(dtype)
            cy = cy.to(dtype)
            ok = torch.ones(n, candidates, dtype=torch.bool, device=device)
            for prev in range(slot):
                dx = cx - px[:, prev : prev + 1]
                dy = cy - py[:, prev : prev + 1]
                ok &= dx * dx + dy * dy > limit_sq
            found = ok.any(1)
            first = ok.to(torch.int8).argmax(1, keepdim=True)
            want = alive & (slot < count)
            take = want & found
            px[:, slot] = torch.where(take, cx.gather(1, first).squeeze(1), px[:, slot])
            py[:, slot] = torch.where(take, cy.gather(1, first).squeeze(1), py[:, slot])
            placed += take
            alive &= found | ~want
        better = placed > best_placed
        best_x = torch.where(better[:, None], px, best_x)
        best_y = torch.where(better[:, None], py, best_y)
        best_placed = torch.maximum(best_placed, placed)
    usable = best_placed >= lo
    count = torch.where(usable, torch.minimum(best_placed, count), count)
    fallback = torch.tensor(_FALLBACK_TRACK, dtype=dtype, device=device)
    x = torch.where(usable[:, None], best_x, fallback[:, 0])
    y = torch.where(usable[:, None], best_y, fallback[:, 1])
    # Padding slots repeat checkpoint 0 so that any gather stays on the map.
    pad = slots[None, :] >= count[:, None]
    x = torch.where(pad, x[:, :1], x)
    y = torch.where(pad, y[:, :1], y)
    return Tracks(x=x, y=y, count=count)


def start_positions(cx: torch.Tensor, cy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Pod start positions [N, 4] from checkpoints [N, >=2], as `engine.start_positions`."""
    dx = cx[:, 1] - cx[:, 0]
    dy = cy[:, 1] - cy[:, 0]
    length = torch.sqrt(dx * dx + dy * dy)
    px = -dy / length
    py = dx / length
    offsets = torch.tensor(START_OFFSETS, dtype=cx.dtype, device=cx.device)
    x = round_half_away(cx[:, :1] + px[:, None] * offsets)
    y = round_half_away(cy[:, :1] + py[:, None] * offsets)
    return x, y
