"""Command lines that start the trainer worker. The tests start real workers with these, so they
run what docker-compose.yml runs. Nothing heavy is imported."""

from __future__ import annotations

import sys

APP = "services.trainer.worker"
QUEUE = "training"


def worker_command(
    *, concurrency: int = 1, name: str | None = None, python: str = sys.executable, solo_cluster: bool = True
) -> list[str]:
    """A worker on the `training` queue; concurrency 1: one chunk at a time holds the device.
    `solo_cluster` skips the gossip and mingle start-up chatter between workers."""
    command = [python, "-m", "celery", "-A", APP, "worker", "-Q", QUEUE, "-c", str(concurrency)]
    command += ["--loglevel", "INFO"]
    if name:
        command += ["-n", name]
    if solo_cluster:
        command += ["--without-gossip", "--without-mingle"]
    return command
