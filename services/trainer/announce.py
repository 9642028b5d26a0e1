"""What the trainer worker tells people while it trains: a progress line per iteration in its log,
and live events on the run's topic (`training.progress`, `training.status`; docs/events.md).
Publishing never blocks or fails the training."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from shared.events import TrainingProgress, TrainingStatus, publish
from shared.states import JobStatus, TrainingStage

log = logging.getLogger("services.trainer")


def _number(value: Any, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "-"


def iteration_line(run_id: uuid.UUID, metrics: dict[str, Any]) -> str:
    """One line per iteration: where the run is, how fast, and how well it does."""
    return (
        f"training run {run_id}: iteration {metrics.get('iteration')}, {metrics.get('global_step')} steps, "
        f"stage {metrics.get('stage')}, {metrics.get('sps')} SPS, "
        f"win rate vs runner {_number(metrics.get('win_rate_runner'))}, "
        f"entropy {_number(metrics.get('entropy'), 3)}"
    )


def progress(
    run_id: uuid.UUID, iteration: int, global_step: int, stage: TrainingStage, metrics: dict[str, Any]
) -> None:
    log.info("%s", iteration_line(run_id, metrics))
    publish(
        TrainingProgress(
            run_id=run_id,
            status=JobStatus.RUNNING,
            iteration=iteration,
            global_step=global_step,
            stage=stage,
            metrics=metrics,
        )
    )


def status(
    run_id: uuid.UUID,
    status: JobStatus,
    iteration: int,
    global_step: int,
    stage: TrainingStage,
    error: str | None = None,
) -> None:
    log.info("training run %s: %s at iteration %d", run_id, status, iteration)
    publish(
        TrainingStatus(
            run_id=run_id,
            status=status,
            iteration=iteration,
            global_step=global_step,
            stage=stage,
            error=error,
        )
    )
