"""The trainer worker: this module registers the trainer's task on the shared app. One chunk at a
time per worker (a chunk wants the whole GPU, or all the CPU cores it is given):

    celery -A services.trainer.worker worker -Q training -c 1

Readiness: `celery -A services.trainer.worker inspect ping`. The reaper that resends chunks of dead
workers runs in the match runner's beat (it needs no trainer code; docs/long-jobs.md). Prometheus
metrics (services/trainer/metrics.py) are served on ARENA_TRAINER_METRICS_PORT (0 or unset: off)
from the pool process that trains (shared/worker_metrics.py).
"""

from __future__ import annotations

from celery.signals import worker_process_init

from services.trainer import tasks  # noqa: F401  (registers arena.training.chunk)
from services.trainer.handler import configure_torch
from shared import worker_metrics
from shared.config import get_settings
from shared.queue import celery_app

app = celery_app


worker_metrics.install(lambda: get_settings().trainer_metrics_port)


@worker_process_init.connect
def _on_pool_process_start(**_: object) -> None:
    """torch is imported in the pool process as it starts (seconds), not by the first chunk; the
    parent never imports it, so nothing of torch's is forked."""
    settings = get_settings()
    configure_torch(settings.training_torch_threads)
    import services.trainer.ppo  # noqa: F401
