"""The Celery worker command line every service's worker runs (the demo, the tests and
docker-compose.yml start the same). Standard library only: nothing heavy is imported."""

from __future__ import annotations

import sys


def celery_worker_command(
    app: str,
    queue: str,
    *,
    concurrency: int = 1,
    name: str | None = None,
    python: str = sys.executable,
    solo_cluster: bool = True,
) -> list[str]:
    """A worker of the Celery app module `app` on `queue`. `solo_cluster` skips the gossip and
    mingle start-up chatter between workers, which only slows down a worker that is the only one of
    its kind."""
    command = [python, "-m", "celery", "-A", app, "worker", "-Q", queue, "-c", str(concurrency)]
    command += ["--loglevel", "INFO"]
    if name:
        command += ["-n", name]
    if solo_cluster:
        command += ["--without-gossip", "--without-mingle"]
    return command
