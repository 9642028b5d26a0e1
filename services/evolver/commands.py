"""Command lines that start the evolver worker. The tests start real workers with these, so they run
what docker-compose.yml runs. Nothing heavy is imported."""

from __future__ import annotations

import sys

from shared.worker_commands import celery_worker_command

APP = "services.evolver.worker"
QUEUE = "evolution"


def worker_command(
    *, concurrency: int = 1, name: str | None = None, python: str = sys.executable, solo_cluster: bool = True
) -> list[str]:
    """A worker on the `evolution` queue. Each chunk mostly waits (on LLMs, on sandboxed matches, on
    the match runners), so one process per run in flight is plenty."""
    return celery_worker_command(
        APP, QUEUE, concurrency=concurrency, name=name, python=python, solo_cluster=solo_cluster
    )
