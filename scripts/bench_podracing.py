"""Podracing engine speed: the pure-Python reference against the batched torch engine.

Run: `.venv/bin/python -m scripts.bench_podracing [--quick] [--device cpu|cuda] [--dtype float32|float64]
[--collision-iters K] [--compile] [--batches N ...]`. Prints one table; the default run takes about
two minutes on CPU. `--compile` costs minutes of compilation per batch size on a small CPU.

Both engines play full races with the same kind of driver (each pod aims at its next checkpoint
with some drift compensation, so races finish, restart and pods collide at the start and on the
way). The reference is timed on one core, command building included. The torch engine is timed
with its commands built on the device every turn by the vectorised runner (`runner_commands`),
races restarting automatically; "env-turns/s" is races x turns per second.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from shared.games.podracing.batched_env import BatchedPodracingEnv, runner_commands
from shared.games.podracing.engine import PodCommand, Race, RaceConfig
from shared.games.podracing.torch_engine import SYNC_FREE_COLLISION_ITERS, TorchRaces


@dataclass
class Row:
    engine: str
    batch: int
    threads: int
    turns_per_s: float
    """Env-turns per second of the engine's step alone."""
    with_runner_per_s: float | None = None
    """Env-turns per second including the commands built by the vectorised runner."""
    capped_per_m: float | None = None
    collisions_per_turn: float | None = None


def bench_reference(seconds: float) -> Row:
    """Race-turns per second of `engine.Race` driven by a simple checkpoint-chasing driver."""
    config = RaceConfig()
    turns = 0
    seed = 0
    race = Race.from_seed(seed, config)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            if race.finished:
                seed += 1
                race = Race.from_seed(seed, config)
            cmds = []
            for pod in race.pods:
                cx, cy = race.checkpoints[pod.next_checkpoint]
                cmds.append(PodCommand(cx - 3 * pod.vx, cy - 3 * pod.vy, 100))
            race.step(cmds)
            turns += 1
    elapsed = time.perf_counter() - start
    return Row("reference (python)", 1, 1, turns / elapsed)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class _StepTimer:
    """Time spent in `TorchRaces.step`: wall clock on CPU (the step is synchronous there), CUDA
    events on a GPU (read after the final synchronisation, so they do not stall the stream)."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self.seconds = 0.0
        self._events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []

    def time(self, step: Callable[[], None]) -> None:
        if self.cuda:
            start = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
            end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
            start.record()
            step()
            end.record()
            self._events.append((start, end))
        else:
            started = time.perf_counter()
            step()
            self.seconds += time.perf_counter() - started

    def total(self) -> float:
        events_ms: float = sum(start.elapsed_time(end) for start, end in self._events)
        return self.seconds + events_ms / 1000.0


def bench_torch(
    batch: int,
    device: torch.device,
    dtype: torch.dtype,
    collision_iters: int | None,
    seconds: float,
    compile_step: bool,
    compact: bool | None = None,
) -> Row:
    races = TorchRaces(
        batch,
        device=device,
        dtype=dtype,
        collision_iters=collision_iters,
        auto_reset=True,
        seed=1,
        compact=compact,
    )
    if compile_step:
        races.compile()
    races.reset()
    # Pod-major command buffers passed as [B, ...] views, as `BatchedPodracingEnv` does.
    target = torch.zeros(2, 4, batch, dtype=dtype, device=device).permute(2, 1, 0)
    thrust = torch.zeros(4, batch, dtype=dtype, device=device).T
    boost = torch.zeros(4, batch, dtype=torch.bool, device=device).T
    shield = torch.zeros(4, batch, dtype=torch.bool, device=device).T
    timer = _StepTimer(device)

    def turn() -> None:
        for player in (0, 1):
            t, th, b, s = runner_commands(races, player)
            pods = slice(2 * player, 2 * player + 2)
            target[:, pods] = t
            thrust[:, pods] = th
            boost[:, pods] = b
            shield[:, pods] = s
        timer.time(lambda: races.step(target, thrust, boost, shield))

    for _ in range(3):
        turn()
    _sync(device)
    races.collisions.zero_()
    races.collisions_capped.zero_()
    timer = _StepTimer(device)
    steps = 0
    start = time.perf_counter()
    while True:
        for _ in range(5):
            turn()
        steps += 5
        _sync(device)
        if time.perf_counter() - start >= seconds:
            break
    elapsed = time.perf_counter() - start
    race_turns = steps * batch
    mode = "cpu-step" if races.compact else "sync-free"
    return Row(
        f"torch {device.type} {str(dtype).removeprefix('torch.')} K={races.collision_iters} {mode}",
        batch,
        torch.get_num_threads(),
        race_turns / timer.total(),
        with_runner_per_s=race_turns / elapsed,
        capped_per_m=float(races.collisions_capped.sum()) / race_turns * 1e6,
        collisions_per_turn=float(races.collisions.sum()) / race_turns,
    )


def bench_env(batch: int, device: torch.device, dtype: torch.dtype, seconds: float) -> Row:
    """The full training env step: observation, reward, runner opponent, auto-reset."""
    env = BatchedPodracingEnv(batch, device, dtype)
    env.reset()
    actions = torch.zeros(batch, 8, device=device)
    actions[:, 1] = 1.0
    for _ in range(3):
        env.step(actions)
    _sync(device)
    steps = 0
    start = time.perf_counter()
    while True:
        for _ in range(5):
            env.step(actions)
        steps += 5
        _sync(device)
        if time.perf_counter() - start >= seconds:
            break
    return Row(
        "BatchedPodracingEnv.step",
        batch,
        torch.get_num_threads(),
        steps * batch / (time.perf_counter() - start),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter timings and fewer batch sizes")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (cuda adds batches up to 4M)")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument(
        "--collision-iters",
        type=int,
        help="collision cap per turn (default: the config's 64; the sync-free step runs all of them)",
    )
    parser.add_argument(
        "--sync-free", action="store_true", help="time the sync-free step (what CUDA runs) on CPU too"
    )
    parser.add_argument("--compile", action="store_true", help="run the torch step through torch.compile")
    parser.add_argument("--batches", type=int, nargs="+", help="batch sizes to time instead of the defaults")
    args = parser.parse_args()
    device = torch.device(args.device)
    if args.collision_iters is None and device.type == "cuda":
        args.collision_iters = SYNC_FREE_COLLISION_ITERS
    dtype = getattr(torch, args.dtype)
    seconds = 1.0 if args.quick else 4.0
    cores = os.cpu_count() or 1

    rows = [bench_reference(seconds)]
    reference = rows[0].turns_per_s
    if device.type == "cuda":
        batches = [1024, 65536, 1 << 20] if args.quick else [1024, 65536, 1 << 20, 1 << 22]
    else:
        batches = [1, 64, 4096, 16384] if args.quick else [1, 64, 4096, 16384, 65536]
    batches = args.batches or batches
    for batch in batches:
        for threads in sorted({1, cores}) if batch >= 4096 and device.type == "cpu" else [1]:
            torch.set_num_threads(threads)
            rows.append(bench_torch(batch, device, dtype, args.collision_iters, seconds, args.compile))
            if args.sync_free and device.type == "cpu":
                rows.append(
                    bench_torch(batch, device, dtype, args.collision_iters or 4, seconds, args.compile, False)
                )
    best = max(rows[1:], key=lambda r: r.turns_per_s)
    torch.set_num_threads(best.threads)
    if not args.quick:
        # The settings of the parity test: float64 and the reference's 64 collision iterations.
        rows.append(bench_torch(min(best.batch, 4096), device, torch.float64, None, seconds, False))
        rows.append(bench_env(best.batch, device, dtype, seconds))

    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    print(
        f"\npodracing engines on {device} ({cores} CPU cores, load average {load}), "
        f"{seconds:.0f} s per row, compile={args.compile}"
    )
    header = (
        f"{'engine':<40} {'batch':>8} {'threads':>7} {'env-turns/s':>13} {'x reference':>11} "
        f"{'with runner':>13} {'caps/1M':>8} {'coll/turn':>9}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        capped = "" if r.capped_per_m is None else f"{r.capped_per_m:.1f}"
        coll = "" if r.collisions_per_turn is None else f"{r.collisions_per_turn:.3f}"
        runner = "" if r.with_runner_per_s is None else f"{r.with_runner_per_s:,.0f}"
        print(
            f"{r.engine:<40} {r.batch:>8} {r.threads:>7} {r.turns_per_s:>13,.0f} "
            f"{r.turns_per_s / reference:>11.1f} {runner:>13} {capped:>8} {coll:>9}"
        )
    print(
        f"\nbest torch step: {best.turns_per_s:,.0f} env-turns/s ({best.engine}, B={best.batch}, "
        f"{best.threads} thread(s)), {best.turns_per_s / reference:.1f}x the reference; target "
        f"{'100,000,000 on an H100' if device.type == 'cuda' else '1,000,000 on CPU'}"
    )


if __name__ == "__main__":
    main()
