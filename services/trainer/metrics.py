"""Prometheus metrics of the trainer, recorded once per PPO iteration by the chunk's iteration hook
(services/trainer/handler.py) and served by the worker's pool process on ARENA_TRAINER_METRICS_PORT
(services/trainer/worker.py). Nothing here imports torch: the worker's parent process loads this.

Counters count what this worker did since it started; Prometheus' rate() turns them into speeds
(environment steps per second, races won per minute), which survive a worker restart. The gauges
hold the last iteration's values, for a glance at the run in progress.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

OPPONENTS = ("idle", "runner", "blocker", "self", "league", "search")
"""Who the learner raced (services.trainer.opponents.OpponentKind, lower case): the label values of
the per-opponent counters, all created at import so every series exists from the start."""

ITERATIONS = Counter("arena_trainer_iterations", "PPO iterations completed by this worker")
ENV_STEPS = Counter(
    "arena_trainer_env_steps",
    "Environment steps (race turns of all races) simulated by this worker; rate() is the SPS",
)
SPS = Gauge(
    "arena_trainer_sps",
    "Environment steps per second of the last iteration (rollout and update)",
    multiprocess_mode="mostrecent",
)
ITERATION_SECONDS = Histogram(
    "arena_trainer_iteration_seconds",
    "Wall-clock time of one PPO iteration (rollout and update)",
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300),
)
REWARD_MEAN = Gauge(
    "arena_trainer_reward_mean",
    "Mean reward per pod and step in the last iteration's rollout",
    multiprocess_mode="mostrecent",
)
EPISODES = Counter(
    "arena_trainer_episodes", "Training races finished, by the learner's opponent", ["opponent"]
)
WINS = Counter("arena_trainer_wins", "Training races the learner won, by its opponent", ["opponent"])
LEAGUE_SIZE = Gauge(
    "arena_trainer_league_size",
    "Snapshots in the league after the last iteration",
    multiprocess_mode="mostrecent",
)
LAST_ITERATION = Gauge(
    "arena_trainer_last_iteration_timestamp_seconds",
    "Unix time at which the last iteration ended",
    multiprocess_mode="mostrecent",
)

for _opponent in OPPONENTS:
    EPISODES.labels(_opponent)
    WINS.labels(_opponent)


def _number(values: Mapping[str, Any], key: str) -> float | None:
    value = values.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def record_iteration(values: Mapping[str, Any], env_steps: int) -> None:
    """One iteration's metrics row (the dict `Trainer.iterate` returns) and the environment steps
    it simulated. Keys that are missing or not finite numbers are skipped, never an error."""
    ITERATIONS.inc()
    ENV_STEPS.inc(max(0, env_steps))
    LAST_ITERATION.set_to_current_time()
    seconds = _number(values, "seconds")
    if seconds is not None:
        ITERATION_SECONDS.observe(seconds)
    for key, gauge in (("sps", SPS), ("reward_mean", REWARD_MEAN), ("league_size", LEAGUE_SIZE)):
        value = _number(values, key)
        if value is not None:
            gauge.set(value)
    for opponent in OPPONENTS:
        races = _number(values, f"episodes_{opponent}")
        if not races:
            continue
        EPISODES.labels(opponent).inc(races)
        rate = _number(values, f"win_rate_{opponent}")
        if rate is not None:
            WINS.labels(opponent).inc(round(rate * races))
