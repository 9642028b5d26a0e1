"""A worker process of the search in training (`search_opponents.py`): `builtin:search` deciding for
the training races it is given, one search bot per race so that each keeps its own plan from turn
to turn. It drives the search opponents, and, given a prior, labels states as the search teacher
of expert iteration (`imitation.SearchTeacher`).

It speaks JSON lines on stdin and stdout: a request is a list of [race row, observation] pairs,
the answer the list of their actions in the same order; end of input ends the process. A request
that is an object, {"prior": source}, gives the search a prior from then on: `source` is a hybrid
bot exported by the trainer (`export.export_agent(hybrid=True)`: the policy inside the search), and
the races' bots restart as that bot; the answer is {"ok": true}. It imports only the standard
library and the search bot, so it starts in a fraction of a second and holds no torch state.

    python -m services.trainer.search_worker --seed 1 --iterations 60 [--min-iterations 20]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Callable
from typing import Any, TextIO

from services.trainer.bot_module import load_bot_module
from shared.games.podracing.search import make_search_bot

ROW_SEED_STRIDE = 1_000_003
"""Race row r's search bot is seeded seed * stride + r: one stream per race, the same on every run."""
PRIOR_MODULE = "arena_search_prior"

Bot = Callable[[dict[str, Any]], dict[str, Any]]


def row_iterations(seed: int, row: int, low: int, high: int) -> int:
    """Race row `row`'s plan count: `high`, or with `low` set a log-uniform draw from low to high that
    depends only on the seed and the row (so a resumed run meets the same searches)."""
    if not low or low >= high:
        return high
    draw = random.Random(seed * ROW_SEED_STRIDE + row).random()
    return min(high, max(low, round(math.exp(math.log(low) + draw * (math.log(high) - math.log(low))))))


class RaceSearchers:
    """One seeded, iteration-capped search bot per race row, made when the row first asks; with a
    prior, each is the hybrid bot of the prior's source. With `min_iterations` each row scores its
    own plan count (`row_iterations`)."""

    def __init__(self, seed: int, iterations: int, min_iterations: int = 0) -> None:
        self.seed = seed
        self.iterations = iterations
        self.min_iterations = min_iterations
        self._bots: dict[int, Bot] = {}
        self._make: Callable[[int, int], Bot] = lambda seed, iterations: make_search_bot(
            seed=seed, max_iterations=iterations
        )

    def use_prior(self, source: str) -> None:
        """From now on every race's bot is `source`'s HybridBot (the races' plans start afresh)."""
        hybrid = load_bot_module(source, PRIOR_MODULE).HybridBot
        self._make = lambda seed, iterations: hybrid(seed=seed, max_iterations=iterations)
        self._bots.clear()

    def decide(self, row: int, observation: dict[str, Any]) -> dict[str, Any]:
        bot = self._bots.get(row)
        if bot is None:
            plans = row_iterations(self.seed, row, self.min_iterations, self.iterations)
            bot = self._make(self.seed * ROW_SEED_STRIDE + row, plans)
            self._bots[row] = bot
        return bot(observation)


def serve(searchers: RaceSearchers, requests: TextIO, answers: TextIO) -> None:
    """Answer each request line with a line of actions until the input ends."""
    for line in requests:
        request = json.loads(line)
        if isinstance(request, dict):
            searchers.use_prior(str(request["prior"]))
            answer: Any = {"ok": True}
        else:
            answer = [searchers.decide(int(row), observation) for row, observation in request]
        answers.write(json.dumps(answer, separators=(",", ":")) + "\n")
        answers.flush()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--iterations", type=int, required=True, help="plans scored per decision")
    parser.add_argument(
        "--min-iterations",
        type=int,
        default=0,
        help="with it, each race's own count, from this to --iterations",
    )
    args = parser.parse_args(argv)
    serve(RaceSearchers(args.seed, args.iterations, args.min_iterations), sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
