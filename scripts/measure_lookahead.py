"""How much stronger the lookahead expert is than the policy it improves upon: races on the batched
engine where player 0 plays either the policy's most likely actions or the expert's (the policy's
distribution reweighted by exp(value / temperature): its most likely action), against the runner,
the blocker or the policy itself.

Run: `.venv/bin/python -m scripts.measure_lookahead [--checkpoint examples/training/podracing/latest.pt]
[--races 32] [--horizon 20] [--temperature 0.01] [--bootstrap] [--opponents self,runner,blocker]`.

Prints, per opponent and player, wins and losses with a 95% Wilson interval, the share of decisions
(pods) where the expert's action is the policy's own, and the ms per decision (all races at once).
Player 0's seat only (the lookahead values player 0's pods); against these opponents the expert's
model of player 1 is exact, so its figures are upper bounds for opponents it cannot model. The
figures of docs/trainer.md, "Expert iteration by lookahead, measured".
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from services.trainer.actions import ActionTable
from services.trainer.checkpoint_format import args_from_dict, load_checkpoint
from services.trainer.env import policy_commands
from services.trainer.evaluate import wilson_interval
from services.trainer.features import RaceView, features, update_runners
from services.trainer.lookahead import Lookahead, opponent_commands, soft_targets
from services.trainer.opponents import OpponentKind
from services.trainer.policy import Agent
from shared.games.podracing.torch_engine import TorchRaces

DEFAULT_CHECKPOINT = Path("examples/training/podracing/latest.pt")
OPPONENTS = {"self": OpponentKind.SELF, "runner": OpponentKind.RUNNER, "blocker": OpponentKind.BLOCKER}
TRACK_SEED = 7


def play(
    agent: Agent, lookahead: Lookahead | None, temperature: float, kind: OpponentKind, races: int
) -> tuple[int, int, float, float]:
    """(wins, losses, share of the policy's own actions, ms per decision) of player 0: the policy,
    or the expert when `lookahead`."""
    board = TorchRaces(races, dtype=torch.float32, seed=TRACK_SEED)
    board.reset()
    table = ActionTable.of(agent.action_set)
    opponent = torch.full((races,), int(kind))
    roles = torch.zeros(races, 2, dtype=torch.long)
    max_thrust = float(board.config.max_thrust)
    decisions, seconds, same, pods = 0, 0.0, 0, 0
    with torch.no_grad():
        while not bool(board.finished.all()):
            view = RaceView.from_races(board)
            roles = update_runners(view, roles)
            seen = features(view, roles)
            started = time.perf_counter()
            likeliest = agent.actor(seen).argmax(-1)
            own_choice = actions = likeliest[:, :2]
            if lookahead is not None:
                values = lookahead.action_values(board, roles, opponent)
                actions = soft_targets(values, temperature, agent.log_probs(seen[:, :2])).argmax(-1)
            seconds += time.perf_counter() - started
            decisions += 1
            racing = ~board.finished[:, None].expand_as(actions)
            same += int(((actions == own_choice) & racing).sum())
            pods += int(racing.sum())
            own = policy_commands(view, 0, actions, max_thrust, table)
            theirs = opponent_commands(table, board, view, likeliest[:, 2:], opponent)
            board.step(*(torch.cat((mine, other), 1) for mine, other in zip(own, theirs, strict=True)))
    wins, losses = int((board.winner == 0).sum()), int((board.winner == 1).sum())
    return wins, losses, same / pods, 1000.0 * seconds / decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    parser.add_argument("--races", type=int, default=32)
    parser.add_argument("--horizon", type=int, default=20)
    parser.add_argument("--temperature", type=float, default=0.01)
    parser.add_argument("--bootstrap", action="store_true", help="the critic's value at the horizon")
    parser.add_argument("--opponents", default="self,runner,blocker")
    options = parser.parse_args()
    torch.set_num_threads(1)
    state = load_checkpoint(options.checkpoint)
    args = args_from_dict(dict(state["args"]))
    agent = Agent(args.shape, args.action_set)
    agent.load_state_dict(state["agent"])
    agent.eval()
    lookahead = Lookahead(
        agent,
        ActionTable.of(args.action_set),
        horizon=options.horizon,
        gamma=args.gamma,
        weights=args.rewards,
        bootstrap=options.bootstrap,
    )
    print(f"horizon {options.horizon}, temperature {options.temperature}, bootstrap {options.bootstrap}")
    print("opponent  player  wins  losses  win rate (95%)           own action  ms/decision")
    for name in options.opponents.split(","):
        for label, expert in (("policy", None), ("expert", lookahead)):
            wins, losses, same, ms = play(agent, expert, options.temperature, OPPONENTS[name], options.races)
            low, high = wilson_interval(wins, options.races)
            rate = f"{100 * wins / options.races:.1f}% ({100 * low:.1f}% - {100 * high:.1f}%)"
            line = f"{name:9s} {label:7s} {wins:5d} {losses:7d}  {rate:24s} {100 * same:9.1f}% {ms:11.1f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
