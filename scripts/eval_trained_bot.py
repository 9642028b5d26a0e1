"""Strength of an exported podracing bot against the built-ins, in the reference engine.

Run: `.venv/bin/python -m scripts.eval_trained_bot [--bot examples/bots/podracing_ppo.py]
[--races 500] [--search-races 40] [--search-budgets 10,40] [--search-plans 60,240] [--jobs 2]
[--seed 0] [--budget-ms MS]`.

The bot file (ours: the trainer's export) runs in this process, with a fresh module per race
(`showcase.load_decide`), so the figures measure the policy, not the sandbox's transport; `arena
eval` plays the same races through the hosted-bot sandbox. Seats swap every race and each track
(seed) is played from both seats. Opponents: the built-in runner and blocker (`--races` each),
and `builtin:search` at 10 ms and 40 ms per turn (`--search-races` each; `search@10`;
`--search-budgets` sets the budgets), and with
`--search-plans` at fixed numbers of plans per decision (`search/60`: the same search whatever the
machine's load, which a time budget is not). Prints wins, draws and
losses, the win rate with a 95% Wilson interval, and the bot's mean and p99 ms per turn.
`--budget-ms` sets the search time per turn of a bot that has one (the hybrid export's
TIME_BUDGET_MS, docs/trainer-export.md).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.trainer.evaluate import wilson_interval
from services.trainer.showcase import load_decide
from shared.games.base import JSON, Decide
from shared.games.podracing import bots
from shared.games.podracing.game import PodracingGame
from shared.games.podracing.search import make_search_bot

ROOT = Path(__file__).resolve().parent.parent
BUDGET = re.compile(r"^TIME_BUDGET_MS = .*$", re.MULTILINE)
"""The hybrid export's search time per turn (services/trainer/hybrid_template.py)."""


@dataclass(frozen=True)
class Result:
    wins: int
    draws: int
    losses: int
    turn_ms: tuple[float, ...]


def _opponent(name: str, seed: int) -> Decide:
    if name.startswith("search@"):
        return make_search_bot(float(name.removeprefix("search@")), seed=seed)
    if name.startswith("search/"):
        return make_search_bot(seed=seed, max_iterations=int(name.removeprefix("search/")))
    return {"runner": bots.runner, "blocker": bots.blocker}[name]


def play(source: str, opponent: str, indices: list[int], seed: int) -> Result:
    """Races `indices` (race i: track seed + i // 2, the bot in seat i % 2)."""
    game = PodracingGame()
    wins = draws = losses = 0
    turn_ms: list[float] = []
    for index in indices:
        seat, track = index % 2, seed + index // 2
        decide = load_decide(source)
        other = _opponent(opponent, track)
        match = game.create_match(track)
        while not match.finished:
            actions: list[JSON | None] = [None, None]
            started = time.perf_counter()
            actions[seat] = decide(match.observation(seat))
            turn_ms.append((time.perf_counter() - started) * 1000.0)
            actions[1 - seat] = other(match.observation(1 - seat))
            match.step(actions)
        players = match.result().players
        mine, theirs = players[seat].rank, players[1 - seat].rank
        wins += mine < theirs
        losses += mine > theirs
        draws += mine == theirs
    return Result(wins, draws, losses, tuple(turn_ms))


def with_budget(source: str, budget_ms: float) -> str:
    """The bot's source with its search time per turn set to `budget_ms` (ValueError if it has none)."""
    if not BUDGET.search(source):
        raise ValueError("the bot has no TIME_BUDGET_MS to set: --budget-ms is for the hybrid export")
    return BUDGET.sub(f"TIME_BUDGET_MS = {float(budget_ms)!r}", source, count=1)


def evaluate(source: str, opponent: str, races: int, seed: int, jobs: int) -> Result:
    indices = list(range(races))
    parts = [indices[j::jobs] for j in range(jobs)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(play, [source] * jobs, [opponent] * jobs, parts, [seed] * jobs))
    return Result(
        sum(r.wins for r in results),
        sum(r.draws for r in results),
        sum(r.losses for r in results),
        tuple(ms for r in results for ms in r.turn_ms),
    )


def _numbers(text: str, option: str, kind: type[int] | type[float]) -> list[Any]:
    """Positive numbers from a comma-separated option; exits with a clear message otherwise."""
    try:
        values = [kind(part) for part in text.split(",") if part.strip()]
    except ValueError:
        sys.exit(f"{option} takes numbers separated by commas, not {text!r}")
    if any(value <= 0 for value in values):
        sys.exit(f"{option}: each value must be positive")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bot", type=Path, default=ROOT / "examples" / "bots" / "podracing_ppo.py")
    parser.add_argument("--races", type=int, default=500, help="races against the runner and the blocker")
    parser.add_argument("--search-races", type=int, default=40, help="races against search at 10 and 40 ms")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget-ms", type=float, help="the bot's search time per turn (hybrid export)")
    parser.add_argument(
        "--search-budgets", default="10,40", help="search's ms per turn, comma-separated ('' for none)"
    )
    parser.add_argument(
        "--search-plans",
        default="",
        help="also race search scoring a fixed number of plans per decision, e.g. 60,240 "
        "(`--search-races` each): unlike a time budget, the same search on any machine and under any load",
    )
    options = parser.parse_args()
    source = options.bot.read_text()
    budget = ""
    if options.budget_ms is not None:
        if options.budget_ms <= 0:
            sys.exit(f"--budget-ms must be positive, not {options.budget_ms}")
        try:
            source = with_budget(source, options.budget_ms)
        except ValueError as exc:
            sys.exit(f"{options.bot}: {exc}")
        budget = f", search {options.budget_ms:g} ms a turn"
    print(
        f"{options.bot.name}: {len(source):,} characters{budget}; "
        f"seats swapped, tracks from seed {options.seed}"
    )
    header = f"{'opponent':12} {'races':>6} {'W/D/L':>13} {'win rate':>9} {'95% interval':>15}"
    print(f"{header} {'ms/turn':>8} {'p99':>6}")
    plan = [("runner", options.races), ("blocker", options.races)]
    budgets = _numbers(options.search_budgets, "--search-budgets", float)
    plans = _numbers(options.search_plans, "--search-plans", int)
    plan += [(f"search@{budget:g}", options.search_races) for budget in budgets]
    plan += [(f"search/{count}", options.search_races) for count in plans]
    for opponent, races in plan:
        if races <= 0:
            continue
        result = evaluate(source, opponent, races, options.seed, max(1, options.jobs))
        low, high = wilson_interval(result.wins, races)
        ordered = sorted(result.turn_ms)
        mean = sum(ordered) / len(ordered)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        record = f"{result.wins}/{result.draws}/{result.losses}"
        print(
            f"{opponent:12} {races:6d} {record:>13} {result.wins / races:9.1%} "
            f"{f'{low:.1%} - {high:.1%}':>15} {mean:8.2f} {p99:6.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
