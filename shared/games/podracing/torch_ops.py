"""Exact elementwise helpers for the torch engine, chosen for what they cost on CPU.

Every helper returns exactly what the plain formula would (the docstrings say why), but avoids
kernels that torch runs slowly on x86 CPUs: on [4, 16384] float32 tensors `where` and
`masked_fill` on a bool mask take about 250 us where an add takes about 10, `trunc` about 80,
`any` on a bool tensor about 45, `sqrt` of zeros about 6x its cost on positive numbers, and a
`min` over a leading dimension that also returns indices about 250 (2.5 ms for `argmin`).
`python -m scripts.bench_torch_kernels` measures each against its replacement. On a GPU all of
these are cheap, and the helpers are just as exact there.
"""

from __future__ import annotations

import numpy as np
import torch


def pod_major(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous copy with the dimensions reversed: batch-major commands ([B, 4, 2], [B, 4]) as
    the engine's pod-major layout. Elementwise kernels on a transposed view are 5-25x slower than
    on contiguous memory, and on CPU numpy's transposing copy is faster than torch's (4-7x for
    [B, 4], 1.4-1.9x for [B, 4, 2])."""
    if tensor.device.type == "cpu" and not tensor.requires_grad:
        try:
            return torch.from_numpy(np.ascontiguousarray(tensor.numpy().transpose()))
        except TypeError:  # a dtype numpy lacks, such as bfloat16
            pass
    return tensor.permute(*reversed(range(tensor.dim()))).contiguous()


def weight(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A bool mask as 0.0 / 1.0 (through uint8: converting a bool tensor directly is 6x slower).

    Under `torch.compile` the plain conversion: inductor cannot lower a bool-to-uint8 view, and it
    fuses the conversion into the kernel anyway."""
    if torch.compiler.is_compiling():
        return mask.to(dtype)
    return mask.view(torch.uint8).to(dtype)


def pick(mask: torch.Tensor, a: torch.Tensor | float, b: torch.Tensor) -> torch.Tensor:
    """`torch.where(mask, a, b)` for finite values, as `lerp(b, a, mask)` with weights 0 or 1.

    Exact (b + 0 * (a - b) is b, a - (a - b) * 0 is a; only a -0.0 may become +0.0, which no
    formula here can tell apart), and on CPU about 10x cheaper than `where` on a bool mask.
    Not for infinities or NaN: 0 * inf is NaN.
    """
    return torch.lerp(b, a if isinstance(a, torch.Tensor) else torch.full_like(b, a), weight(mask, b.dtype))


def any_true(mask: torch.Tensor) -> bool:
    """Whether any element is set (reads the value: CPU step only)."""
    return mask.numel() > 0 and bool(mask.view(torch.uint8).max())


def any_along(mask: torch.Tensor, dim: int) -> torch.Tensor:
    """`mask.any(dim)`, as a max over uint8 (plain `any` under `torch.compile`, as `weight`)."""
    if torch.compiler.is_compiling():
        return mask.any(dim)
    return mask.view(torch.uint8).amax(dim).view(torch.bool)


def trunc(value: torch.Tensor) -> torch.Tensor:
    """Round towards zero, as `value - frac(value)`: frac is exact (the low bits of the value),
    so the difference is exactly trunc(value), except that -0.0 comes out as +0.0."""
    return value - torch.frac(value)


def round_half_away(value: torch.Tensor) -> torch.Tensor:
    """Nearest integer, halves away from zero, -0.0 as 0.0 (the reference's rounding).

    trunc(v + copysign(0.5, v)) is sign(v) * floor(|v| + 0.5) (the same sum, rounded the same
    way); sign(v) * 0.5 differs from copysign(0.5, v) only at v == 0, where both give 0.
    """
    return trunc(value + torch.sign(value).mul_(0.5)).add_(0.0)


def normalize_angle(angle: torch.Tensor) -> torch.Tensor:
    """Into [0, 360) for angles in [-360, 720): fmod, +360 if negative, exactly 360 becomes 0 (as
    the reference). In that range fmod(a, 360) is a - 360 above 360, exactly (Sterbenz), and much
    cheaper than torch's fmod."""
    result = pick(angle >= 360.0, angle - 360.0, angle)
    result = pick(result < 0.0, result + 360.0, result)
    return pick(result >= 360.0, 0.0, result)


def sqrt_non_negative(value: torch.Tensor) -> torch.Tensor:
    """sqrt(max(v, 0)), exactly, without ever taking the sqrt of 0 or of a negative number.

    With p = max(v, 0) and g = sign(p) (0 or 1), sqrt(p + (1 - g)) * g is sqrt(p) when p > 0
    and 0 when p == 0. Callers test `v >= 0` themselves.
    """
    p = torch.clamp_min(value, 0.0)
    g = torch.sign(p)
    return torch.sqrt(p + (1.0 - g)).mul_(g)
