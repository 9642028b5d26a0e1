"""How often the search keeps its prior's move: the hybrid bot (the search seeded with a trained
policy) racing builtin:search, per number of plans scored a decision.

Run: `.venv/bin/python -m scripts.measure_prior_agreement [--checkpoint examples/training/podracing/latest.pt]
[--plans 0,20,60] [--races 3] [--opponent-plans 60]`.

For each plan count: decisions made, the share whose played plan is the prior's own plan, the share
whose first move (both pods' rotation and command) is the prior's, and the mean ms per decision.
Tracks from seed 0, the hybrid in seat 0. The search's labels in expert iteration
(docs/trainer.md, "Expert iteration, measured") are these first moves.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from services.trainer.bot_module import load_bot_module
from services.trainer.export import export_checkpoint
from shared.games.podracing.game import PodracingGame
from shared.games.podracing.search import make_search_bot

DEFAULT_CHECKPOINT = Path("examples/training/podracing/latest.pt")


def measure(source: str, plans: int, races: int, opponent_plans: int) -> tuple[int, float, float, float]:
    """(decisions, share played = prior plan, share first move = prior's, mean ms per decision)."""
    hybrid = load_bot_module(source, "measured_hybrid").HybridBot
    game = PodracingGame()
    decisions = same_plan = same_move = 0
    seconds = 0.0
    for track in range(races):
        bot = hybrid(seed=1, max_iterations=plans)
        opponent = make_search_bot(seed=2, max_iterations=opponent_plans)
        match = game.create_match(track)
        while not match.finished:
            started = time.perf_counter()
            action = bot(match.observation(0))
            seconds += time.perf_counter() - started
            played, prior = bot.search.plan, bot.search.prior_plan
            decisions += 1
            same_plan += played is prior
            same_move += (
                played.rotations[:2] == prior.rotations[:2] and played.commands[:2] == prior.commands[:2]
            )
            match.step([action, opponent(match.observation(1))])
    return decisions, same_plan / decisions, same_move / decisions, 1000.0 * seconds / decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    parser.add_argument("--plans", default="0,20,60", help="plan counts of the hybrid's search")
    parser.add_argument("--races", type=int, default=3)
    parser.add_argument("--opponent-plans", type=int, default=60)
    options = parser.parse_args()
    source = export_checkpoint(options.checkpoint, hybrid=True)
    print("plans  decisions  prior plan played  prior first move  ms/decision")
    for plans in (int(text) for text in options.plans.split(",")):
        decisions, plan_share, move_share, ms = measure(source, plans, options.races, options.opponent_plans)
        print(f"{plans:>5}  {decisions:>9}  {plan_share:>16.1%}  {move_share:>16.1%}  {ms:>11.1f}")


if __name__ == "__main__":
    main()
