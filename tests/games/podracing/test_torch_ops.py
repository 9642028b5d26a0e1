"""The CPU-cheap helpers must equal the plain torch formulas they replace, bit for bit."""

from __future__ import annotations

import math

import pytest
import torch

from shared.games.podracing.torch_ops import (
    any_along,
    any_true,
    normalize_angle,
    pick,
    pod_major,
    round_half_away,
    sqrt_non_negative,
    trunc,
)

DTYPES = [torch.float32, torch.float64]


def _awkward(dtype: torch.dtype) -> torch.Tensor:
    """Random values over many magnitudes, plus halves, signed zeros and integers near 2^24."""
    gen = torch.Generator().manual_seed(0)
    spread = [(torch.rand(20_000, generator=gen, dtype=dtype) - 0.5) * 10.0**k for k in range(-3, 9)]
    edges = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 8388607.5, -8388607.5, 16777217.0, 1e-40, -1e-40]
    return torch.cat([*spread, torch.tensor(edges, dtype=dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_trunc_and_rounding_match_the_plain_formulas(dtype: torch.dtype) -> None:
    values = _awkward(dtype)
    assert torch.equal(trunc(values), torch.trunc(values))
    expected = torch.sign(values) * torch.floor(torch.abs(values) + 0.5)
    rounded = round_half_away(values)
    assert torch.equal(rounded, expected + 0.0)
    assert not torch.signbit(rounded[rounded == 0]).any(), "-0.0 must come out as 0.0"
    halves = torch.tensor([0.5, -0.5, 1.5, -1.5, 2.5, -2.5], dtype=dtype)
    assert round_half_away(halves).tolist() == [1.0, -1.0, 2.0, -2.0, 3.0, -3.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_pick_sqrt_and_angles_match_the_plain_formulas(dtype: torch.dtype) -> None:
    values = _awkward(dtype)
    other = values.flip(0)
    mask = values > other
    assert torch.equal(pick(mask, values, other), torch.where(mask, values, other))
    assert torch.equal(pick(mask, 3.0, other), torch.where(mask, 3.0, other))
    signed = torch.cat([values, torch.zeros(5, dtype=dtype)])
    assert torch.equal(sqrt_non_negative(signed), torch.sqrt(torch.clamp_min(signed, 0.0)))
    angles = torch.cat(
        [
            torch.linspace(-360.0, 719.999, 50_001, dtype=dtype),
            torch.tensor([360.0, -1e-14, 0.0], dtype=dtype),
        ]
    )
    expected = torch.fmod(angles, 360.0)
    expected = torch.where(expected < 0, expected + 360.0, expected)
    expected = torch.where(expected >= 360.0, 0.0, expected)
    assert torch.equal(normalize_angle(angles), expected)


def test_pod_major_reverses_dimensions_into_contiguous_memory() -> None:
    batch_major = torch.arange(24.0).view(3, 4, 2)
    flipped = pod_major(batch_major)
    assert flipped.shape == (2, 4, 3)
    assert flipped.is_contiguous()
    assert torch.equal(flipped, batch_major.permute(2, 1, 0))
    # A view of pod-major memory comes back as that memory's contents, and bools work too.
    mask = torch.rand(4, 5) > 0.5
    assert torch.equal(pod_major(mask.T), mask)
    bf16 = torch.rand(3, 4, 2).to(torch.bfloat16)  # numpy has no bfloat16: torch's copy is used
    assert torch.equal(pod_major(bf16), bf16.permute(2, 1, 0))
    meta = pod_major(torch.empty(3, 4, 2, device="meta"))
    assert meta.shape == (2, 4, 3)
    assert meta.device.type == "meta"


def test_any_helpers() -> None:
    mask = torch.zeros(6, 5, dtype=torch.bool)
    assert not any_true(mask)
    assert not any_true(mask[:0])
    mask[4, 2] = True
    assert any_true(mask)
    assert torch.equal(any_along(mask, 0), mask.any(0))
    assert torch.equal(any_along(mask, 1), mask.any(1))


def test_pick_is_documented_as_finite_only() -> None:
    """lerp(b, a, 0) with a = inf is NaN: callers must keep infinities out of `pick`."""
    assert math.isnan(float(pick(torch.tensor([False]), math.inf, torch.tensor([1.0]))[0]))
