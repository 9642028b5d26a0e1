"""The evolver worker: this module registers the evolver's task on the shared app.

    celery -A services.evolver.worker worker -Q evolution -c 1

Readiness: `celery -A services.evolver.worker inspect ping`. The reaper that resends chunks of dead
workers runs in the match runner's beat (it needs no evolver code; docs/long-jobs.md). Prometheus
metrics (services/evolver/metrics.py) are served on ARENA_EVOLVER_METRICS_PORT (0 or unset: off):
summed over every pool process when PROMETHEUS_MULTIPROC_DIR is set, else from the first pool
process that binds the port (shared/worker_metrics.py).
"""

from __future__ import annotations

from services.evolver import tasks  # noqa: F401  (registers arena.evolution.chunk)
from shared import worker_metrics
from shared.config import get_settings
from shared.queue import celery_app

app = celery_app

worker_metrics.install(lambda: get_settings().evolver_metrics_port)
