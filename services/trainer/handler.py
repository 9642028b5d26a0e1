"""The `training` job kind: a training run worked in chunks (shared.jobs, docs/long-jobs.md).

Each chunk loads the run's trainer from its last checkpoint file (or creates it on the first
chunk, or goes on with the trainer this process saved that very checkpoint from: `WarmCache`),
trains for up to ARENA_TRAINING_CHUNK_SECONDS (less when the owner's daily training time,
ARENA_QUOTA_TRAINING_SECONDS_PER_DAY, runs out first; none left fails the run), and at every
iteration boundary reads the config changes asked meanwhile (one primary-key read) and applies
what it has not applied yet. After each iteration it writes the metrics row and the run's counters
(only while it holds the chunk's lease), publishes `training.progress` and logs a progress line.
It stops early when a stop is asked. Then it saves a checkpoint file, exports the policy as a
stdlib-only hosted bot, races it once against the built-in runner (the showcase race), every few
chunks evaluates it against the built-ins (`reference_eval`; `Args.evaluation`), and `record`
writes the checkpoint row, its evaluation, the run's state and the changes it applied in the
transaction that commits the job's checkpoint. A run on a device this worker lacks fails at once.

torch is imported in the pool process (services/trainer/worker.py), never in the worker's parent.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from services.trainer import announce, checkpoints, reference_eval, store
from services.trainer.metrics import record_iteration
from services.trainer.store import ChunkOutput, EvaluationRow, IterationRow, NewCheckpoint, RunConfig
from shared.config import Settings, get_settings
from shared.jobs import ChunkResult, ChunkWork, JobHandler, PermanentJobError, worker_name
from shared.jsonsafe import storable
from shared.quotas import QuotaExceeded
from shared.states import HostedContract, JobStatus, TrainingStage
from shared.training import TRAINING, changes
from shared.training.config import TrainingEvaluationConfig

if TYPE_CHECKING:
    from services.trainer.ppo import Trainer

log = logging.getLogger("services.trainer")

EXPORT_CONTRACT = HostedContract.DECIDE
"""How exported bots talk to the runner: a module with decide(observation) (the exporter's
"hosted" flavour)."""
EVALUATION_DEADLINE_SHARE = 0.8
"""An evaluation stops (keeping the races played) once this share of the chunk's soft time limit
(ARENA_JOB_CHUNK_SOFT_TIME_LIMIT_S) has passed since the chunk began: the commit still follows,
and a chunk killed at its limit would be retried, evaluation and all."""


@functools.cache
def configure_torch(threads: int) -> None:
    """Once per process: torch's CPU threads (ARENA_TRAINING_TORCH_THREADS; 0 leaves torch's own)."""
    import torch

    if threads > 0:
        torch.set_num_threads(threads)
    log.info(
        "torch %s, CUDA %s, %d CPU threads",
        torch.__version__,
        torch.cuda.is_available(),
        torch.get_num_threads(),
    )


def export_bot_source(trainer: Trainer, description: str) -> str:
    """The trainer's policy as a stdlib-only hosted `decide` bot (services.trainer.export)."""
    from services.trainer.export import export_agent

    return export_agent(trainer.agent, trainer.args.shape, "hosted", source=description)


class PendingChanges:
    """Config changes as the chunk sees them: `before_iteration` hands the trainer what was asked
    and not applied yet (nothing when the run's changes_version did not move)."""

    def __init__(self, run_id: uuid.UUID) -> None:
        self.run_id = run_id
        self.seen_version: int | None = None
        self.applied: dict[str, Any] = {}
        self.just_applied: dict[str, Any] = {}
        """Applied before the iteration that runs now: its metrics row records them."""

    def before_iteration(self) -> dict[str, Any] | None:
        try:
            version, pending = store.read_changes(self.run_id)
        except Exception as exc:  # the database blinked: the changes wait for the next boundary
            log.warning("training run %s: could not read config changes: %s", self.run_id, exc)
            return None
        if version == self.seen_version:
            return None
        self.seen_version = version
        fresh = changes.not_applied(pending, self.applied)
        if not fresh:
            return None
        self.applied = changes.merge(self.applied, fresh)
        self.just_applied = fresh
        log.info("training run %s: applying config changes %s (version %d)", self.run_id, fresh, version)
        return fresh


@dataclass(frozen=True, slots=True)
class WarmTrainer:
    """The trainer of the chunk this process saved last, with the checkpoint it saved."""

    run_id: uuid.UUID
    checkpoint_id: str
    trainer: Trainer


class WarmCache:
    """Keeps the trainer of the last saved chunk in memory, so that the run's next chunk, when this
    process gets it, goes on from it instead of loading the file it just wrote: no reload, and the
    races go on instead of restarting (a new track pool alone takes seconds on a CPU). It is taken
    only for the chunk that starts from exactly that checkpoint (so never after a commit that
    failed), and taken out when used, so a chunk that fails can never leave a half-changed one."""

    def __init__(self) -> None:
        self._warm: WarmTrainer | None = None

    def take(self, run_id: uuid.UUID, checkpoint: dict[str, Any]) -> Trainer | None:
        warm, self._warm = self._warm, None
        if warm is None:
            return None
        if warm.run_id != run_id or warm.checkpoint_id != checkpoint.get("checkpoint_id"):
            warm.trainer.close()
            return None
        return warm.trainer

    def keep(self, run_id: uuid.UUID, checkpoint_id: uuid.UUID, trainer: Trainer) -> None:
        if self._warm is not None and self._warm.trainer is not trainer:
            self._warm.trainer.close()
        self._warm = WarmTrainer(run_id, str(checkpoint_id), trainer)


def _stage(trainer: Trainer) -> TrainingStage:
    return TrainingStage(str(trainer.stage))


class TrainingHandler(JobHandler):
    kind = TRAINING.kind

    def __init__(self) -> None:
        self.warm = WarmCache()

    def run_chunk(self, work: ChunkWork) -> ChunkResult:
        started = time.monotonic()
        settings = get_settings()
        run_id = uuid.UUID(str(work.config["run_id"]))
        run = store.load_run(run_id)
        if run is None:
            raise PermanentJobError(f"training run {run_id} does not exist")
        chunk_seconds = seconds_allowed(run_id, settings)
        root = settings.training_checkpoints_path()
        clean_up(root, run_id, partials=True)
        trainer = self.warm.take(run_id, work.checkpoint) or self._trainer(
            run, work.checkpoint, root, settings
        )
        announce.status(run_id, JobStatus.RUNNING, trainer.iteration, trainer.global_step, _stage(trainer))
        pending = PendingChanges(run_id)
        out = ChunkOutput(
            run_id, trainer.iteration, trainer.global_step, _stage(trainer), trainer.elapsed_s, {}
        )
        owner = worker_name()

        def on_iteration(metrics: dict[str, Any]) -> None:
            values = storable(dict(metrics))
            if pending.just_applied:
                values["config_changes"] = pending.just_applied
                pending.just_applied = {}
            row = IterationRow(
                trainer.iteration, trainer.global_step, _stage(trainer), trainer.elapsed_s, values
            )
            out.rows.append(row)
            try:
                store.write_iteration(work.job_id, work.chunk, owner, run_id, row)
            except Exception as exc:  # `record` writes the rows again
                log.warning("training run %s: could not write iteration %d: %s", run_id, row.iteration, exc)
            announce.progress(run_id, row.iteration, row.global_step, row.stage, values)
            record_iteration(metrics, trainer.args.num_envs * trainer.args.num_steps)

        trainer.run(
            max_seconds=chunk_seconds,
            before_iteration=pending.before_iteration,
            on_iteration=on_iteration,
            should_stop=lambda: work.stop_requested or work.lease_lost,
        )
        from services.trainer.ppo import args_to_dict

        out.iteration, out.global_step, out.stage = trainer.iteration, trainer.global_step, _stage(trainer)
        out.elapsed_s, out.config = trainer.elapsed_s, args_to_dict(trainer.args)
        out.seen_version, out.applied = pending.seen_version, pending.applied
        checkpoint = dict(work.checkpoint)
        if out.rows and not work.lease_lost:
            out.checkpoint = self._save(trainer, root, run, out.rows[-1].metrics)
            evaluation = trainer.args.evaluation
            if not work.stop_requested and reference_eval.is_due(evaluation, work.chunk, trainer.finished):
                out.evaluation = evaluate_checkpoint(
                    run_id,
                    out.checkpoint,
                    evaluation,
                    deadline=started + settings.job_chunk_soft_time_limit_s * EVALUATION_DEADLINE_SHARE,
                    abandon=lambda: work.lease_lost or work.stop_requested,
                )
            if not (trainer.finished or work.stop_requested):
                self.warm.keep(run_id, out.checkpoint.id, trainer)
            checkpoint = {
                "path": out.checkpoint.path,
                "checkpoint_id": str(out.checkpoint.id),
                "iteration": trainer.iteration,
                "global_step": trainer.global_step,
            }
        progress = {
            "iteration": trainer.iteration,
            "global_step": trainer.global_step,
            "stage": str(out.stage),
            "elapsed_s": trainer.elapsed_s,
            "total_steps": trainer.args.total_steps,
            "time_budget_s": trainer.args.time_budget_s,
        }
        return ChunkResult(checkpoint=checkpoint, progress=progress, finished=trainer.finished, output=out)

    def record(self, session: Session, _work: ChunkWork, result: ChunkResult) -> None:
        output = result.output
        assert isinstance(output, ChunkOutput)
        store.record_chunk(session, output, get_settings().training_keep_checkpoints)

    def _trainer(self, run: RunConfig, checkpoint: dict[str, Any], root: Path, settings: Settings) -> Trainer:
        configure_torch(settings.training_torch_threads)
        from services.trainer.ppo import DeviceUnavailable, Trainer, args_from_dict

        try:
            saved = checkpoint.get("path")
            if saved:
                path = root / str(saved)
                if not path.is_file():
                    raise PermanentJobError(
                        f"the run's last checkpoint file {path} is missing "
                        "(is ARENA_TRAINING_CHECKPOINT_DIR on the volume it was written to?)"
                    )
                return Trainer.load(path)
            try:
                args = args_from_dict(run.config)
            except (TypeError, ValueError) as exc:
                raise PermanentJobError(f"the run's config does not fit this trainer: {exc}") from exc
            return Trainer(args)
        except DeviceUnavailable as exc:
            raise PermanentJobError(
                f"{exc}: resume the run where a worker has that device, or start a new run with "
                "device auto or cpu"
            ) from exc

    def _save(
        self, trainer: Trainer, root: Path, run: RunConfig, last_metrics: dict[str, Any]
    ) -> NewCheckpoint:
        run_id = run.id
        relative = checkpoints.relative_path(run_id, trainer.iteration)
        path = root / relative
        trainer.save(path)
        summary: dict[str, Any] = {"metrics": last_metrics, "league": storable(trainer.league.table())}
        source: str | None = None
        description = (
            f"Arena training run {run.name} ({run.id}), iteration {trainer.iteration}, "
            f"{trainer.global_step:,} steps, stage {trainer.stage}"
        )
        try:
            source = export_bot_source(trainer, description)
        except Exception as exc:  # the checkpoint stands; only its bot is missing
            log.warning("training run %s: export of iteration %d failed: %s", run_id, trainer.iteration, exc)
            summary["export_error"] = f"{type(exc).__name__}: {exc}"[:1000]
        return NewCheckpoint(
            race_replay=showcase_race(run_id, trainer.iteration, source),
            id=uuid.uuid4(),
            path=relative,
            iteration=trainer.iteration,
            global_step=trainer.global_step,
            stage=_stage(trainer),
            bot_source=source,
            bot_contract=EXPORT_CONTRACT if source is not None else None,
            summary=summary,
        )


def seconds_allowed(run_id: uuid.UUID, settings: Settings) -> float:
    """This chunk's training time: ARENA_TRAINING_CHUNK_SECONDS, or what is left of the owner's
    daily training time when that is less. With none left the run fails, saying so (a resume is
    refused until enough of the day's training time frees up)."""
    try:
        left = store.training_seconds_left(run_id, settings)
    except QuotaExceeded as exc:
        raise PermanentJobError(
            f"quota reached: {exc.usage}; the run stopped here: resume it in {exc.retry_after_s} s or later"
        ) from None
    return min(settings.training_chunk_seconds, left)


def showcase_race(run_id: uuid.UUID, iteration: int, source: str | None) -> bytes | None:
    """One race of the checkpoint's exported bot against the built-in runner, gzipped, for the
    run's page; on a new track each checkpoint. A failure costs only the race."""
    if source is None:
        return None
    from services.trainer.showcase import play_showcase
    from shared.games.replay import compress

    try:
        return compress(play_showcase(source, seed=iteration, opponent="runner"))
    except Exception as exc:
        log.warning("training run %s: showcase race of iteration %d failed: %s", run_id, iteration, exc)
        return None


def evaluate_checkpoint(
    run_id: uuid.UUID,
    checkpoint: NewCheckpoint,
    args: TrainingEvaluationConfig,
    *,
    deadline: float,
    abandon: Callable[[], bool],
) -> list[EvaluationRow]:
    """The checkpoint's exported bot against the built-ins (`reference_eval`), one row per
    opponent; none when it has no bot or the evaluation fails (logged: the run goes on)."""
    if checkpoint.bot_source is None:
        return []
    try:
        results = reference_eval.evaluate_source(
            checkpoint.bot_source, args, deadline=deadline, abandon=abandon
        )
    except Exception as exc:
        log.warning(
            "training run %s: evaluation of iteration %d failed: %s: %s",
            run_id,
            checkpoint.iteration,
            type(exc).__name__,
            exc,
        )
        return []
    rows = []
    for result in results:
        low, high = result.interval
        played_as = (
            {"max_iterations": args.search_iterations} if result.opponent == reference_eval.SEARCH else {}
        )
        rows.append(
            EvaluationRow(
                opponent=result.opponent,
                races=result.races,
                wins=result.wins,
                draws=result.draws,
                losses=result.losses,
                win_rate=result.win_rate,
                win_rate_low=low,
                win_rate_high=high,
                seconds=result.seconds,
                opponent_config=played_as,
            )
        )
    summary = ", ".join(f"{r.opponent} {r.wins}/{r.draws}/{r.losses}" for r in rows) or "no race played"
    log.info(
        "training run %s: iteration %d evaluated in %.1f s (W/D/L): %s",
        run_id,
        checkpoint.iteration,
        sum(r.seconds for r in rows),
        summary,
    )
    return rows


def clean_up(root: Path, run_id: uuid.UUID, *, partials: bool = False) -> None:
    """Delete the run's checkpoint files that committed rows no longer keep (never fails a chunk)."""
    try:
        referenced, committed = store.kept_files(run_id)
        checkpoints.delete_unreferenced(root, run_id, referenced, committed, partials=partials)
    except Exception as exc:
        log.warning("training run %s: checkpoint clean-up failed: %s", run_id, exc)


HANDLER = TrainingHandler()
