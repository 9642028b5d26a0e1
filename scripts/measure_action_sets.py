"""How much does each discrete action set cost a built-in? Its commands snapped to the set's
nearest action (what an imitating policy can at best play), raced against the built-ins on the
batched engine.

Run: `.venv/bin/python -m scripts.measure_action_sets [--races 256] [--turns 600] [--threads 1]`.
Prints, per action set and teacher, the win rate against the runner and the blocker and the
checkpoints per 100 turns. Figures are in docs/trainer.md ("Action sets").
"""

from __future__ import annotations

import argparse
import time

import torch

from services.trainer.actions import ACTION_SETS
from services.trainer.imitation import BATCHED_TEACHERS, BuiltinTeacher
from services.trainer.measure import measure_play
from services.trainer.opponents import OpponentKind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--races", type=int, default=256, help="races played at once")
    parser.add_argument("--turns", type=int, default=600, help="turns played (about 2.5 races each)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sets", nargs="*", default=list(ACTION_SETS))
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    for name in options.sets:
        for teacher_name in BATCHED_TEACHERS:
            teacher = BuiltinTeacher(teacher_name)
            started = time.perf_counter()
            cells = []
            for opponent in (OpponentKind.RUNNER, OpponentKind.BLOCKER):
                result = measure_play(
                    teacher.labels, opponent, num_races=options.races, turns=options.turns, action_set=name
                )
                rate = "-" if result.win_rate is None else f"{result.win_rate:.3f}"
                cells.append(f"vs {opponent.name.lower()} {rate} ({result.races} races)")
            print(
                f"{name:<7} ({len(ACTION_SETS[name]):>2} actions) {teacher_name:<16} "
                + "  ".join(cells)
                + f"  [{time.perf_counter() - started:.0f} s]",
                flush=True,
            )


if __name__ == "__main__":
    main()
