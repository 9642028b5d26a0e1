"""The trainer worker: this module registers the trainer's task on the shared app. One chunk at a
time per worker (a chunk wants the whole GPU, or all the CPU cores it is given):

    celery -A services.trainer.worker worker -Q training -c 1

Readiness: `celery -A services.trainer.worker inspect ping`. The reaper that resends chunks of dead
workers runs in the match runner's beat (it needs no trainer code; docs/long-jobs.md). Prometheus
metrics (services/trainer/metrics.py) are served from the pool process that trains when
ARENA_TRAINER_METRICS_PORT is set (0 or unset: off).
"""

from __future__ import annotations

from celery.signals import worker_process_init

from services.trainer import tasks  # noqa: F401  (registers arena.training.chunk)
from services.trainer.handler import configure_torch
from services.trainer.metrics import serve
from shared.config import get_settings
from shared.queue import celery_app

app = celery_app


@worker_process_init.connect
def _on_pool_process_start(**_: object) -> None:
    """torch is imported in the pool process as it starts (seconds), not by the first chunk; the
    parent never imports it, so nothing of torch's is forked. The metrics live in this process (it
    runs the iterations), so they are served from here."""
    settings = get_settings()
    if settings.trainer_metrics_port:
        serve(settings.trainer_metrics_port)
    configure_torch(settings.training_torch_threads)
    import services.trainer.ppo  # noqa: F401
