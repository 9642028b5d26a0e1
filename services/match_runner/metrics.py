"""Prometheus metrics of the match runner (served by the worker, see services.match_runner.worker)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

MATCHES = Counter(
    "arena_runner_matches_total", "Matches ended by this worker, by game and outcome", ["game", "outcome"]
)
TURN_LATENCY = Histogram(
    "arena_runner_turn_latency_seconds",
    "Time for a bot to answer one turn (answers and errors, not timeouts)",
    ["game"],
    buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0),
)
BOT_FAILURES = Counter(
    "arena_runner_bot_failures_total", "Turns a bot did not answer usefully, by kind", ["game", "kind"]
)
MATCH_DURATION = Histogram(
    "arena_runner_match_duration_seconds",
    "Wall-clock time to play a match",
    ["game"],
    buckets=(0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900),
)
BOT_FAILURE_KINDS = ("timeout", "error")
"""The `kind` label of BOT_FAILURES (services/match_runner/runner.py)."""


def initialise_series() -> None:
    """Create every game's series at 0, so each exists before its first event (a rate() then sees
    the first increment, and dashboards show 0 instead of no data). Called by the worker process
    that serves the metrics; the import is here because play.py imports this module."""
    from services.match_runner.play import Outcome
    from shared.games.registry import game_names

    for game in game_names():
        TURN_LATENCY.labels(game)
        MATCH_DURATION.labels(game)
        for outcome in Outcome:
            MATCHES.labels(game, outcome)
        for kind in BOT_FAILURE_KINDS:
            BOT_FAILURES.labels(game, kind)
