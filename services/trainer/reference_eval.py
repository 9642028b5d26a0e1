"""The run's evaluation table: a checkpoint's exported bot racing the built-in runner, blocker and
search bots in the reference engine (shared.games.podracing.game), every few chunks.

Training's own win rates come from the batched engine, against opponents drawn by the stage's
mix, and from races cut off at the iteration boundary. This measures the exported bot itself, as
a hosted bot plays it on the platform: `decide(observation)`, our own generated code run in this
process (`showcase.load_decide`, a fresh module each race), on the same tracks at every
evaluation, so that two evaluations of a run differ by the policy only. Race i is played on the
track of seed i // 2 with the bot in seat i % 2 (each track from both seats, which cancels the
start-position advantage), as `scripts/eval_trained_bot.py` numbers its races. A race counts as
a win when the bot is ranked first alone, a draw when both tie; the win rate counts draws as
non-wins and its 95% interval is Wilson's (`evaluate.wilson_interval`).

The search bot scores a fixed number of plans per decision (`search_iterations`) instead of
watching the clock, so an evaluation plays the same races on any machine and under any load.

Run: `.venv/bin/python -m services.trainer.reference_eval BOT_FILE [--races 20] [--search-races 6]
[--search-iterations 60]` plays one evaluation of a bot file and prints its table with the time
each opponent took.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from services.trainer.evaluate import wilson_interval
from services.trainer.showcase import checked_actions, load_decide
from shared.games.base import Decide
from shared.games.podracing import bots
from shared.games.podracing.game import PodracingGame
from shared.games.podracing.search import make_search_bot
from shared.training.config import TrainingEvaluationConfig

MAX_TURNS = 2_000
"""A guard only: a podracing race ends by itself (laps done, or the 100-turn checkpoint timeout)."""
SEARCH_BUDGET_MS = 10.0
"""The search bot's nominal budget; with `search_iterations` set it never reads the clock."""
RUNNER, BLOCKER, SEARCH = "builtin:runner", "builtin:blocker", "builtin:search"
"""The opponents, in the order they are played (shared.training.config.EVALUATION_OPPONENTS, which
a test keeps equal, shows them in that order)."""


@dataclass(frozen=True, slots=True)
class OpponentResult:
    """The races against one opponent."""

    opponent: str
    wins: int
    draws: int
    losses: int
    seconds: float
    """Wall time of these races."""

    @property
    def races(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        return self.wins / self.races if self.races else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """Wilson's 95% interval of the win rate."""
        return wilson_interval(self.wins, self.races)


def is_due(args: TrainingEvaluationConfig, chunk: int, last: bool) -> bool:
    """Whether the checkpoint of chunk `chunk` (counted from 0) is evaluated; `last`: the run's
    budget is spent with it."""
    if args.every_chunks <= 0 or args.races + args.search_races <= 0:
        return False
    return last or (chunk + 1) % args.every_chunks == 0


def opponents(args: TrainingEvaluationConfig) -> list[tuple[str, int]]:
    """(opponent, races) in the order they are played."""
    plan = [(RUNNER, args.races), (BLOCKER, args.races), (SEARCH, args.search_races)]
    return [(name, races) for name, races in plan if races > 0]


def _opponent(name: str, track: int, args: TrainingEvaluationConfig) -> Decide:
    if name == SEARCH:
        return make_search_bot(SEARCH_BUDGET_MS, seed=track, max_iterations=args.search_iterations)
    return {RUNNER: bots.runner, BLOCKER: bots.blocker}[name]


def race(bot: Decide, opponent: Decide, track: int, seat: int) -> int:
    """One race on the track of `track`, the bot in `seat`: +1 won, 0 drawn, -1 lost."""
    match = PodracingGame().create_match(track)
    seats = (bot, opponent) if seat == 0 else (opponent, bot)
    while not match.finished and match.turn < MAX_TURNS:
        match.step(checked_actions(match, seats))
    ranks = {p.player: p.rank for p in match.result().players}
    mine, theirs = ranks[seat], ranks[1 - seat]
    return 1 if mine < theirs else -1 if mine > theirs else 0


def evaluate_source(
    bot_source: str,
    args: TrainingEvaluationConfig,
    *,
    deadline: float = float("inf"),
    abandon: Callable[[], bool] = lambda: False,
) -> list[OpponentResult]:
    """Race the exported bot (`bot_source`, defining `decide`) against each opponent.

    Stops early, keeping only the races played, once `time.monotonic()` passes `deadline`, and
    plays nothing more once `abandon()` is true. Raises ShowcaseError when the source does not run."""
    load_decide(bot_source)  # fails at once for a source that does not run
    results = []
    for name, races in opponents(args):
        started = time.perf_counter()
        outcomes = []
        for index in range(races):
            if time.monotonic() > deadline or abandon():
                break
            track, seat = index // 2, index % 2
            outcomes.append(race(load_decide(bot_source), _opponent(name, track, args), track, seat))
        if outcomes:
            results.append(
                OpponentResult(
                    opponent=name,
                    wins=outcomes.count(1),
                    draws=outcomes.count(0),
                    losses=outcomes.count(-1),
                    seconds=time.perf_counter() - started,
                )
            )
        if len(outcomes) < races:
            break
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description="One evaluation of a bot file against the built-ins.")
    parser.add_argument("bot", type=Path, help="a Python file defining decide(observation)")
    defaults = TrainingEvaluationConfig()
    parser.add_argument("--races", type=int, default=defaults.races)
    parser.add_argument("--search-races", type=int, default=defaults.search_races)
    parser.add_argument("--search-iterations", type=int, default=defaults.search_iterations)
    options = parser.parse_args()
    args = TrainingEvaluationConfig.model_construct(  # the API's bounds do not bind a local evaluation
        every_chunks=1,
        races=options.races,
        search_races=options.search_races,
        search_iterations=options.search_iterations,
    )
    print(f"{'opponent':16} {'races':>5} {'W/D/L':>9} {'win rate':>8} {'95% interval':>15} {'seconds':>7}")
    for result in evaluate_source(options.bot.read_text(), args):
        low, high = result.interval
        record = f"{result.wins}/{result.draws}/{result.losses}"
        print(
            f"{result.opponent:16} {result.races:5d} {record:>9} {result.win_rate:8.1%} "
            f"{f'{low:.1%} - {high:.1%}':>15} {result.seconds:7.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
