"""Which battle fitness ranks programs best from a few matches: the evidence behind the default
weights (services/evolver/evaluation/settings.py).

    .venv/bin/python -m scripts.bench_evolver_fitness [--samples 7 8] [--programs 26] [--matches 99]

An evolution run judges a child by nine matches; what matters is how well a figure over nine
matches predicts the program's real strength. Per sample (a random seed), the script makes
`--programs` programs: the weak battle seed, two hand-made variants of its constants (one near 75%),
and descendants of those by one to four steps of the built-in operator (`mutate_several`). Each
plays the same `--matches` matches against the three built-in bots (a third each, seats alternating),
in this process's workers (the project's own seed and operator only). Programs that crash are left
out. Then, for every window of 9 matches, each candidate figure over the window is correlated
(Pearson, across programs) with the win rate over the other matches; the correlations are averaged
over the windows. Printed for all programs and within two bands of true win rate (30-60%, 55-85%),
where a run's selection actually has to choose: programs of similar strength.

The figures are per-match averages of: the win rate (draws half), the kill rate (enemy units
killed / enemy units), the damage share (damage dealt / (dealt + taken), 0.5 when nobody was hurt)
and weighted mixes of them, including the earlier default (0.7 win rate + 0.3 kill rate) and the
current one. Two samples take about twelve minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing import Pool

WINDOW = 9
"""Matches per estimate: what a run's evaluation gives a child (3 quick + 6 tournament)."""
BANDS = ((0.3, 0.6), (0.55, 0.85))
HAND_MADE = (
    {
        "ENGAGE_RANGE": 16.0,
        "MIN_RANGE": 12.0,
        "STRAFE_DISTANCE": 5.0,
        "STRAFE_PERIOD": 3,
        "MEMORY_TICKS": 600,
        "FRIEND_CLEARANCE": 0.4,
        "FIRE_RANGE": 18.0,
    },
    {"MIN_RANGE": 13.9, "FIRE_RANGE": 20.9, "STRAFE_DISTANCE": 2.4},
)
"""Variants of the seed's constants: the first wins about 75% (`bench_evolver variant`), the second
is where an evolution run's best went."""

Sample = tuple[float, float, float]
"""Per match: points (1 win, 0.5 draw, 0 loss), kill rate, damage share."""

MEASURES: dict[str, Callable[[Sample], float]] = {
    "win rate": lambda m: m[0],
    "kill rate": lambda m: m[1],
    "damage share": lambda m: m[2],
    "0.7 win + 0.3 kill (earlier default)": lambda m: 0.7 * m[0] + 0.3 * m[1],
    "0.5 win + 0.5 damage": lambda m: 0.5 * m[0] + 0.5 * m[2],
    "0.2 win + 0.8 damage (default)": lambda m: 0.2 * m[0] + 0.8 * m[2],
}


def _play(task: tuple[str, str, int, int]) -> Sample | None:
    from scripts.bench_evolver_race import play_match

    played = play_match(*task)
    return None if played.crashed else (played.points, played.kills, played.damage_share)


def _with(source: str, values: dict[str, float]) -> str:
    for name, value in values.items():
        source = re.sub(rf"^{name} = .*$", f"{name} = {value!r}", source, flags=re.M)
    return source


def programs(sample: int, count: int) -> list[str]:
    """The seed, the hand-made variants and random descendants of any of them."""
    from services.evolver.search.mutation import MutationError, mutate_several
    from services.evolver.seeds import seed_program

    seed = seed_program("battle")
    rng = random.Random(sample)
    made = [seed, *(_with(seed, values) for values in HAND_MADE)]
    while len(made) < count:
        source = rng.choice(made)
        for _ in range(rng.randint(1, 4)):
            inspiration = rng.choice(made)
            try:
                source = mutate_several(source, rng, [inspiration]).source
            except MutationError:
                break
        made.append(source)
    return made


def _pearson(a: Sequence[float], b: Sequence[float]) -> float:
    mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
    covariance = sum((x - mean_a) * (y - mean_b) for x, y in zip(a, b, strict=True))
    spread = (sum((x - mean_a) ** 2 for x in a) * sum((y - mean_b) ** 2 for y in b)) ** 0.5
    return covariance / spread if spread else 0.0


def correlation(rows: Sequence[Sequence[Sample]], measure: Callable[[Sample], float]) -> float:
    """The measure over each window of WINDOW matches against the win rate over the others,
    averaged over the windows."""
    matches = len(rows[0])
    found = []
    for start in range(0, matches - WINDOW + 1, WINDOW):
        window = range(start, start + WINDOW)
        estimate = [statistics.fmean(measure(row[i]) for i in window) for row in rows]
        truth = [statistics.fmean(row[i][0] for i in range(matches) if i not in window) for row in rows]
        found.append(_pearson(estimate, truth))
    return statistics.fmean(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, nargs="+", default=[7, 8])
    parser.add_argument("--programs", type=int, default=26, help="programs per sample")
    parser.add_argument("--matches", type=int, default=99, help="common matches per program")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    from services.evolver.evaluation.cascade import builtin_names

    names = builtin_names("battle")
    matches = [
        (names[i % len(names)], 77_000_000 + i * 7919, (i // len(names)) % 2) for i in range(args.matches)
    ]
    started = time.monotonic()
    rows: list[list[Sample]] = []
    with Pool(max(1, args.jobs)) as pool:
        for sample in args.samples:
            made = programs(sample, args.programs)
            played = pool.map(_play, [(p, *m) for p in made for m in matches], chunksize=20)
            for index in range(len(made)):
                row = played[index * len(matches) : (index + 1) * len(matches)]
                if all(m is not None for m in row):
                    rows.append([m for m in row if m is not None])
            print(f"sample {sample}: {len(rows)} programs so far", file=sys.stderr, flush=True)
    truth = [statistics.fmean(m[0] for m in row) for row in rows]
    groups: dict[str, list[list[Sample]]] = {"all": rows}
    for low, high in BANDS:
        groups[f"win rate {low:.0%}-{high:.0%}"] = [
            r for r, t in zip(rows, truth, strict=True) if low <= t <= high
        ]
    table = {
        group: {
            "programs": len(members),
            **{name: round(correlation(members, f), 3) for name, f in MEASURES.items()},
        }
        for group, members in groups.items()
        if len(members) >= 3
    }
    report = {
        "mode": "fitness",
        "samples": args.samples,
        "matches_per_program": args.matches,
        "window": WINDOW,
        "true_win_rates": sorted(round(t, 2) for t in truth),
        "correlation": table,
        "seconds": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{len(rows)} programs, true win rates {min(truth):.2f} to {max(truth):.2f}; correlation of a")
        print(f"{WINDOW}-match figure with the win rate over the other {args.matches - WINDOW} matches:")
        for group, figures in table.items():
            print(f"  {group} ({figures['programs']} programs)")
            for name in MEASURES:
                print(f"    {name:38s} {figures[name]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
