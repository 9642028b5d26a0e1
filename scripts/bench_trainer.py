"""Trainer throughput: the whole PPO loop against the engine alone, measured in the same run.

Run: `.venv/bin/python -m scripts.bench_trainer [--device cpu|cuda] [--num-envs N] [--num-steps T]
[--iterations K] [--threads N]`. Prints env steps per second (race turns of all races) of:

- the torch engine alone (`TorchRaces.step`, both players driven by the vectorised runner),
- the training rollout (features of all four pods, the policy sampling both of player 0's pods,
  the opponent's commands, rewards, auto-reset), and
- the whole PPO iteration (rollout + GAE + minibatch epochs), as `Trainer.iterate` reports it,
- the lookahead teacher's labels (`imitation.LookaheadTeacher`, its default settings: 2 x 17 copies
  of every race played 20 turns), in labelled race-turns per second,

and the ratios of the last three to the first. The runner stage is used, so the opponent is the
scripted runner or blocker (self-play adds one batched forward pass of the policy per turn).
"""

from __future__ import annotations

import argparse
import time

import torch

from scripts.bench_podracing import bench_torch
from services.trainer.curriculum import Stage
from services.trainer.imitation import LookaheadTeacher
from services.trainer.ppo import Trainer, args_from_dict


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bench_rollout(trainer: Trainer, turns: int) -> float:
    """Env steps per second of the rollout alone (no update)."""
    env, agent, device = trainer.env, trainer.agent, trainer.device
    features = env.reset(trainer.draw)

    def learner(obs: torch.Tensor) -> torch.Tensor:
        return agent.sample(obs)

    def play(count: int) -> None:
        nonlocal features
        for _ in range(count):
            with torch.no_grad():
                action, _, _, _ = agent.act(features[:, :2])
            features, _ = env.step(action, trainer.args.rewards, learner, [], trainer.draw)

    play(3)
    _sync(device)
    start = time.perf_counter()
    play(turns)
    _sync(device)
    return turns * env.num_envs / (time.perf_counter() - start)


def bench_lookahead(trainer: Trainer, calls: int) -> float:
    """Race-turns per second labelled by the lookahead teacher on the trainer's races."""
    args, device = trainer.args, trainer.device
    teacher = LookaheadTeacher(args.lookahead, gamma=args.gamma, weights=args.rewards)
    teacher.follow(trainer.agent)
    teacher.targets(trainer.env)  # warm-up
    _sync(device)
    start = time.perf_counter()
    for _ in range(calls):
        teacher.targets(trainer.env)
    _sync(device)
    return calls * trainer.env.num_envs / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--num-envs", type=int, default=None, help="default: 1024 on CPU, 32768 on CUDA")
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--seconds", type=float, default=5.0, help="time of the engine-only measure")
    parser.add_argument("--label-calls", type=int, default=2, help="lookahead labelling calls timed")
    options = parser.parse_args()
    if options.threads:
        torch.set_num_threads(options.threads)
    device = torch.device(options.device)
    num_envs = options.num_envs or (32768 if device.type == "cuda" else 1024)
    name = (
        torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else f"CPU, {torch.get_num_threads()} threads"
    )
    print(
        f"device: {name}; torch {torch.__version__}; {num_envs} races x {options.num_steps} turns per rollout"
    )

    args = args_from_dict(  # no API bounds: one GPU races more than a request may ask
        {
            "device": str(device),
            "num_envs": num_envs,
            "num_steps": options.num_steps,
            "num_minibatches": 4,
            "total_steps": 10**12,
            "stage": Stage.RUNNER,
        }
    )
    trainer = Trainer(args)
    # The engine as the trainer's env runs it (on CUDA a fixed 8 collision iterations, not 64).
    collision_iters = trainer.env.races.collision_iters
    engine = bench_torch(
        num_envs, device, torch.float32, collision_iters, options.seconds, compile_step=False
    )
    rollout = bench_rollout(trainer, options.num_steps * 2)
    trainer.iterate()  # warm-up (allocations, first opponent draw)
    _sync(device)
    steps = 0
    start = time.perf_counter()
    for _ in range(options.iterations):
        trainer.iterate()
        steps += num_envs * options.num_steps
    _sync(device)
    training = steps / (time.perf_counter() - start)
    labelling = bench_lookahead(trainer, options.label_calls)

    engine_rate = engine.with_runner_per_s
    assert engine_rate is not None
    rows = [
        (f"torch engine alone (runner commands, K={collision_iters})", engine_rate),
        ("training rollout (features, policy, opponent, rewards)", rollout),
        ("whole PPO loop (rollout + GAE + update)", training),
        ("lookahead teacher's labels (2 x 17 copies x 20 turns)", labelling),
    ]
    print(f"{'what':58} {'env steps/s':>14} {'vs engine':>10}")
    for label, value in rows:
        print(f"{label:58} {value:14,.0f} {value / engine_rate:10.3f}")


if __name__ == "__main__":
    main()
