"""The evolver worker: this module registers the evolver's task on the shared app.

    celery -A services.evolver.worker worker -Q evolution -c 1

Readiness: `celery -A services.evolver.worker inspect ping`. The reaper that resends chunks of dead
workers runs in the match runner's beat (it needs no evolver code; docs/long-jobs.md). Prometheus
metrics (services/evolver/metrics.py) are served from the pool process that runs the chunks when
ARENA_EVOLVER_METRICS_PORT is set (0 or unset: off); with several pool processes, the first one
that binds the port serves its own (as in the match runner).
"""

from __future__ import annotations

from celery.signals import worker_process_init

from services.evolver import tasks  # noqa: F401  (registers arena.evolution.chunk)
from services.evolver.metrics import serve
from shared.config import get_settings
from shared.queue import celery_app

app = celery_app


@worker_process_init.connect
def _on_pool_process_start(**_: object) -> None:
    """The metrics live in the pool process that runs the chunks, so serve them from there."""
    port = get_settings().evolver_metrics_port
    if port:
        serve(port)
