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
