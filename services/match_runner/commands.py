"""Command lines that start the match-runner processes. The demo, the benchmarks and the tests start
real workers with these, so they all run what docker-compose.yml runs. Nothing heavy is imported."""

from __future__ import annotations

import sys

from shared.worker_commands import celery_worker_command

APP = "services.match_runner.worker"


def worker_command(
    *, concurrency: int = 1, name: str | None = None, python: str = sys.executable, solo_cluster: bool = True
) -> list[str]:
    """A worker on the `matches` queue."""
    return celery_worker_command(
        APP, "matches", concurrency=concurrency, name=name, python=python, solo_cluster=solo_cluster
    )


def beat_command(*, python: str = sys.executable, schedule_file: str | None = None) -> list[str]:
    """The scheduler that runs the ladder and the reaper."""
    command = [python, "-m", "celery", "-A", APP, "beat", "--loglevel", "INFO"]
    if schedule_file:
        command += ["--schedule", schedule_file]
    return command
