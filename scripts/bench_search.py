"""Strength and cost of the podracing search bot against the heuristic built-ins, in the reference engine.

Run: `.venv/bin/python -m scripts.bench_search [--races N] [--budget-ms X [X ...]]`. For each budget
(default 10 and 40 ms per decision) and each opponent (`runner`, `blocker`) it plays N races (default
40): seeds 0 .. N/2 - 1 with the default configuration (3 laps, 3 to 8 checkpoints), the search bot
once in each seat. A race counts as a win only when the search bot is ranked first alone. It prints
win rates with 95% Wilson intervals, the search bot's milliseconds per decision (wall clock: mean,
99th percentile, max; CPU time: mean; the JSON round trip excluded), the plans it scored per
decision, and the heuristic opponent's own milliseconds per decision as the baseline the ratio is
taken against. Races run one after another
in this process: the default run takes about 15 minutes on one core.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shared.games.podracing.bots import blocker, runner
from shared.games.podracing.game import PodracingGame
from shared.games.podracing.search import SearchBot, make_search_bot
from shared.games.replay import play_local

OPPONENTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"runner": runner, "blocker": blocker}
Z_95 = 1.959964


@dataclass
class Timed:
    """A decide function that records how long each call took, in wall-clock and CPU time."""

    decide: Callable[[dict[str, Any]], dict[str, Any]]
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    plans: list[int] = field(default_factory=list)

    def __call__(self, observation: dict[str, Any]) -> dict[str, Any]:
        start, cpu = time.perf_counter(), time.process_time()
        action = self.decide(observation)
        self.seconds.append(time.perf_counter() - start)
        self.cpu_seconds.append(time.process_time() - cpu)
        if isinstance(self.decide, SearchBot):
            self.plans.append(self.decide.iterations)
        return action


@dataclass
class Tally:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    turns: int = 0
    search_seconds: list[float] = field(default_factory=list)
    search_cpu_seconds: list[float] = field(default_factory=list)
    plans: list[int] = field(default_factory=list)
    opponent_seconds: list[float] = field(default_factory=list)

    @property
    def races(self) -> int:
        return self.wins + self.draws + self.losses


def wilson(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sound near 0 and 1, unlike the normal one)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    spread = z * math.sqrt(p * (1.0 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - spread), min(1.0, centre + spread)


def play(budget_ms: float, opponent_name: str, races: int) -> Tally:
    game = PodracingGame()
    tally = Tally()
    for number in range(races):
        seed, seat = divmod(number, 2)
        search = Timed(make_search_bot(time_budget_ms=budget_ms, seed=seed))
        opponent = Timed(OPPONENTS[opponent_name])
        bots: list[Any] = [opponent, opponent]
        bots[seat] = search
        result = play_local(game, seed, bots)["result"]
        ranks = [player["rank"] for player in result["players"]]
        if ranks[seat] == 0 and ranks[1 - seat] == 1:
            tally.wins += 1
        elif ranks[seat] == ranks[1 - seat]:
            tally.draws += 1
        else:
            tally.losses += 1
        tally.turns += result["turns"]
        tally.search_seconds += search.seconds
        tally.search_cpu_seconds += search.cpu_seconds
        tally.plans += search.plans
        tally.opponent_seconds += opponent.seconds
    return tally


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--races", type=int, default=40, help="races per budget and opponent (even)")
    parser.add_argument("--budget-ms", type=float, nargs="+", default=[10.0, 40.0])
    args = parser.parse_args(argv)
    if args.races < 2 or args.races % 2:
        parser.error("--races must be an even number of at least 2 (each seed is raced from both seats)")
    print(
        f"search bot against the built-ins: {args.races} races each "
        f"(seeds 0..{args.races // 2 - 1}, both seats); load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    header = (
        f"{'budget':>7} {'opponent':<8} {'W/D/L':>9} {'win rate':>8} {'95% Wilson':>15} "
        f"{'turns':>6} {'ms/decide':>9} {'cpu ms':>6} {'p99':>6} {'max':>6} {'plans':>5} {'opp ms':>7} "
        f"{'ratio':>6}"
    )
    print(header)
    started = time.perf_counter()
    for budget in args.budget_ms:
        for name in OPPONENTS:
            tally = play(budget, name, args.races)
            low, high = wilson(tally.wins, tally.races)
            search_ms = 1000.0 * sum(tally.search_seconds) / len(tally.search_seconds)
            cpu_ms = 1000.0 * sum(tally.search_cpu_seconds) / len(tally.search_cpu_seconds)
            opponent_ms = 1000.0 * sum(tally.opponent_seconds) / len(tally.opponent_seconds)
            print(
                f"{budget:>5.0f}ms {name:<8} {tally.wins:>3}/{tally.draws}/{tally.losses:<3} "
                f"{tally.wins / tally.races:>8.0%} {f'{low:.0%} .. {high:.0%}':>15} "
                f"{tally.turns / tally.races:>6.0f} {search_ms:>9.2f} {cpu_ms:>6.2f} "
                f"{1000.0 * percentile(tally.search_seconds, 0.99):>6.2f} "
                f"{1000.0 * max(tally.search_seconds):>6.2f} {sum(tally.plans) / len(tally.plans):>5.0f} "
                f"{opponent_ms:>7.3f} "
                f"{search_ms / opponent_ms:>5.0f}x",
                flush=True,
            )
    print(
        "ms/decide, p99, max: the search bot's wall-clock time per decision; cpu ms: its CPU time "
        "per decision (mean); plans: plans scored per decision (mean); opp ms: the heuristic "
        "opponent's wall-clock time per decision; ratio: search over heuristic. "
        f"{time.perf_counter() - started:.0f} s in all; "
        f"load average now {os.getloadavg()[0]:.1f}."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
