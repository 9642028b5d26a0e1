"""The match-runner worker and its beat scheduler.

    celery -A services.match_runner.worker worker -Q matches -c 1
    celery -A services.match_runner.worker beat

Readiness: `celery -A services.match_runner.worker inspect ping`. Prometheus metrics are served
from the process that plays matches when ARENA_WORKER_METRICS_PORT is set (0 or unset: off).
"""

from __future__ import annotations

import logging
import os

from celery.signals import worker_process_init
from pydantic_settings import BaseSettings, SettingsConfigDict

import services.match_runner.tasks  # noqa: F401  (registers the tasks on the app)
from shared.queue import celery_app

log = logging.getLogger(__name__)

app = celery_app

# httpx logs every request at INFO: thousands of lines per match, and measurable time per turn.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)


class WorkerSettings(BaseSettings):
    """Options of the worker process only (the platform's Settings are shared by all services)."""

    model_config = SettingsConfigDict(env_prefix="ARENA_WORKER_", extra="ignore")

    metrics_port: int = 0


def start_metrics_server(port: int) -> bool:
    from prometheus_client import start_http_server

    try:
        start_http_server(port)
    except OSError as exc:  # a second pool process on the same port: the first one serves
        log.warning("metrics port %d unavailable: %s", port, exc)
        return False
    log.info("serving Prometheus metrics on :%d (pid %d)", port, os.getpid())
    return True


@worker_process_init.connect
def _on_pool_process_start(**_: object) -> None:
    """Metrics live in the pool process that plays the matches, so serve them from there."""
    port = WorkerSettings().metrics_port
    if port:
        start_metrics_server(port)
