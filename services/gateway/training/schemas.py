"""What the training API accepts and returns. The run config's models (`TrainingConfig` and the
models nested in it, `ConfigChange`) live in shared.training.config: they mirror the trainer's Args,
which the gateway cannot import (no torch here)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from services.gateway.bots.schemas import BotOut, VersionOut
from services.gateway.users.schemas import NAME_PATTERN
from shared.states import HostedContract, JobStatus, TrainingStage
from shared.training.config import DEVICE_PATTERN, MAX_SECONDS, MAX_TOTAL_STEPS, ConfigChange, TrainingConfig

__all__ = ["ConfigChange", "TrainingConfig"]

METRICS_PAGE_MAX = 5000
EVALUATIONS_SHOWN = 50
"""Evaluations a run's detail lists (newest first): at the default of one every 5 chunks of 2
minutes, the last 8 hours or so."""


class Budget(BaseModel):
    """When the run is done: after `steps` environment steps, after `seconds` of training (over all
    chunks and resumes), or whichever comes first when both are given."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    steps: int | None = Field(default=None, ge=1, le=MAX_TOTAL_STEPS, examples=[2_000_000])
    seconds: float | None = Field(default=None, gt=0, le=MAX_SECONDS, examples=[3600])

    @model_validator(mode="after")
    def _something(self) -> Budget:
        if self.steps is None and self.seconds is None:
            raise PydanticCustomError("empty_budget", "give steps, seconds or both")
        return self


class TrainingRunCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN, examples=["first-racer"])
    game: Literal["podracing"] = Field(default="podracing", description="the trainer trains podracing bots")
    config: TrainingConfig = Field(
        default_factory=TrainingConfig,
        description="the trainer's Args: any field, the rest take their defaults",
        examples=[{"num_envs": 256, "learning_rate": 0.0003, "rewards": {"win": 20}}],
    )
    budget: Budget | None = Field(
        default=None, description="sets config.total_steps and config.time_budget_s"
    )
    device: str | None = Field(
        default=None,
        pattern=DEVICE_PATTERN,
        description="auto (CUDA when the worker has it), cpu, cuda or cuda:N; sets config.device",
    )

    @model_validator(mode="after")
    def _said_once(self) -> TrainingRunCreate:
        given = self.config.model_fields_set
        pairs = [
            ("budget.steps", "total_steps", self.budget.steps if self.budget else None),
            ("budget.seconds", "time_budget_s", self.budget.seconds if self.budget else None),
            ("device", "device", self.device),
        ]
        for outer, inner, value in pairs:
            if value is not None and inner in given and getattr(self.config, inner) != value:
                raise PydanticCustomError(
                    "conflicting_fields",
                    "{outer} and config.{inner} disagree: give it once",
                    {"outer": outer, "inner": inner},
                )
        return self

    def resolved_config(self) -> TrainingConfig:
        """The config with the budget and device folded in."""
        update: dict[str, Any] = {}
        if self.budget is not None and self.budget.steps is not None:
            update["total_steps"] = self.budget.steps
        if self.budget is not None and self.budget.seconds is not None:
            update["time_budget_s"] = self.budget.seconds
        if self.device is not None:
            update["device"] = self.device
        return self.config.model_copy(update=update)


class ExportRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checkpoint_id: uuid.UUID | None = Field(default=None, description="default: the run's latest checkpoint")
    bot_name: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        pattern=NAME_PATTERN,
        description="the name of the bot the run's first export creates (default: the run's name and "
        "id); later exports add versions to that bot",
    )


class LeagueEntry(BaseModel):
    name: str = Field(description="`latest` is the learner; the others are frozen snapshots")
    iteration: int | None
    mu: float | None
    sigma: float | None
    ordinal: float | None = Field(description="mu - 3 sigma")
    races: int


class MetricPoint(BaseModel):
    iteration: int
    global_step: int
    metrics: dict[str, Any] = Field(
        description="the iteration's metrics: losses, entropy, approx_kl, win rates per opponent kind, "
        "sps, learning_rate, ent_coef, stage, ...; `config_changes` where changes took effect"
    )
    created_at: datetime


class MetricsPage(BaseModel):
    run_id: uuid.UUID
    items: list[MetricPoint]
    next_after: int | None = Field(description="pass as `after` for the next page; null: no more now")


class CheckpointOut(BaseModel):
    id: uuid.UUID
    iteration: int
    global_step: int
    stage: TrainingStage
    created_at: datetime
    exportable: bool = Field(description="the policy was exported as a bot and can be registered")
    bot_contract: HostedContract | None
    export_error: str | None
    exported_at: datetime | None = Field(description="last registered as a bot version")
    file_kept: bool = Field(description="the checkpoint file is still on the trainer's volume")
    metrics: dict[str, Any] = Field(description="the metrics of the checkpoint's last iteration")


class EvaluationResult(BaseModel):
    """One opponent's races in an evaluation."""

    opponent: str = Field(examples=["builtin:runner"], description="a built-in bot")
    races: int
    wins: int
    draws: int
    losses: int
    win_rate: float = Field(description="wins / races: a draw is not a win")
    interval: tuple[float, float] = Field(description="Wilson's 95% interval of the win rate")
    opponent_config: dict[str, Any] = Field(
        description="how the opponent played, where it has settings (builtin:search: `max_iterations`, "
        "the plans it scores per decision)"
    )
    seconds: float = Field(description="wall time of these races on the trainer worker")


class EvaluationOut(BaseModel):
    """A checkpoint's exported bot racing the built-ins in the reference engine, on the same
    tracks at every evaluation, each track from both seats (`config.evaluation`)."""

    iteration: int = Field(description="the evaluated checkpoint's iteration")
    global_step: int
    stage: TrainingStage = Field(description="the stage the checkpoint was in")
    created_at: datetime
    results: list[EvaluationResult] = Field(description="per opponent: runner, blocker, search")


class TrainingRunOut(BaseModel):
    id: uuid.UUID
    name: str
    game: str
    owner_id: uuid.UUID
    status: JobStatus
    error: str | None = Field(description="why the run failed, when it did")
    stage: TrainingStage
    iteration: int = Field(description="iterations trained (while running: ahead of the last checkpoint)")
    global_step: int = Field(description="environment steps trained")
    elapsed_s: float = Field(description="seconds of training over all chunks")
    total_steps: int
    time_budget_s: float | None
    device: str
    progress: float = Field(description="share of the budget spent, 0 to 1")
    checkpoint_iteration: int | None = Field(description="iteration of the latest checkpoint")
    changes_version: int
    bot_id: uuid.UUID | None = Field(description="the hosted bot the run's exports are versions of")
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class TrainingRunDetail(TrainingRunOut):
    config: dict[str, Any] = Field(description="the trainer's Args, with the changes applied so far")
    pending_changes: dict[str, Any] = Field(
        description="config changes asked and not yet in a checkpoint (applied at the next iteration)"
    )
    latest_metrics: MetricPoint | None
    latest_checkpoint: CheckpointOut | None
    league: list[LeagueEntry] = Field(description="the league at the latest checkpoint, best first")
    evaluations: list[EvaluationOut] = Field(
        description=f"the last {EVALUATIONS_SHOWN} evaluations against the built-ins, newest first "
        "(`config.evaluation` says how often and how many races)"
    )


class ExportOut(BaseModel):
    bot: BotOut
    version: VersionOut
    checkpoint_id: uuid.UUID
    bot_created: bool = Field(description="this export created the bot (the run's first export)")
