"""Prometheus metrics of the match runner (served by the worker, see services.match_runner.worker).

The per-turn series (arena_runner_turn_latency_seconds, arena_runner_bot_failures_total) belong to
the turn loop and are defined in shared.play.prometheus; this worker records them by passing
TURN_METRICS to play_match."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from services.match_runner.outcome import Outcome
from shared.games.registry import game_names
from shared.play.prometheus import PrometheusTurnMetrics
from shared.play.prometheus import initialise_series as initialise_turn_series
from shared.play.turns import MetricsFor

MATCHES = Counter(
    "arena_runner_matches_total", "Matches ended by this worker, by game and outcome", ["game", "outcome"]
)
MATCH_DURATION = Histogram(
    "arena_runner_match_duration_seconds",
    "Wall-clock time to play a match",
    ["game"],
    buckets=(0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900),
)
TURN_METRICS: MetricsFor = PrometheusTurnMetrics
"""What play_match records each turn's answer or failure with."""


def initialise_series() -> None:
    """Create every game's series at 0, so each exists before its first event (a rate() then sees
    the first increment, and dashboards show 0 instead of no data). Called by the worker process
    that serves the metrics."""
    initialise_turn_series()
    for game in game_names():
        MATCH_DURATION.labels(game)
        for outcome in Outcome:
            MATCHES.labels(game, outcome)
