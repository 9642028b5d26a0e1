"""The gateway's views of training runs, metrics and checkpoints. Everything that changes a run is
shared.training; this module only turns rows into API models."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from services.gateway.runs.service import OwnedRuns, owned_fields
from services.gateway.training.schemas import (
    EVALUATIONS_SHOWN,
    CheckpointOut,
    EvaluationOut,
    EvaluationResult,
    LeagueEntry,
    MetricPoint,
    TrainingRunDetail,
    TrainingRunOut,
)
from shared import quotas, training
from shared.db.models import TrainingCheckpoint, TrainingEvaluation, TrainingMetric, TrainingRun


def _progress(run: TrainingRun, total_steps: int, budget_s: float | None) -> float:
    shares = [run.global_step / max(1, total_steps)]
    if budget_s:
        shares.append(run.elapsed_s / budget_s)
    return round(min(1.0, max(shares)), 4)


def run_view(session: Session, run: TrainingRun) -> TrainingRunOut:
    config: dict[str, Any] = run.config or {}
    total_steps = int(config.get("total_steps", 0))
    budget_s = config.get("time_budget_s")
    checkpoint = training.latest_checkpoint(session, run)
    return TrainingRunOut(
        **owned_fields(run),
        stage=run.stage,
        iteration=run.iteration,
        global_step=run.global_step,
        elapsed_s=run.elapsed_s,
        total_steps=total_steps,
        time_budget_s=budget_s,
        device=str(config.get("device", "auto")),
        progress=_progress(run, total_steps, budget_s),
        checkpoint_iteration=checkpoint.iteration if checkpoint else None,
        changes_version=run.changes_version,
    )


def metric_view(row: TrainingMetric) -> MetricPoint:
    return MetricPoint(
        iteration=row.iteration, global_step=row.global_step, metrics=row.metrics, created_at=row.created_at
    )


def checkpoint_view(row: TrainingCheckpoint) -> CheckpointOut:
    summary: dict[str, Any] = row.summary or {}
    return CheckpointOut(
        id=row.id,
        iteration=row.iteration,
        global_step=row.global_step,
        stage=row.stage,
        created_at=row.created_at,
        exportable=row.bot_source is not None,
        bot_contract=row.bot_contract,
        export_error=summary.get("export_error"),
        exported_at=row.exported_at,
        file_kept=row.pruned_at is None,
        metrics=summary.get("metrics") or {},
    )


def _league(checkpoint: TrainingCheckpoint | None) -> list[LeagueEntry]:
    if checkpoint is None:
        return []
    rows = (checkpoint.summary or {}).get("league") or []
    return [LeagueEntry.model_validate(row) for row in rows if isinstance(row, dict)]


def evaluation_view(rows: list[TrainingEvaluation]) -> EvaluationOut:
    """One evaluation: the rows of one checkpoint, one per opponent."""
    first = rows[0]
    return EvaluationOut(
        iteration=first.iteration,
        global_step=first.global_step,
        stage=first.stage,
        created_at=first.created_at,
        results=[
            EvaluationResult(
                opponent=row.opponent,
                races=row.races,
                wins=row.wins,
                draws=row.draws,
                losses=row.losses,
                win_rate=row.win_rate,
                interval=(row.win_rate_low, row.win_rate_high),
                opponent_config=row.opponent_config or {},
                seconds=row.seconds,
            )
            for row in rows
        ],
    )


def run_detail(session: Session, run: TrainingRun) -> TrainingRunDetail:
    checkpoint = training.latest_checkpoint(session, run)
    latest = training.latest_metrics(session, run)
    return TrainingRunDetail(
        **run_view(session, run).model_dump(),
        config=run.config or {},
        pending_changes=run.pending_changes or {},
        latest_metrics=metric_view(latest) if latest else None,
        latest_checkpoint=checkpoint_view(checkpoint) if checkpoint else None,
        league=_league(checkpoint),
        evaluations=[evaluation_view(rows) for rows in training.evaluations(session, run, EVALUATIONS_SHOWN)],
    )


TRAINING_RUNS = OwnedRuns(
    quota=quotas.RunKind.TRAINING,
    get_run=training.get_run,
    list_runs=training.list_runs,
    stop_run=training.stop_run,
    resume_run=training.resume_run,
    run_view=run_view,
    run_detail=run_detail,
)
"""Training runs as owned runs: the API's create, list, show, stop and resume."""
