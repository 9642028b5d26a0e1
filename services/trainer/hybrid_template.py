"""A podracing bot exported from an Arena training checkpoint: the search bot with the trained
policy as its prior. One file, standard library only.

Two parts, each the platform's own code: the policy (services/trainer/bot_template.py: the
checkpoint's weights, its features and its forward pass) and the search bot
(shared/games/podracing/search.py: random-mutation hill climbing over short plans in an exact copy
of the referee's physics). Every turn the policy's most likely moves, played out over the search's
horizon in its model, give one more plan to start the search from, so the plan played never scores
below the policy's own. TIME_BUDGET_MS is the search's time per turn.

The glue below is services/trainer/hybrid_template.py; `arena export --hybrid` puts the two parts
in place of its platform imports.
"""

from __future__ import annotations

import math
from typing import Any

# >>> platform imports: the export puts the policy's and the search's code here instead
from services.trainer.bot_template import KIND_BOOST, KIND_SHIELD, most_likely, policy_inputs
from shared.games.podracing.search import BOOST, SHIELD, Move, Pods, SearchBot, Track, round_half_away

# <<< platform imports

TIME_BUDGET_MS = 40.0
"""The search's time per turn in milliseconds, the policy's plan included (`arena export --hybrid
--budget-ms` writes it)."""

_HYBRID: dict[str, HybridBot] = {}


def policy_view(pods: Pods, track: Track, player: int, first_turn: bool) -> dict[str, Any]:
    """A simulated state as the observation the policy's features read (own pods first); the
    search's positions and speeds are whole numbers already, angles are rounded as the referee
    shows them."""
    count = len(track.checkpoints)
    order = (2 * player, 2 * player + 1, 2 - 2 * player, 3 - 2 * player)
    seen = [
        {
            "x": pods.x[i],
            "y": pods.y[i],
            "vx": pods.vx[i],
            "vy": pods.vy[i],
            "angle": round_half_away(pods.angle[i]) % 360.0,
            "next_checkpoint": pods.next_checkpoint[i],
            "checkpoints_passed": pods.passed[i],
            "shield_cooldown": pods.cooldown[i],
            "boost_available": pods.boost[i],
        }
        for i in order
    ]
    return {
        "turn": 0 if first_turn else 1,
        "player": player,
        "laps": (track.total_passes - 1) // count,
        "checkpoint_count": count,
        "checkpoints": track.checkpoints,
        "max_thrust": track.max_thrust,
        "pods": seen[:2],
        "opponents": seen[2:],
    }


def _move(action: tuple[float, float, int], max_thrust: int) -> Move:
    """A policy action (rotation, thrust share, kind) as the search's move."""
    rotation, share, kind = action
    if kind == KIND_SHIELD:
        return rotation, SHIELD
    if kind == KIND_BOOST:
        return rotation, BOOST
    return rotation, math.floor(share * max_thrust + 0.5)


class PolicyPrior:
    """The policy's most likely moves, as the search's prior.

    The policy's roles (which pod of each side is the runner, an input) follow the real turns as
    its own `decide` keeps them, per player; a simulated state takes its roles from the real
    turn's, so the prior's first move is exactly the policy's move for the observation.
    """

    def __init__(self) -> None:
        self.runners: dict[int, list[int]] = {}

    def observe(self, observation: dict[str, Any]) -> None:
        """Take this turn's roles (call it with each real observation, before the search)."""
        player = int(observation["player"])
        self.runners[player] = policy_inputs(observation, self.runners.get(player))[2]

    def __call__(self, pods: Pods, track: Track, player: int, first_turn: bool) -> tuple[Move, Move]:
        view = policy_view(pods, track, player, first_turn)
        inputs = policy_inputs(view, self.runners.get(player))[0]
        first, second = (_move(most_likely(pod), track.max_thrust) for pod in inputs)
        return first, second


class HybridBot:
    """A `decide(observation) -> action` callable: the search seeded with the policy's plan."""

    def __init__(
        self,
        time_budget_ms: float = TIME_BUDGET_MS,
        seed: int | None = None,
        max_iterations: int | None = None,
    ) -> None:
        self.prior = PolicyPrior()
        self.search = SearchBot(time_budget_ms, seed, max_iterations, self.prior)

    def __call__(self, observation: dict[str, Any]) -> dict[str, Any]:
        self.prior.observe(observation)
        return self.search(observation)


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    """The hybrid bot with TIME_BUDGET_MS per turn (one instance serves both seats)."""
    bot = _HYBRID.get("bot")
    if bot is None:
        bot = _HYBRID["bot"] = HybridBot()
    return bot(observation)
