"""The turn loop's Prometheus series, recorded by every process that plays matches and serves
metrics: the match runner's worker (`arena_runner_*{job="match-runner"}`) and the evolver's, for
the evaluation matches it plays itself (`arena_runner_*{job="evolver"}`). Defined once, here, so
both can record them in one process; the turn loop itself knows only the TurnMetrics protocol."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from shared.games.registry import game_names
from shared.play.turns import FailureKind

TURN_LATENCY = Histogram(
    "arena_runner_turn_latency_seconds",
    "Time for a bot to answer one turn (answers and errors, not timeouts)",
    ["game"],
    buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0),
)
BOT_FAILURES = Counter(
    "arena_runner_bot_failures_total", "Turns a bot did not answer usefully, by kind", ["game", "kind"]
)
BOT_FAILURE_KINDS: tuple[FailureKind, ...] = ("timeout", "error")
"""The `kind` label of BOT_FAILURES (shared/play/turns.py)."""


class PrometheusTurnMetrics:
    """The TurnMetrics of one match (play_match(..., metrics=PrometheusTurnMetrics))."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.latency = TURN_LATENCY.labels(game)

    def answered(self, latency_s: float) -> None:
        self.latency.observe(latency_s)

    def failed(self, kind: FailureKind) -> None:
        BOT_FAILURES.labels(self.game, kind).inc()


def initialise_series() -> None:
    """Create every game's series at 0, so each exists before its first event (see
    services/match_runner/metrics.py)."""
    for game in game_names():
        TURN_LATENCY.labels(game)
        for kind in BOT_FAILURE_KINDS:
            BOT_FAILURES.labels(game, kind)
