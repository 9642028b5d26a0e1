"""Training runs as plain functions over a Session: create, find, stop, resume, change the config,
read metrics and checkpoints, and export a checkpoint as a hosted bot.

A run is a `training_runs` row and its long job (`jobs`, 1:1; shared.jobs): the job holds the
status, the chunk and the checkpoint the next chunk starts from; the trainer worker
(services/trainer) works the chunks on the `training` queue. Nothing here imports the trainer, so
the gateway (which has no torch) calls these. Functions that change something commit.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from shared import bots
from shared.config import Settings
from shared.db.models import (
    Bot,
    BotVersion,
    TrainingCheckpoint,
    TrainingEvaluation,
    TrainingMetric,
    TrainingRun,
    User,
)
from shared.events import TrainingStatus, publish
from shared.jobs import JobRoute, OwnedRunKind, create_job
from shared.jobs import may_see as may_see
from shared.queue import QUEUE_TRAINING
from shared.states import BotOrigin, HostedContract, JobStatus, TrainingStage
from shared.training import changes
from shared.training.config import EVALUATION_OPPONENTS, TrainingConfig
from shared.training.errors import (
    CheckpointNotFound,
    NoRaceYet,
    NothingToExport,
    RunNotFound,
    RunStateError,
    UntrainableGame,
)

log = logging.getLogger("shared.training")

TASK_TRAIN_CHUNK = "arena.training.chunk"
"""Runs one chunk of a training run (services.trainer.tasks), on the `training` queue."""
TRAINING = JobRoute(kind="training", task_name=TASK_TRAIN_CHUNK, queue=QUEUE_TRAINING)
TRAINABLE_GAMES = ("podracing",)
"""Games the trainer has a batched engine and a policy for."""
BOT_NAME_MAX = 64


def announce(run: TrainingRun, status: JobStatus, error: str | None = None) -> None:
    """Publish the run's status on its topic (never blocks, never fails the caller)."""
    publish(
        TrainingStatus(
            run_id=run.id,
            status=status,
            iteration=run.iteration,
            global_step=run.global_step,
            stage=run.stage,
            error=error,
        )
    )


def _finished(run: TrainingRun) -> str:
    return f"training run {run.id} is finished: its budget is spent (start a new run to train more)"


RUNS = OwnedRunKind(
    TrainingRun,
    noun="training run",
    not_found=RunNotFound,
    state_error=RunStateError,
    finished=_finished,
    log=log,
    announce=announce,
)
"""Training runs as owned runs (shared.jobs.runs); every change of status is announced."""
get_run = RUNS.get_run
list_runs = RUNS.list_runs
stop_run = RUNS.stop_run
resume_run = RUNS.resume_run


def create_run(session: Session, owner: User, *, name: str, game: str, config: TrainingConfig) -> TrainingRun:
    """A queued run with its job; its first chunk is sent after the commit."""
    if game not in TRAINABLE_GAMES:
        raise UntrainableGame(game, TRAINABLE_GAMES)
    resolved = config.resolved()
    run_id = uuid.uuid4()
    job = create_job(session, TRAINING, {"run_id": str(run_id)})
    run = TrainingRun(
        id=run_id,
        job_id=job.id,
        owner_id=owner.id,
        game=game,
        name=name,
        config=resolved,
        pending_changes={},
        changes_version=0,
        stage=TrainingStage(resolved["stage"]),
        iteration=0,
        global_step=0,
        elapsed_s=0.0,
    )
    session.add(run)
    session.commit()
    RUNS.enqueue_quietly(run, job)
    log.info("training run %s (%s) created for %s", run.id, name, owner.name)
    announce(run, job.status)
    return run


def change_config(session: Session, actor: User, run_id: uuid.UUID, change: dict[str, Any]) -> TrainingRun:
    """Ask for a config change (`ConfigChange.changes()`): the worker applies it at its next
    iteration boundary; a stopped or failed run gets it when it is resumed."""
    run = get_run(session, actor, run_id, lock=True)
    if run.job.status == JobStatus.FINISHED:
        session.rollback()
        raise RunStateError(f"training run {run.id} is finished: there is nothing left to change")
    if change.get("stage") == TrainingStage.IMITATE and not (run.config or {}).get("teacher"):
        session.rollback()
        raise RunStateError(
            f"training run {run.id} has no teacher: the imitate stage needs one (config.teacher, "
            "given when a run is created)"
        )
    run.pending_changes = changes.merge(run.pending_changes or {}, change)
    run.changes_version = run.changes_version + 1
    session.commit()
    log.info("training run %s: config change %d asked: %s", run.id, run.changes_version, change)
    return run


def metrics(session: Session, run: TrainingRun, after: int, limit: int) -> list[TrainingMetric]:
    """Iterations after `after`, oldest first, up to the run's current iteration (rows a dead
    worker wrote past its last checkpoint are not shown; the chunk that replaces it rewrites them)."""
    return list(
        session.scalars(
            select(TrainingMetric)
            .where(
                TrainingMetric.run_id == run.id,
                TrainingMetric.iteration > after,
                TrainingMetric.iteration <= run.iteration,
            )
            .order_by(TrainingMetric.iteration)
            .limit(limit)
        )
    )


def latest_metrics(session: Session, run: TrainingRun) -> TrainingMetric | None:
    return session.scalar(
        select(TrainingMetric)
        .where(TrainingMetric.run_id == run.id, TrainingMetric.iteration <= run.iteration)
        .order_by(TrainingMetric.iteration.desc())
        .limit(1)
    )


def checkpoints(
    session: Session, run: TrainingRun, limit: int, offset: int
) -> tuple[list[TrainingCheckpoint], int]:
    """The run's checkpoints, newest first."""
    query = select(TrainingCheckpoint).where(TrainingCheckpoint.run_id == run.id)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(TrainingCheckpoint.iteration.desc()).limit(limit).offset(offset))
    return list(rows), total


def evaluations(session: Session, run: TrainingRun, limit: int) -> list[list[TrainingEvaluation]]:
    """The run's last `limit` evaluations, newest first: each a list of rows, one per opponent, in
    the order the worker played them (runner, blocker, search)."""
    iterations = list(
        session.scalars(
            select(TrainingEvaluation.iteration)
            .where(TrainingEvaluation.run_id == run.id)
            .group_by(TrainingEvaluation.iteration)
            .order_by(TrainingEvaluation.iteration.desc())
            .limit(limit)
        )
    )
    if not iterations:
        return []
    rows = session.scalars(
        select(TrainingEvaluation).where(
            TrainingEvaluation.run_id == run.id, TrainingEvaluation.iteration.in_(iterations)
        )
    ).all()
    by_iteration: dict[int, list[TrainingEvaluation]] = {iteration: [] for iteration in iterations}
    for row in rows:
        by_iteration[row.iteration].append(row)
    order = {name: index for index, name in enumerate(EVALUATION_OPPONENTS)}
    return [
        sorted(by_iteration[i], key=lambda r: (order.get(r.opponent, len(order)), r.opponent))
        for i in iterations
    ]


def latest_race(session: Session, run: TrainingRun) -> bytes:
    """The gzipped replay of the newest checkpoint's showcase race; 404 while there is none."""
    blob = session.scalar(
        select(TrainingCheckpoint.race_replay)
        .where(TrainingCheckpoint.run_id == run.id, TrainingCheckpoint.race_replay.is_not(None))
        .order_by(TrainingCheckpoint.iteration.desc())
        .limit(1)
    )
    if blob is None:
        raise NoRaceYet(
            f"training run {run.id} has no showcase race yet (it comes with the first checkpoint)"
        )
    return blob


def latest_checkpoint(session: Session, run: TrainingRun) -> TrainingCheckpoint | None:
    if run.latest_checkpoint_id is None:
        return None
    return session.get(TrainingCheckpoint, run.latest_checkpoint_id)


@dataclass(frozen=True, slots=True)
class ExportedBot:
    bot: Bot
    version: BotVersion
    checkpoint: TrainingCheckpoint
    created: bool
    """True when this export created the bot (the run's first export)."""


def default_bot_name(run: TrainingRun) -> str:
    suffix = f"-{run.id.hex[:8]}"
    return run.name[: BOT_NAME_MAX - len(suffix)] + suffix


def _checkpoint_to_export(
    session: Session, run: TrainingRun, checkpoint_id: uuid.UUID | None
) -> TrainingCheckpoint:
    if checkpoint_id is not None:
        checkpoint = session.get(TrainingCheckpoint, checkpoint_id)
        if checkpoint is None or checkpoint.run_id != run.id:
            raise CheckpointNotFound(run.id, checkpoint_id)
    else:
        found = latest_checkpoint(session, run)
        if found is None:
            raise NothingToExport(
                f"training run {run.id} has no checkpoint yet: the first one is written when its first "
                "chunk ends (ARENA_TRAINING_CHUNK_SECONDS)"
            )
        checkpoint = found
    if checkpoint.bot_source is None:
        why = (checkpoint.summary or {}).get("export_error") or "unknown error"
        raise NothingToExport(
            f"the checkpoint at iteration {checkpoint.iteration} has no exported bot ({why}); "
            "export another checkpoint"
        )
    return checkpoint


def export_checkpoint(
    session: Session,
    settings: Settings,
    run: TrainingRun,
    *,
    checkpoint_id: uuid.UUID | None = None,
    bot_name: str | None = None,
) -> ExportedBot:
    """Register a checkpoint's exported policy (default: the latest checkpoint) as a new version of
    the run's hosted bot, owned by the run's owner; the run's first export creates the bot (named
    `bot_name`, or after the run). The code goes through the hosted-bot gate like any upload."""
    checkpoint = _checkpoint_to_export(session, run, checkpoint_id)
    source = checkpoint.bot_source
    assert source is not None
    owner = session.get(User, run.owner_id)
    if owner is None:
        raise RunNotFound(run.id)
    notes = {
        "training_run_id": str(run.id),
        "training_checkpoint_id": str(checkpoint.id),
        "iteration": checkpoint.iteration,
        "global_step": checkpoint.global_step,
        "stage": str(checkpoint.stage),
    }
    contract = checkpoint.bot_contract or HostedContract.DECIDE
    bot = session.get(Bot, run.bot_id) if run.bot_id is not None else None
    # Nothing of ours is pending (the bot domain's functions commit), and no commit comes first:
    # the caller's quota lock on the owner (shared.quotas) must last until the version is written.
    if bot is None:
        bot = bots.register_hosted_bot(
            session,
            settings,
            owner,
            name=bot_name or default_bot_name(run),
            game=run.game,
            source=source,
            contract=contract,
            origin=BotOrigin.TRAINER,
            notes=notes,
        )
        version = session.get(BotVersion, bot.current_version_id)
        assert version is not None
        created = True
    else:
        version = bots.add_version(session, settings, bot, source=source, contract=contract, notes=notes)
        created = False
    run.bot_id = bot.id
    checkpoint.exported_at = datetime.now(UTC)
    session.commit()
    log.info(
        "training run %s: checkpoint %s exported as bot %s v%d", run.id, checkpoint.id, bot.id, version.number
    )
    return ExportedBot(bot, version, checkpoint, created)
