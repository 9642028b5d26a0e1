"""The match-runner worker and its beat scheduler: this module registers the service's tasks on the
shared app and owns the service's beat schedule (the ladder tick, the lost-message check, the reaper,
which also reaps long jobs, see docs/long-jobs.md, and the replay sweep).

    celery -A services.match_runner.worker worker -Q matches -c 1
    celery -A services.match_runner.worker beat

Readiness: `celery -A services.match_runner.worker inspect ping`. Prometheus metrics are served
on ARENA_WORKER_METRICS_PORT (0 or unset: off): summed over every pool process when
PROMETHEUS_MULTIPROC_DIR is set, else from the first pool process that binds the port
(shared/worker_metrics.py).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from celery.signals import worker_process_shutdown
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.match_runner.tasks import (
    TASK_LADDER_TICK,
    TASK_REAP_STALE,
    TASK_RESEND_LOST,
    TASK_SWEEP_REPLAYS,
)
from shared import worker_metrics
from shared.config import Settings, get_settings
from shared.queue import QUEUE_MATCHES, celery_app

log = logging.getLogger(__name__)


def beat_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    """The ladder tick, the lost-message check, the reaper and the replay sweep, on the matches
    queue (an interval of 0 switches the check or the sweep off).

    Ticks share the matches queue and wait behind matches being played; one that is older than its
    interval has been superseded by a newer one, so it expires instead of piling up."""
    periodic = {
        "ladder": (TASK_LADDER_TICK, settings.ladder_interval_s),
        "reaper": (TASK_REAP_STALE, settings.reaper_interval_s),
    }
    optional = {
        "lost-messages": (TASK_RESEND_LOST, settings.lost_message_check_s),
        "replay-sweep": (TASK_SWEEP_REPLAYS, settings.replay_sweep_interval_s),
    }
    periodic |= {name: entry for name, entry in optional.items() if entry[1] > 0}
    return {
        name: {
            "task": task,
            "schedule": timedelta(seconds=interval),
            "options": {"queue": QUEUE_MATCHES, "expires": interval},
        }
        for name, (task, interval) in periodic.items()
    }


celery_app.conf.beat_schedule = {**(celery_app.conf.beat_schedule or {}), **beat_schedule(get_settings())}
app = celery_app

# httpx logs every request at INFO: thousands of lines per match, and measurable time per turn.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)


class WorkerSettings(BaseSettings):
    """Options of the worker process only (the platform's Settings are shared by all services)."""

    model_config = SettingsConfigDict(env_prefix="ARENA_WORKER_", extra="ignore")

    metrics_port: int = 0


def _create_series(serving: bool) -> None:
    """Every series a dashboard reads exists from the start, at zero (in each pool process)."""
    if serving:
        from services.match_runner.metrics import initialise_series

        initialise_series()


worker_metrics.install(lambda: WorkerSettings().metrics_port, on_pool_process=_create_series)


@worker_process_shutdown.connect(weak=False)
def _stop_kept_sandboxes(**_: Any) -> None:
    """Hosted bots' sandboxes this pool process kept between matches (shared/sandbox/reuse.py) are
    stopped and their files removed when it exits (a killed process's die with it: bubblewrap's
    --die-with-parent; their cgroups are swept by the next sandbox start)."""
    from shared.sandbox.reuse import stop_kept

    stop_kept()
