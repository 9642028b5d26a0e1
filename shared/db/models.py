"""The database of users, bots, versions, matches, results, ratings and replays.

The schema changes only through Alembic migrations (migrations/); a test checks that these models
and the migrations agree.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import Enum
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy import Enum as SqlEnum
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column, relationship

from shared.states import (
    BotKind,
    BotOrigin,
    BotStatus,
    EvolutionEventKind,
    HostedContract,
    JobStatus,
    LlmCallStatus,
    LlmRole,
    MatchKind,
    MatchStatus,
    ProgramOrigin,
    ProgramStatus,
    ReplayStorage,
    TrainingStage,
    UserRole,
)

__all__ = ["BotStatus"]  # re-exported: older imports take it from here

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {dict[str, Any]: JSONB, list[Any]: JSONB}


def state_column(enum: type[Enum], length: int = 16) -> SqlEnum:
    """A VARCHAR column that holds an enum's values (not its names) and hands back enum members.

    No database enum type and no CHECK constraint: adding a state is a code change plus, where old
    rows change meaning, a data migration, never an ALTER TYPE."""
    return SqlEnum(
        enum,
        native_enum=False,
        create_constraint=False,
        length=length,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )


def _uuid() -> uuid.UUID:
    return uuid.uuid4()


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class User(TimestampMixin, Base):
    __tablename__ = "users"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[UserRole] = mapped_column(state_column(UserRole), default=UserRole.USER)

    api_keys: Mapped[list[ApiKey]] = relationship(back_populates="user", cascade="all, delete-orphan")
    bots: Mapped[list[Bot]] = relationship(back_populates="owner")


class ApiKey(TimestampMixin, Base):
    """API keys are stored hashed; the plain key is shown once, when created."""

    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    prefix: Mapped[str] = mapped_column(String(16), index=True)
    """The first characters of the key, to find it without storing it."""
    key_hash: Mapped[str] = mapped_column(String(128), unique=True)
    name: Mapped[str] = mapped_column(String(64), default="default")
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    user: Mapped[User] = relationship(back_populates="api_keys")


class Bot(TimestampMixin, Base):
    __tablename__ = "bots"
    __table_args__ = (UniqueConstraint("game", "name", name="uq_bots_game_name"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    game: Mapped[str] = mapped_column(String(32), index=True)
    kind: Mapped[BotKind] = mapped_column(state_column(BotKind))
    origin: Mapped[BotOrigin] = mapped_column(state_column(BotOrigin), default=BotOrigin.HUMAN)
    endpoint: Mapped[str | None] = mapped_column(String(2048))
    secret_encrypted: Mapped[bytes] = mapped_column(LargeBinary)
    """The per-bot signing secret, Fernet-encrypted with a key derived from ARENA_SECRET_KEY."""
    previous_secret_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    """The secret before the last rotation (encrypted too): the runner still signs with it until
    `secret_rotated_at` + ARENA_SECRET_GRACE_S, so a bot's server can be updated without downtime."""
    secret_rotated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    status: Mapped[BotStatus] = mapped_column(state_column(BotStatus), default=BotStatus.ACTIVE, index=True)
    status_reason: Mapped[str | None] = mapped_column(Text)
    """Why the bot is suspended (shown to its owner only: it may name the endpoint)."""
    suspended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    health_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Consecutive failed pre-match health checks; reset by a passing check or a reactivation."""
    last_health_check_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_health_error: Mapped[str | None] = mapped_column(Text)
    """The last failed check's detail, for the owner; None after a passing check."""
    current_version_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("bot_versions.id", use_alter=True, ondelete="SET NULL")
    )
    last_match_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    owner: Mapped[User] = relationship(back_populates="bots")
    versions: Mapped[list[BotVersion]] = relationship(
        back_populates="bot", foreign_keys="BotVersion.bot_id", order_by="BotVersion.number"
    )
    current_version: Mapped[BotVersion | None] = relationship(foreign_keys=[current_version_id])


class BotVersion(TimestampMixin, Base):
    """An immutable version of a bot: hosted code, or a snapshot of an HTTP bot's registration."""

    __tablename__ = "bot_versions"
    __table_args__ = (UniqueConstraint("bot_id", "number", name="uq_bot_versions_bot_number"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    bot_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    source: Mapped[str | None] = mapped_column(Text)
    contract: Mapped[HostedContract | None] = mapped_column(state_column(HostedContract))
    """For hosted bots only."""
    source_sha256: Mapped[str | None] = mapped_column(String(64))
    notes: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """Free-form provenance, e.g. the evolver's run and parent, or the trainer's checkpoint."""

    bot: Mapped[Bot] = relationship(back_populates="versions", foreign_keys=[bot_id])


class Match(TimestampMixin, Base):
    __tablename__ = "matches"
    __table_args__ = (
        Index("ix_matches_status_heartbeat", "status", "heartbeat_at"),
        # Match lists are newest first (created_at DESC, id DESC: these indexes read backwards),
        # so a page reads its own rows, not the whole table.
        Index("ix_matches_created", "created_at", "id"),
        Index("ix_matches_game_created", "game", "created_at", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    game: Mapped[str] = mapped_column(String(32), index=True)
    kind: Mapped[MatchKind] = mapped_column(state_column(MatchKind), default=MatchKind.CHALLENGE)
    rated: Mapped[bool] = mapped_column(Boolean, default=True)
    status: Mapped[MatchStatus] = mapped_column(
        state_column(MatchStatus), default=MatchStatus.QUEUED, index=True
    )
    seed: Mapped[int] = mapped_column(BigInteger)
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    requested_by_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    evolution_run_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("evolution_runs.id", ondelete="SET NULL"), index=True
    )
    """The evolution run an evaluation match was played for: the match is as private as its run
    (its owner's and admins'; an evaluation match without a run, admins' only). Null for other kinds."""
    worker: Mapped[str | None] = mapped_column(String(255))
    queued_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    sent_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    """When the play message was last sent (at creation, or by the reaper): a match still queued long
    after that has lost its message, and the reaper sends it again (`lost_match_after_s`)."""
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    turns: Mapped[int | None] = mapped_column(Integer)
    end_reason: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)

    participants: Mapped[list[MatchParticipant]] = relationship(
        back_populates="match", order_by="MatchParticipant.slot", cascade="all, delete-orphan"
    )
    replay: Mapped[Replay | None] = relationship(back_populates="match", cascade="all, delete-orphan")


class MatchParticipant(Base):
    __tablename__ = "match_participants"
    __table_args__ = (UniqueConstraint("match_id", "slot", name="uq_match_participants_match_slot"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    match_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    slot: Mapped[int] = mapped_column(Integer)
    bot_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    bot_version_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("bot_versions.id", ondelete="SET NULL")
    )
    rank: Mapped[int | None] = mapped_column(Integer)
    score: Mapped[float | None] = mapped_column(Float)
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """Game metrics (kills, checkpoints, invalid_actions...)."""
    mu_before: Mapped[float | None] = mapped_column(Float)
    sigma_before: Mapped[float | None] = mapped_column(Float)
    mu_after: Mapped[float | None] = mapped_column(Float)
    sigma_after: Mapped[float | None] = mapped_column(Float)
    errors: Mapped[int] = mapped_column(Integer, default=0)
    timeouts: Mapped[int] = mapped_column(Integer, default=0)
    forfeited: Mapped[bool] = mapped_column(Boolean, default=False)
    latency_p50_ms: Mapped[float | None] = mapped_column(Float)
    latency_p99_ms: Mapped[float | None] = mapped_column(Float)
    error_samples: Mapped[list[Any]] = mapped_column(default=list)
    """A few of the bot's errors, for its owner to debug (never secrets)."""

    match: Mapped[Match] = relationship(back_populates="participants")
    bot: Mapped[Bot] = relationship()


class Rating(Base):
    """A bot's OpenSkill (Plackett-Luce) rating in its game; the leaderboard sorts by mu - 3 sigma."""

    __tablename__ = "ratings"

    bot_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), index=True)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    ordinal: Mapped[float] = mapped_column(Float, index=True)
    matches_played: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    bot: Mapped[Bot] = relationship()


class Replay(Base):
    """The index of a match's replay, gzip-compressed JSON (see shared.games.replay): how big it is
    and where its bytes live. Listings read the figures here without touching the bytes.

    New replays live in a replay store (shared/replay_store) under `key`, written before the row is
    committed; replays stored before that keep their bytes in `data` until
    `python -m shared.replay_store.migrate` moves them.
    """

    __tablename__ = "replays"
    __table_args__ = (CheckConstraint("data IS NOT NULL OR key IS NOT NULL", name="data_or_key"),)

    match_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    storage: Mapped[ReplayStorage] = mapped_column(
        state_column(ReplayStorage),
        default=ReplayStorage.DATABASE,
        server_default=ReplayStorage.DATABASE.value,
    )
    key: Mapped[str | None] = mapped_column(String(255))
    """The object's key in the `storage` store; None while the bytes are in `data`."""
    data: Mapped[bytes | None] = mapped_column(LargeBinary)
    """The bytes of a replay stored in the database (`storage` = database) only."""
    size_bytes: Mapped[int] = mapped_column(Integer)
    frames: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    match: Mapped[Match] = relationship(back_populates="replay")


class Job(TimestampMixin, Base):
    """A long job (a training or evolution run) worked through in bounded chunks (shared.jobs).

    The row is the whole truth: which chunk runs next, the checkpoint to run it from, who holds the
    lease, and which task on which queue runs a chunk, so the reaper can resend a chunk without
    knowing the service. Large checkpoints live elsewhere (files); `checkpoint` points to them.
    """

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_status_heartbeat", "status", "heartbeat_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    kind: Mapped[str] = mapped_column(String(64), index=True)
    """Which handler runs the chunks (each service names its own kinds)."""
    status: Mapped[JobStatus] = mapped_column(state_column(JobStatus), default=JobStatus.QUEUED, index=True)
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    checkpoint: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """Small: what the next chunk starts from, or where that lives."""
    chunk: Mapped[int] = mapped_column(Integer, default=0)
    """The next chunk to run (the running one while RUNNING); chunks before it are committed."""
    progress: Mapped[dict[str, Any]] = mapped_column(default=dict)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    """Claims of the current chunk; reset when a chunk commits or the job is resumed."""
    lease_owner: Mapped[str | None] = mapped_column(String(255))
    lease_token: Mapped[uuid.UUID | None] = mapped_column()
    """New at every claim; only the holder of the current token may heartbeat or commit."""
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    task_name: Mapped[str] = mapped_column(String(255))
    queue: Mapped[str] = mapped_column(String(64))
    error: Mapped[str | None] = mapped_column(Text)
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When the current chunk's message was last sent: the reaper resends one that seems lost."""
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class OwnedRunMixin(TimestampMixin):
    """What every kind of owned run (training, evolution) has: an owner, a game, a name, and its long
    job (shared.jobs, 1:1) whose status is the run's. shared.jobs.runs finds, lists, stops and
    resumes any such row; each kind adds its own columns (its hosted bot's among them)."""

    # sort_order keeps each table's columns in the order its migrations created them.
    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid, sort_order=-5)
    job_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("jobs.id", ondelete="CASCADE"), unique=True, sort_order=-4
    )
    owner_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True, sort_order=-3
    )
    game: Mapped[str] = mapped_column(String(32), sort_order=-2)
    name: Mapped[str] = mapped_column(String(64), sort_order=-1)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    @declared_attr
    def job(cls) -> Mapped[Job]:
        return relationship()


class TrainingRun(OwnedRunMixin, Base):
    """A training run of the trainer service: its config and live counters; its status, lease and
    chunk are those of its job row (1:1). See docs/trainer-service.md."""

    __tablename__ = "training_runs"

    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """The trainer's Args as a dict, with the config changes the last checkpoint applied."""
    pending_changes: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """Config changes asked while the run trains, not yet in a committed checkpoint; the worker
    applies them at its next iteration boundary."""
    changes_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Bumped by every change asked: a chunk clears only the changes it saw."""
    stage: Mapped[TrainingStage] = mapped_column(state_column(TrainingStage), default=TrainingStage.SOLO)
    iteration: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """The last iteration trained (live: ahead of the last checkpoint while a chunk runs)."""
    global_step: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    elapsed_s: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    latest_checkpoint_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("training_checkpoints.id", use_alter=True, ondelete="SET NULL")
    )
    bot_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("bots.id", ondelete="SET NULL"))
    """The hosted bot this run's exports become versions of (created by the first export)."""


class TrainingMetric(Base):
    """One iteration's metrics (the trainer's metrics dict, made storable)."""

    __tablename__ = "training_metrics"

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("training_runs.id", ondelete="CASCADE"), primary_key=True
    )
    iteration: Mapped[int] = mapped_column(Integer, primary_key=True)
    global_step: Mapped[int] = mapped_column(BigInteger)
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class TrainingCheckpoint(TimestampMixin, Base):
    """A committed checkpoint: the state file on the trainer's volume, and the policy exported as a
    stdlib-only hosted bot, so that the gateway can register it without torch."""

    __tablename__ = "training_checkpoints"
    __table_args__ = (UniqueConstraint("run_id", "iteration", name="uq_training_checkpoints_run_iteration"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("training_runs.id", ondelete="CASCADE"), index=True)
    iteration: Mapped[int] = mapped_column(Integer)
    global_step: Mapped[int] = mapped_column(BigInteger)
    stage: Mapped[TrainingStage] = mapped_column(state_column(TrainingStage))
    path: Mapped[str] = mapped_column(String(1024))
    """Relative to ARENA_TRAINING_CHECKPOINT_DIR."""
    bot_source: Mapped[str | None] = mapped_column(Text)
    """The exported bot; None when the export failed (`summary.export_error` says why)."""
    bot_contract: Mapped[HostedContract | None] = mapped_column(state_column(HostedContract))
    summary: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """The last iteration's metrics and the league table at this checkpoint."""
    exported_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """Last registered as a bot version: its file is never pruned."""
    pruned_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When the file left the retention window (the row and its bot source stay)."""
    race_replay: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    """A showcase race of this checkpoint's bot against the built-in runner, as a gzipped replay
    (the run's page plays the latest); None when it could not be played."""


class TrainingEvaluation(Base):
    """One opponent's races in the evaluation of a checkpoint's exported bot in the reference
    engine (services/trainer/reference_eval.py): the run page's evaluation table."""

    __tablename__ = "training_evaluations"

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("training_runs.id", ondelete="CASCADE"), primary_key=True
    )
    iteration: Mapped[int] = mapped_column(Integer, primary_key=True)
    """The evaluated checkpoint's iteration."""
    opponent: Mapped[str] = mapped_column(String(32), primary_key=True)
    """A built-in bot spec: builtin:runner, builtin:blocker or builtin:search."""
    global_step: Mapped[int] = mapped_column(BigInteger)
    stage: Mapped[TrainingStage] = mapped_column(state_column(TrainingStage))
    races: Mapped[int] = mapped_column(Integer)
    wins: Mapped[int] = mapped_column(Integer)
    draws: Mapped[int] = mapped_column(Integer)
    losses: Mapped[int] = mapped_column(Integer)
    win_rate: Mapped[float] = mapped_column(Float)
    """wins / races (a draw is not a win)."""
    win_rate_low: Mapped[float] = mapped_column(Float)
    win_rate_high: Mapped[float] = mapped_column(Float)
    """Wilson's 95% interval of the win rate."""
    seconds: Mapped[float] = mapped_column(Float)
    """Wall time of these races on the trainer worker."""
    opponent_config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """How the opponent played, where it has settings (builtin:search: `max_iterations`)."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class EvolutionRun(OwnedRunMixin, Base):
    """An evolution run of the evolver service: its config, live counters and spend; its status,
    lease and chunk are those of its job row (1:1). See docs/evolver.md."""

    __tablename__ = "evolution_runs"

    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """shared.evolution.EvolutionConfig as JSON (never the API key)."""
    parameters: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """The parameters the root may change (contract.MUTABLE_PARAMETERS), as they stand now."""
    generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    best_program_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("evolution_programs.id", use_alter=True, ondelete="SET NULL")
    )
    best_fitness: Mapped[float | None] = mapped_column(Float)
    spent_usd: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    llm_calls: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    elapsed_s: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    """Wall time spent in chunks (the wall-time limit counts this)."""
    termination_reason: Mapped[str | None] = mapped_column(Text)
    islands: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """Island state: {"migrants": {"<island>": ["<program id>", ...]}}."""
    api_key_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary)
    """The run's LLM key when one was saved with it, encrypted like bot secrets."""
    candidate_bot_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("bots.id", ondelete="SET NULL"))
    """An inactive hosted bot whose versions are the candidates its tournament matches pin."""
    bot_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("bots.id", ondelete="SET NULL"))
    """The hosted bot promoted programs become versions of (on the ladder)."""


class EvolutionProgram(Base):
    """A program of an evolution run: its code, lineage and evaluation."""

    __tablename__ = "evolution_programs"
    __table_args__ = (
        UniqueConstraint("run_id", "seq", name="uq_evolution_programs_run_seq"),
        UniqueConstraint("run_id", "code_hash", name="uq_evolution_programs_run_code_hash"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("evolution_runs.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    """Its number in the run; models call it "p<seq>"."""
    generation: Mapped[int] = mapped_column(Integer)
    island: Mapped[int] = mapped_column(Integer, default=0)
    parent_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("evolution_programs.id", ondelete="SET NULL")
    )
    inspiration_ids: Mapped[list[Any]] = mapped_column(default=list)
    origin: Mapped[ProgramOrigin] = mapped_column(state_column(ProgramOrigin))
    status: Mapped[ProgramStatus] = mapped_column(state_column(ProgramStatus), index=True)
    code: Mapped[str] = mapped_column(Text)
    code_hash: Mapped[str] = mapped_column(String(64))
    """Of the normalised code: identical programs are never stored (or evaluated) twice."""
    diff: Mapped[str | None] = mapped_column(Text)
    """Unified diff against the parent."""
    focus: Mapped[str | None] = mapped_column(Text)
    """What the root asked of the child."""
    explanation: Mapped[str | None] = mapped_column(Text)
    """What the child said it changed."""
    stage: Mapped[str | None] = mapped_column(String(16))
    """The evaluation stage it reached (services.evolver.evaluation.EvalStage)."""
    fitness: Mapped[float | None] = mapped_column(Float)
    nash_fitness: Mapped[float | None] = mapped_column(Float)
    metrics: Mapped[dict[str, Any]] = mapped_column(default=dict)
    descriptors: Mapped[dict[str, Any]] = mapped_column(default=dict)
    cell_x: Mapped[int | None] = mapped_column(Integer)
    cell_y: Mapped[int | None] = mapped_column(Integer)
    feedback: Mapped[dict[str, Any]] = mapped_column(default=dict)
    error: Mapped[str | None] = mapped_column(Text)
    tournament_matches: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """Spec key -> match id of its tournament matches, written before they are queued, so a
    resumed evaluation waits for them instead of queueing them again."""
    version_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("bot_versions.id", ondelete="SET NULL"))
    """Its version of the run's candidate bot (what tournament matches pin)."""
    promoted_version_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("bot_versions.id", ondelete="SET NULL")
    )
    created_key: Mapped[str] = mapped_column(String(128))
    """The engine step that made it: a step run again finds it instead of making another."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    evaluated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class EvolutionGeneration(Base):
    """A generation: when it ran, its statistics and the root's selection that closed it."""

    __tablename__ = "evolution_generations"

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("evolution_runs.id", ondelete="CASCADE"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    selected_ids: Mapped[list[Any]] = mapped_column(default=list)
    """Program ids (uuid strings) the root selected as the next generation's parents."""
    reasoning: Mapped[str | None] = mapped_column(Text)
    stats: Mapped[dict[str, Any]] = mapped_column(default=dict)
    """Best and median fitness overall and per island, counts, when it closed."""


class EvolutionLlmCall(Base):
    """One LLM call of a run (all its attempts): prompt, answer, tokens, latency, cost. Keyed by the
    engine step that made it, so a step run again after a crash reuses it instead of paying twice."""

    __tablename__ = "evolution_llm_calls"
    __table_args__ = (UniqueConstraint("run_id", "key", name="uq_evolution_llm_calls_run_key"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=_uuid)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("evolution_runs.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(128))
    role: Mapped[LlmRole] = mapped_column(state_column(LlmRole))
    model: Mapped[str] = mapped_column(String(128))
    generation: Mapped[int] = mapped_column(Integer)
    status: Mapped[LlmCallStatus] = mapped_column(state_column(LlmCallStatus))
    failure: Mapped[str | None] = mapped_column(String(32))
    messages: Mapped[list[Any]] = mapped_column(default=list)
    answer: Mapped[str | None] = mapped_column(Text)
    tool_calls: Mapped[list[Any]] = mapped_column(default=list)
    rejected_tool_calls: Mapped[list[Any]] = mapped_column(default=list)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    usage_estimated: Mapped[bool] = mapped_column(Boolean, default=False)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class EvolutionEvent(Base):
    """The evolution log and the root's decision log, one row per event, written once per step key."""

    __tablename__ = "evolution_events"
    __table_args__ = (UniqueConstraint("run_id", "key", name="uq_evolution_events_run_key"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    run_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("evolution_runs.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(128))
    generation: Mapped[int] = mapped_column(Integer)
    kind: Mapped[EvolutionEventKind] = mapped_column(state_column(EvolutionEventKind, length=32))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
