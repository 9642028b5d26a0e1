"""The trainer worker's database side: a run's config and pending changes, each iteration's live
row, and the chunk's own writes in the transaction that commits its job checkpoint."""

from __future__ import annotations

import dataclasses
import math
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, exists, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from shared import quotas
from shared.config import Settings
from shared.db.models import Job, TrainingCheckpoint, TrainingEvaluation, TrainingMetric, TrainingRun, User
from shared.db.session import get_engine, session_scope
from shared.states import HostedContract, JobStatus, TrainingStage
from shared.training import changes


@dataclass(frozen=True, slots=True)
class RunConfig:
    id: uuid.UUID
    name: str
    config: dict[str, Any]


def load_run(run_id: uuid.UUID) -> RunConfig | None:
    with session_scope() as session:
        run = session.get(TrainingRun, run_id)
        return None if run is None else RunConfig(run.id, run.name, dict(run.config))


def training_seconds_left(run_id: uuid.UUID, settings: Settings) -> float:
    """What the run's owner has left of the day's training time (shared.quotas); QuotaExceeded
    when nothing is."""
    with session_scope() as session:
        owner = session.scalars(
            select(User).join(TrainingRun, TrainingRun.owner_id == User.id).where(TrainingRun.id == run_id)
        ).one_or_none()
        return math.inf if owner is None else quotas.training_seconds_left(session, settings, owner)


def read_changes(run_id: uuid.UUID) -> tuple[int, dict[str, Any]]:
    """(changes_version, pending_changes): one primary-key read, at every iteration boundary."""
    with get_engine().connect() as conn:
        row = conn.execute(
            select(TrainingRun.changes_version, TrainingRun.pending_changes).where(TrainingRun.id == run_id)
        ).one()
    return int(row[0]), dict(row[1] or {})


@dataclass(frozen=True, slots=True)
class IterationRow:
    iteration: int
    global_step: int
    stage: TrainingStage
    """The stage after the iteration (the curriculum may have moved on)."""
    elapsed_s: float
    metrics: dict[str, Any]


def write_iteration(job_id: uuid.UUID, chunk: int, owner: str, run_id: uuid.UUID, row: IterationRow) -> bool:
    """The iteration's metrics row and the run's live counters, only while this process still holds
    the chunk's lease (a worker presumed dead writes nothing). False when it does not."""
    ours = exists().where(
        Job.id == job_id,
        Job.chunk == chunk,
        Job.lease_owner == owner,
        Job.status.in_(JobStatus.holding_lease()),
    )
    with get_engine().begin() as conn:
        updated = conn.execute(
            update(TrainingRun)
            .where(TrainingRun.id == run_id, ours)
            .values(
                iteration=row.iteration,
                global_step=row.global_step,
                stage=row.stage,
                elapsed_s=row.elapsed_s,
            )
        ).rowcount
        if not updated:
            return False
        conn.execute(_upsert_metrics(run_id, [row]))
    return True


def _upsert_metrics(run_id: uuid.UUID, rows: list[IterationRow]) -> Any:
    statement = insert(TrainingMetric).values(
        [
            {"run_id": run_id, "iteration": r.iteration, "global_step": r.global_step, "metrics": r.metrics}
            for r in rows
        ]
    )
    return statement.on_conflict_do_update(
        index_elements=[TrainingMetric.run_id, TrainingMetric.iteration],
        set_={"global_step": statement.excluded.global_step, "metrics": statement.excluded.metrics},
    )


@dataclass(frozen=True, slots=True)
class NewCheckpoint:
    id: uuid.UUID
    path: str
    iteration: int
    global_step: int
    stage: TrainingStage
    bot_source: str | None
    bot_contract: HostedContract | None
    summary: dict[str, Any]
    race_replay: bytes | None = None
    """The gzipped showcase race (`showcase.play_showcase`)."""


@dataclass(frozen=True, slots=True)
class EvaluationRow:
    """One opponent's races in a checkpoint's evaluation (services.trainer.reference_eval)."""

    opponent: str
    races: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    win_rate_low: float
    win_rate_high: float
    seconds: float
    opponent_config: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ChunkOutput:
    """What a chunk hands to `record`: where the trainer stands and what it did."""

    run_id: uuid.UUID
    iteration: int
    global_step: int
    stage: TrainingStage
    elapsed_s: float
    config: dict[str, Any]
    """The trainer's Args after the changes it applied."""
    rows: list[IterationRow] = field(default_factory=list)
    checkpoint: NewCheckpoint | None = None
    """None when no iteration ran (the chunk saved nothing new)."""
    seen_version: int | None = None
    """The last `changes_version` the chunk read; None if it never read one."""
    applied: dict[str, Any] = field(default_factory=dict)
    """Every change the chunk applied (merged)."""
    evaluation: list[EvaluationRow] = field(default_factory=list)
    """The checkpoint's evaluation against the built-ins, one row per opponent (none: not
    evaluated)."""


def record_chunk(session: Session, out: ChunkOutput, keep_files: int) -> None:
    """The chunk's writes, in the transaction that commits its job checkpoint: metrics rows (again:
    the live writes may have failed), the checkpoint row and its evaluation, the run's counters and
    config, retention, and the pending changes it applied. Rows past the committed iteration (a
    dead worker's) go."""
    run = session.scalars(
        select(TrainingRun)
        .where(TrainingRun.id == out.run_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one_or_none()
    if run is None:
        return
    if out.rows:
        session.execute(_upsert_metrics(run.id, out.rows))
    session.execute(
        delete(TrainingMetric).where(
            TrainingMetric.run_id == run.id, TrainingMetric.iteration > out.iteration
        )
    )
    if out.checkpoint is not None:
        new = out.checkpoint
        session.add(
            TrainingCheckpoint(
                id=new.id,
                run_id=run.id,
                iteration=new.iteration,
                global_step=new.global_step,
                stage=new.stage,
                path=new.path,
                bot_source=new.bot_source,
                bot_contract=new.bot_contract,
                summary=new.summary,
                race_replay=new.race_replay,
            )
        )
        session.flush()
        run.latest_checkpoint_id = new.id
        _mark_pruned(session, run.id, keep_files)
        for row in out.evaluation:
            session.add(
                TrainingEvaluation(
                    run_id=run.id,
                    iteration=new.iteration,
                    global_step=new.global_step,
                    stage=new.stage,
                    **dataclasses.asdict(row),
                )
            )
    run.iteration = out.iteration
    run.global_step = out.global_step
    run.stage = out.stage
    run.elapsed_s = out.elapsed_s
    run.config = out.config
    if out.seen_version is not None:
        if run.changes_version == out.seen_version:
            run.pending_changes = {}
        else:  # asked while the chunk ran: what it did not apply stays pending
            run.pending_changes = changes.not_applied(run.pending_changes or {}, out.applied)


def _mark_pruned(session: Session, run_id: uuid.UUID, keep: int) -> None:
    """Beyond the newest `keep` checkpoints, files of checkpoints never exported are let go."""
    rows = session.scalars(
        select(TrainingCheckpoint)
        .where(TrainingCheckpoint.run_id == run_id, TrainingCheckpoint.pruned_at.is_(None))
        .order_by(TrainingCheckpoint.iteration.desc())
    ).all()
    now = datetime.now(UTC)
    for row in rows[keep:]:
        if row.exported_at is None:
            row.pruned_at = now


def kept_files(run_id: uuid.UUID) -> tuple[set[str], int]:
    """(paths of checkpoints whose files stay, the last committed checkpoint's iteration)."""
    with get_engine().connect() as conn:
        rows = conn.execute(
            select(TrainingCheckpoint.path, TrainingCheckpoint.pruned_at, TrainingCheckpoint.iteration).where(
                TrainingCheckpoint.run_id == run_id
            )
        ).all()
    return {path for path, pruned, _ in rows if pruned is None}, max((r[2] for r in rows), default=0)


@dataclass(frozen=True, slots=True)
class RunState:
    run_id: uuid.UUID
    error: str | None
    iteration: int
    global_step: int
    stage: TrainingStage


def run_state(job_id: uuid.UUID) -> RunState | None:
    with session_scope() as session:
        row = session.execute(
            select(
                TrainingRun.id,
                Job.error,
                TrainingRun.iteration,
                TrainingRun.global_step,
                TrainingRun.stage,
            )
            .join(TrainingRun, TrainingRun.job_id == Job.id)
            .where(Job.id == job_id)
        ).one_or_none()
    return None if row is None else RunState(*row)
