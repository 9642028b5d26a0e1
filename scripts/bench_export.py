"""The exported policy bot: its size, its agreement with the torch policy, and its cost per turn.

Run: `.venv/bin/python -m scripts.bench_export [CKPT] [--train-seconds S] [--pods N]`. Without a
checkpoint it first trains one for S seconds (default 60) on the CPU in a temporary folder. It
exports the checkpoint (hosted and CodinGame files: characters, export time), plays races in the
reference engine with the hosted file against the built-in runner and blocker (seats alternating)
until N pod observations are recorded (default 10,000), and prints the share of pods whose orders
agree with the torch policy's (aim within 1 degree, thrust within 1, same SHIELD / BOOST), for the
checkpoint and for a perturbed policy whose outputs span the whole action range (the hard case for
quantised weights). Then it times the hosted bot's decide() on every recorded observation (wall clock:
mean and 99th percentile; CPU time: mean and 99th percentile) against the built-in runner's
decide() on the same observations in the same run, and prints the ratio. Torch uses one thread.
"""

from __future__ import annotations

import argparse
import runpy
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from services.trainer.export import export_agent, export_checkpoint
from services.trainer.export_check import RecordedRace, agreement, perturbed_agent, record_races
from services.trainer.policy import Agent
from services.trainer.ppo import Args, Trainer, args_from_dict, load_checkpoint
from shared.games.podracing.bots import runner
from shared.training.config import NetShapeConfig

Decide = Callable[[dict[str, Any]], Any]


def train_briefly(seconds: float, folder: Path) -> Path:
    trainer = Trainer(Args(seed=1, num_envs=64, num_steps=32, total_steps=2_000_000, device="cpu"))
    history = trainer.run(max_seconds=seconds)
    last = history[-1]
    print(
        f"trained {len(history)} iterations, {trainer.global_step:,} steps in {seconds:g} s: "
        f"stage {last['stage']}, {last['checkpoints_per_100_turns']:.1f} checkpoints per 100 turns"
    )
    path = folder / "ckpt.pt"
    trainer.save(path)
    return path


def load_decide(source: str, folder: Path, name: str) -> Decide:
    path = folder / name
    path.write_text(source, encoding="utf-8")
    decide: Decide = runpy.run_path(str(path), run_name="exported_bot")["decide"]
    return decide


def timings(decide: Decide, races: list[RecordedRace]) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of decide() on every recorded observation, race by race in order."""
    wall, cpu = [], []
    for race in races:
        for observation in race.observations:
            started, started_cpu = time.perf_counter(), time.thread_time()
            decide(observation)
            cpu.append((time.thread_time() - started_cpu) * 1000.0)
            wall.append((time.perf_counter() - started) * 1000.0)
    return wall, cpu


def p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(0.99 * len(values)))]


def summary(label: str, wall: list[float], cpu: list[float]) -> str:
    return (
        f"  {label:<16} mean {statistics.mean(wall):.3f} / {statistics.mean(cpu):.3f}   "
        f"p99 {p99(wall):.3f} / {p99(cpu):.3f}   max {max(wall):.3f}"
    )


def report_agreement(label: str, agent: Agent, decide: Decide, pods: int) -> list[RecordedRace]:
    races = record_races(decide, pods, seed=1000)
    result = agreement(agent.actor, races)
    print(
        f"{label}: {result.agreeing:,} / {result.pods:,} pods agree ({100 * result.rate:.2f}%) over "
        f"{len(races)} races; {result.kind_mismatches} SHIELD/BOOST differences, max aim error "
        f"{result.max_angle_error_deg:.3f} deg, max thrust error {result.max_thrust_error:.2f}"
    )
    return races


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("checkpoint", nargs="?", help="a training checkpoint (default: train one briefly)")
    parser.add_argument("--train-seconds", type=float, default=60.0)
    parser.add_argument("--pods", type=int, default=10_000, help="pod observations for agreement")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        path = Path(args.checkpoint) if args.checkpoint else train_briefly(args.train_seconds, folder)
        state = load_checkpoint(path)
        shape = args_from_dict(dict(state["args"])).shape
        agent = Agent(shape)
        agent.load_state_dict(state["agent"])
        agent.eval()

        started = time.perf_counter()
        hosted = export_checkpoint(path, "hosted")
        read_and_export_ms = (time.perf_counter() - started) * 1000.0
        started = time.perf_counter()
        in_memory = export_agent(agent, shape, "hosted")
        export_ms = (time.perf_counter() - started) * 1000.0
        codingame = export_checkpoint(path, "codingame")
        assert in_memory.split("SHAPE = ")[1] == hosted.split("SHAPE = ")[1]
        print(
            f"export: hosted {len(hosted):,} characters, CodinGame {len(codingame):,} (limit 100,000); "
            f"network {shape}; export_agent {export_ms:.1f} ms, from the file {read_and_export_ms:.1f} ms"
        )

        decide = load_decide(hosted, folder, "bot.py")
        races = report_agreement("checkpoint", agent, decide, args.pods)
        hard = perturbed_agent()
        report_agreement(
            "perturbed policy",
            hard,
            load_decide(export_agent(hard, NetShapeConfig()), folder, "hard.py"),
            args.pods,
        )

        fresh = load_decide(hosted, folder, "timed.py")
        wall, cpu = timings(fresh, races)
        runner_wall, runner_cpu = timings(runner, races)
        print(f"decide() over {len(wall):,} turns (2 pods each), wall clock / CPU time in ms:")
        print(summary("exported bot", wall, cpu))
        print(summary("built-in runner", runner_wall, runner_cpu))
        print(
            f"  ratio exported / runner: {statistics.mean(wall) / statistics.mean(runner_wall):.1f}x "
            f"(mean wall), {statistics.mean(cpu) / statistics.mean(runner_cpu):.1f}x (mean CPU)"
        )


if __name__ == "__main__":
    main()
