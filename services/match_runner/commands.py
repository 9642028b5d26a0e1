"""Command lines that start the match-runner processes. The demo, the benchmarks and the tests start
real workers with these, so they all run what docker-compose.yml runs. Nothing heavy is imported."""

from __future__ import annotations

import sys

APP = "services.match_runner.worker"


def worker_command(
    *, concurrency: int = 1, name: str | None = None, python: str = sys.executable, solo_cluster: bool = True
) -> list[str]:
    """A worker on the `matches` queue. `solo_cluster` skips the gossip and mingle start-up chatter
    between workers, which only slows down a worker that is the only one of its kind."""
    command = [python, "-m", "celery", "-A", APP, "worker", "-Q", "matches", "-c", str(concurrency)]
    command += ["--loglevel", "INFO"]
    if name:
        command += ["-n", name]
    if solo_cluster:
        command += ["--without-gossip", "--without-mingle"]
    return command


def beat_command(*, python: str = sys.executable, schedule_file: str | None = None) -> list[str]:
    """The scheduler that runs the ladder and the reaper."""
    command = [python, "-m", "celery", "-A", APP, "beat", "--loglevel", "INFO"]
    if schedule_file:
        command += ["--schedule", schedule_file]
    return command
