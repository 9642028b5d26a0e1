"""Why the podracing torch engine is written the way it is: kernel costs on this CPU, and how many
races the CPU step's collision loop really has to look at.

Run: `.venv/bin/python -m scripts.bench_torch_kernels [--batch 16384] [--turns 60]`. One thread,
float32. Part 1 times each plain torch formula against the exact replacement the engine uses
(`shared/games/podracing/torch_ops.py`) on [4, B] tensors (pairs of pods: [6, B]). Part 2 plays the
benchmark's races (runner against runner, auto-reset) and counts, per turn, how many races reach
the 1st, 2nd, 3rd... collision of the CPU step's shrinking loop. Figures are quoted in
docs/games/podracing-torch.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

from shared.games.podracing import torch_motion
from shared.games.podracing.batched_env import runner_commands
from shared.games.podracing.torch_engine import TorchRaces
from shared.games.podracing.torch_ops import any_true, pick, pod_major, sqrt_non_negative, trunc, weight


def _micros(fn: Callable[[], object], repeat: int = 200) -> float:
    fn()
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - started) / repeat * 1e6


def kernel_pairs(batch: int) -> list[tuple[str, Callable[[], object], str, Callable[[], object]]]:
    gen = torch.Generator().manual_seed(0)
    x = (torch.rand(4, batch, generator=gen) - 0.5) * 1000
    y = (torch.rand(4, batch, generator=gen) - 0.5) * 1000
    mask = x > 0
    pairs = torch.rand(6, batch, generator=gen)
    ints = torch.randint(0, 100, (2, batch), generator=gen)
    commands = torch.rand(batch, 4, 2, generator=gen)
    thrust = torch.rand(batch, 4, generator=gen)
    zeros = torch.zeros(4, batch)
    turned = commands.permute(2, 1, 0)
    straight = turned.contiguous()
    ints32 = ints.int()
    keep = weight(~mask, x.dtype)
    return [
        ("where(mask, a, b)", lambda: torch.where(mask, x, y), "pick (lerp)", lambda: pick(mask, x, y)),
        ("masked_fill(mask, 0)", lambda: x.masked_fill(mask, 0.0), "mul by 0/1 weight", lambda: x * keep),
        ("trunc", lambda: torch.trunc(x), "x - frac(x)", lambda: trunc(x)),
        ("sqrt of zeros", lambda: torch.sqrt(zeros), "sqrt_non_negative", lambda: sqrt_non_negative(zeros)),
        ("bool any()", lambda: bool(mask.any()), "uint8 max", lambda: any_true(mask)),
        ("min(0) with indices, [6, B]", lambda: pairs.min(0), "amin(0)", lambda: pairs.amin(0)),
        ("argmin(0), [6, B]", lambda: pairs.argmin(0), "amin(0)", lambda: pairs.amin(0)),
        ("int64 amin(0), [2, B]", lambda: ints.amin(0), "minimum of 2 rows", lambda: torch.minimum(*ints)),
        ("int64 add, [2, B]", lambda: ints + ints, "int32 add", lambda: ints32 + ints32),
        (
            "atan2 on a transposed view",
            lambda: torch.atan2(turned[1], turned[0]),
            "on contiguous rows",
            lambda: torch.atan2(straight[1], straight[0]),
        ),
        (
            "permute().contiguous(), [B, 4, 2]",
            lambda: commands.permute(2, 1, 0).contiguous(),
            "pod_major",
            lambda: pod_major(commands),
        ),
        ("T.contiguous(), [B, 4]", lambda: thrust.T.contiguous(), "pod_major", lambda: pod_major(thrust)),
    ]


@contextmanager
def counting_subsets() -> Iterator[list[int]]:
    """Record the size of every subset the CPU step gathers (one per level of its loop)."""
    sizes: list[int] = []
    original = torch_motion.Motion.select

    def select(self: torch_motion.Motion, idx: torch.Tensor) -> torch_motion.Motion:
        sizes.append(idx.numel())
        return original(self, idx)

    torch_motion.Motion.select = select  # type: ignore[method-assign]
    try:
        yield sizes
    finally:
        torch_motion.Motion.select = original  # type: ignore[method-assign]


def collision_levels(batch: int, turns: int) -> list[float]:
    """Mean number of races per level of the CPU step's collision loop, over `turns` turns."""
    races = TorchRaces(batch, dtype=torch.float32, auto_reset=True, seed=1)
    races.reset()
    target = torch.zeros(2, 4, batch).permute(2, 1, 0)
    thrust = torch.zeros(4, batch).T
    boost = torch.zeros(4, batch, dtype=torch.bool).T
    shield = torch.zeros(4, batch, dtype=torch.bool).T
    per_turn: list[list[int]] = []
    for turn in range(turns + 20):
        for player in (0, 1):
            t, th, b, s = runner_commands(races, player)
            pods = slice(2 * player, 2 * player + 2)
            target[:, pods], thrust[:, pods], boost[:, pods], shield[:, pods] = t, th, b, s
        with counting_subsets() as sizes:
            races.step(target, thrust, boost, shield)
        if turn >= 20:  # past the first turns, where every race starts at once
            per_turn.append(sizes)
    depth = max(len(sizes) for sizes in per_turn)
    return [statistics.mean(s[level] if level < len(s) else 0 for s in per_turn) for level in range(depth)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=16384)
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args()
    torch.set_num_threads(1)

    print(f"kernel costs, float32, one thread, B = {args.batch} ([4, B] unless said)")
    a, b = torch.rand(4, args.batch), torch.rand(4, args.batch)
    add, sqrt = _micros(lambda: a + b), _micros(lambda: a.sqrt())
    print(f"(for scale: an add takes {add:.1f} us, sqrt of positive numbers {sqrt:.1f} us)")
    print(f"{'plain':34} {'us':>8}   {'replacement':22} {'us':>8} {'ratio':>7}")
    for plain_name, plain, new_name, new in kernel_pairs(args.batch):
        slow, fast = _micros(plain), _micros(new)
        print(f"{plain_name:34} {slow:8.1f}   {new_name:22} {fast:8.1f} {slow / fast:7.1f}")

    levels = collision_levels(args.batch, args.turns)
    print(f"\nCPU step, B = {args.batch}, runner against runner: races per level of the collision loop")
    for level, mean in enumerate(levels, 1):
        print(f"  collision {level}: {mean:9.1f} races ({mean / args.batch:.2%} of the batch)")
    print(f"  races with no collision in a turn: {1 - levels[0] / args.batch:.1%}")


if __name__ == "__main__":
    main()
