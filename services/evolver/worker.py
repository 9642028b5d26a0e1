"""The evolver worker: this module registers the evolver's task on the shared app.

    celery -A services.evolver.worker worker -Q evolution -c 1

Readiness: `celery -A services.evolver.worker inspect ping`. The reaper that resends chunks of dead
workers runs in the match runner's beat (it needs no evolver code; docs/long-jobs.md).
"""

from __future__ import annotations

from services.evolver import tasks  # noqa: F401  (registers arena.evolution.chunk)
from shared.queue import celery_app

app = celery_app
