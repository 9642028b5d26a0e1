"""The evolver's evaluation cascade: static gate, smoke run, quick matches against the built-in
bots, a tournament against the fleet; fitness and behaviour descriptors (the Nash averaging over
the run's payoff table is shared.evolution.payoff, which the pages use too).

Generated code only ever runs in the hosted-bot sandbox (see matches.py)."""

from services.evolver.evaluation.cascade import EvalStage, Evaluation, TournamentPlan, evaluate
from services.evolver.evaluation.fitness import cell, descriptor_names, descriptors, fitness
from services.evolver.evaluation.matches import LocalExecutor, QueueExecutor, fleet_opponents
from services.evolver.evaluation.records import MatchRecord, MatchSpec, Outcome
from services.evolver.evaluation.settings import EvaluationSettings

__all__ = [
    "EvalStage",
    "Evaluation",
    "EvaluationSettings",
    "LocalExecutor",
    "MatchRecord",
    "MatchSpec",
    "Outcome",
    "QueueExecutor",
    "TournamentPlan",
    "cell",
    "descriptor_names",
    "descriptors",
    "evaluate",
    "fitness",
    "fleet_opponents",
]
