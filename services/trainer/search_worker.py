"""A worker process of the search opponents (`search_opponents.py`): `builtin:search` deciding for
the training races it is given, one search bot per race so that each keeps its own plan from turn
to turn.

It speaks JSON lines on stdin and stdout: a request is a list of [race row, observation] pairs,
the answer the list of their actions in the same order; end of input ends the process. It imports
only the stdlib search bot, so it starts in a fraction of a second and holds no torch state.

    python -m services.trainer.search_worker --seed 1 --iterations 60
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from shared.games.podracing.search import SearchBot, make_search_bot

ROW_SEED_STRIDE = 1_000_003
"""Race row r's search bot is seeded seed * stride + r: one stream per race, the same on every run."""


class RaceSearchers:
    """One seeded, iteration-capped search bot per race row, made when the row first asks."""

    def __init__(self, seed: int, iterations: int) -> None:
        self.seed = seed
        self.iterations = iterations
        self._bots: dict[int, SearchBot] = {}

    def decide(self, row: int, observation: dict[str, Any]) -> dict[str, Any]:
        bot = self._bots.get(row)
        if bot is None:
            bot = make_search_bot(seed=self.seed * ROW_SEED_STRIDE + row, max_iterations=self.iterations)
            self._bots[row] = bot
        return bot(observation)


def serve(searchers: RaceSearchers, requests: TextIO, answers: TextIO) -> None:
    """Answer each request line with a line of actions until the input ends."""
    for line in requests:
        pairs = json.loads(line)
        actions = [searchers.decide(int(row), observation) for row, observation in pairs]
        answers.write(json.dumps(actions, separators=(",", ":")) + "\n")
        answers.flush()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--iterations", type=int, required=True, help="plans scored per decision")
    args = parser.parse_args(argv)
    serve(RaceSearchers(args.seed, args.iterations), sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
