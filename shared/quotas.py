"""Per-user quotas on what costs the platform: long runs, training time, LLM money, bots and uploads.

| quota (setting)                  | counted from                                                   |
|----------------------------------|----------------------------------------------------------------|
| `quota_runs_per_hour`            | training and evolution runs created in the last hour, together |
| `quota_active_runs`              | training and evolution runs queued, running or stopping        |
| `quota_training_seconds_per_day` | `seconds` of each training iteration written in the last 24 h  |
| `quota_llm_usd_per_day`          | `cost_usd` of the evolution LLM calls made in the last 24 h    |
| `quota_bots_per_hour`            | bots registered (origin human) in the last hour                |
| `quota_uploads_per_hour`         | hosted versions uploaded or exported from training, last hour  |

Everything is counted from the rows themselves, in the transaction that writes the next one: a
check first locks the user's row (`FOR NO KEY UPDATE`), so two requests of one user, through any
gateway process, count one after the other and the second sees what the first committed. The lock
lasts until the commit that writes the new row (or the refused request's rollback), so no limit is
overshot. NO KEY: inserts that only reference the user (a worker's rows) are not held up by it.

Windows slide. A refusal's `retry_after_s` is when enough counted rows will have left the window
for the next request to pass, if nothing new is counted meanwhile. Admins are exempt. A refusal is
a `QuotaExceeded`: the gateway answers it with 429 and Retry-After (services/gateway/errors.py),
the trainer worker fails the run with its message (services/trainer/handler.py).
"""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, CompoundSelect, Select, and_, func, or_, select, union_all
from sqlalchemy.orm import Session

from shared.config import Settings
from shared.db.models import (
    Bot,
    BotVersion,
    EvolutionLlmCall,
    EvolutionRun,
    Job,
    TrainingMetric,
    TrainingRun,
    User,
)
from shared.states import BotKind, BotOrigin, JobStatus, UserRole

HOUR_S = 3600
DAY_S = 24 * HOUR_S
ACTIVE_RUNS_RETRY_S = 60
"""Retry-After when too many runs are active. No clock frees that slot (a run ends when its budget
is spent or it is stopped), so this is a polling interval, and the message says so."""
ACTIVE = (JobStatus.QUEUED, *JobStatus.holding_lease())
"""Job states that hold a slot: waiting for a worker, or on one (a stopping run still trains)."""
OWNED_RUNS = (TrainingRun, EvolutionRun)
"""Every kind of long run a user owns: the run quotas count them together."""


class RunKind(StrEnum):
    TRAINING = "training"
    EVOLUTION = "evolution"


def env_name(setting: str) -> str:
    """The environment variable that sets a Settings field."""
    return f"ARENA_{setting.upper()}"


class QuotaExceeded(Exception):
    """A request over one of the user's quotas: `message` names the quota and its setting;
    `retry_after_s` is when it passes again (whole seconds, at least 1)."""

    def __init__(self, setting: str, usage: str, retry_after_s: float, *, when: str | None = None) -> None:
        self.setting = setting
        self.retry_after_s = max(1, math.ceil(retry_after_s))
        self.usage = f"{usage} ({env_name(setting)})"
        self.message = f"quota reached: {self.usage}; {when or f'try again in {self.retry_after_s} s'}"
        super().__init__(self.message)


def exempt(user: User) -> bool:
    return user.role == UserRole.ADMIN


# ------------------------------------------------------------------------- what the callers ask


def check_new_run(session: Session, settings: Settings, user: User, kind: RunKind) -> None:
    """Before a run is created, in the session that creates it: runs per hour, runs at once, and
    the kind's daily allowance (training time, or LLM money)."""
    if exempt(user):
        return
    now = _lock(session, user)
    created = union_all(*(select(run.created_at).where(run.owner_id == user.id) for run in OWNED_RUNS))
    _check_count(
        session,
        created,
        now,
        settings.quota_runs_per_hour,
        "quota_runs_per_hour",
        "runs (training and evolution together) created",
    )
    _check_active(session, settings.quota_active_runs, user.id)
    _allowance_left(session, settings, user.id, kind, now)


def check_resume(session: Session, settings: Settings, user: User, kind: RunKind, status: JobStatus) -> None:
    """Before a run in `status` is resumed: a run at rest (stopped, failed) becomes active again,
    so runs at once and the kind's daily allowance apply; any other state passes (the resume then
    calls off a stop, or answers why there is nothing to resume)."""
    if exempt(user) or status not in JobStatus.resumable():
        return
    now = _lock(session, user)
    _check_active(session, settings.quota_active_runs, user.id)
    _allowance_left(session, settings, user.id, kind, now)


def check_new_bot(session: Session, settings: Settings, user: User) -> None:
    """Before a bot is registered (`POST /bots`, `POST /bots/hosted`), in the session that does it."""
    if exempt(user):
        return
    now = _lock(session, user)
    registered = select(Bot.created_at).where(Bot.owner_id == user.id, Bot.origin == BotOrigin.HUMAN)
    _check_count(
        session, registered, now, settings.quota_bots_per_hour, "quota_bots_per_hour", "bots registered"
    )


def check_new_version(session: Session, settings: Settings, user: User) -> None:
    """Before hosted code becomes a new version (an upload, a training export), in its session."""
    if exempt(user):
        return
    now = _lock(session, user)
    _check_count(
        session,
        select(BotVersion.created_at).join(Bot, Bot.id == BotVersion.bot_id).where(_uploads(user.id)),
        now,
        settings.quota_uploads_per_hour,
        "quota_uploads_per_hour",
        "hosted code uploads (new versions and training exports)",
    )


def training_seconds_left(session: Session, settings: Settings, owner: User) -> float:
    """The owner's training time left of the last 24 h's allowance (infinite for admins);
    QuotaExceeded when none is. The trainer worker asks before each chunk."""
    if exempt(owner):
        return math.inf
    return _allowance_left(session, settings, owner.id, RunKind.TRAINING, _now(session))


def llm_usd_left(session: Session, settings: Settings, owner: User) -> float:
    """What is left of the owner's LLM money over the last 24 h (infinite for admins; 0 or less
    when used up). The evolver worker asks before each call, so a running run stops at it too."""
    if exempt(owner):
        return math.inf
    rows = _llm_spend(owner.id, _now(session) - timedelta(seconds=DAY_S)).subquery()
    used = float(session.execute(select(func.coalesce(func.sum(rows.c[1]), 0.0))).scalar_one())
    return settings.quota_llm_usd_per_day - used


# ---------------------------------------------------------------------------- what is counted


def _uploads(owner_id: uuid.UUID) -> ColumnElement[bool]:
    """Versions a person wrote to a bot after registering it: uploads to their hosted bots (version
    1 is the registration, counted as a bot) and every version of a trainer bot (training exports).
    Evolver bots' versions are the evolver's, one per program: never counted."""
    return and_(
        Bot.owner_id == owner_id,
        Bot.kind == BotKind.HOSTED,
        or_(and_(Bot.origin == BotOrigin.HUMAN, BotVersion.number > 1), Bot.origin == BotOrigin.TRAINER),
    )


Spent = Select[tuple[datetime, Any]]
"""(when, amount) of each row that uses up a daily allowance."""


def _training_seconds(owner_id: uuid.UUID, since: datetime) -> Spent:
    """(written at, seconds) of each training iteration of the owner's runs since `since`. A run
    whose row has not changed since then wrote no iteration since then: skipped unread."""
    seconds = func.coalesce(TrainingMetric.metrics["seconds"].as_float(), 0.0)
    return (
        select(TrainingMetric.created_at, seconds)
        .join(TrainingRun, TrainingRun.id == TrainingMetric.run_id)
        .where(
            TrainingRun.owner_id == owner_id,
            TrainingRun.updated_at >= since,
            TrainingMetric.created_at >= since,
        )
    )


def _llm_spend(owner_id: uuid.UUID, since: datetime) -> Spent:
    """(made at, cost) of each LLM call of the owner's evolution runs since `since`."""
    return (
        select(EvolutionLlmCall.created_at, EvolutionLlmCall.cost_usd)
        .join(EvolutionRun, EvolutionRun.id == EvolutionLlmCall.run_id)
        .where(EvolutionRun.owner_id == owner_id, EvolutionLlmCall.created_at >= since)
    )


# ------------------------------------------------------------------------------- the checks


def _lock(session: Session, user: User) -> datetime:
    """Hold the user's row until this transaction ends; the database's clock once it is ours."""
    session.execute(select(User.id).where(User.id == user.id).with_for_update(key_share=True))
    return _now(session)


def _now(session: Session) -> datetime:
    """The database's clock (created_at columns are written by it)."""
    now: datetime = session.execute(select(func.clock_timestamp())).scalar_one()
    return now


def _check_count(
    session: Session,
    created: Select[tuple[datetime]] | CompoundSelect[tuple[datetime]],
    now: datetime,
    limit: int,
    setting: str,
    what: str,
) -> None:
    """`created`: the created_at of every row that counts; at most `limit` in the last hour."""
    rows = created.subquery()
    stamp = rows.c[0]
    recent = select(stamp.label("at")).where(stamp >= now - timedelta(seconds=HOUR_S)).subquery()
    count = session.execute(select(func.count()).select_from(recent)).scalar_one()
    if count < limit:
        return
    # The oldest rows leave the window first: once count - limit + 1 of them have, one more fits.
    freeing: datetime = session.execute(
        select(recent.c.at).order_by(recent.c.at).offset(count - limit).limit(1)
    ).scalar_one()
    raise QuotaExceeded(
        setting,
        f"{count} {what} in the last hour; at most {limit} per hour per user",
        (freeing + timedelta(seconds=HOUR_S) - now).total_seconds(),
    )


def _check_active(session: Session, limit: int, owner_id: uuid.UUID) -> None:
    active = 0
    for run in OWNED_RUNS:
        active += session.execute(
            select(func.count())
            .select_from(run)
            .join(Job, Job.id == run.job_id)
            .where(run.owner_id == owner_id, Job.status.in_(ACTIVE))
        ).scalar_one()
    if active < limit:
        return
    raise QuotaExceeded(
        "quota_active_runs",
        f"{active} of your runs are queued or running; at most {limit} runs (training and evolution "
        "together) at once per user",
        ACTIVE_RUNS_RETRY_S,
        when="stop one, or try again when one has ended",
    )


def _allowance_left(
    session: Session, settings: Settings, owner_id: uuid.UUID, kind: RunKind, now: datetime
) -> float:
    """What is left of the kind's allowance over the last 24 h; QuotaExceeded when nothing is."""
    since = now - timedelta(seconds=DAY_S)
    if kind == RunKind.TRAINING:
        spent, limit = _training_seconds(owner_id, since), settings.quota_training_seconds_per_day
        setting, unit, places = "quota_training_seconds_per_day", "s of training time", 0
    else:
        spent, limit = _llm_spend(owner_id, since), settings.quota_llm_usd_per_day
        setting, unit, places = "quota_llm_usd_per_day", "USD of LLM calls", 4
    rows = spent.subquery()
    at, amount = rows.c[0], rows.c[1]
    used = float(session.execute(select(func.coalesce(func.sum(amount), 0.0))).scalar_one())
    if used < limit:
        return limit - used
    # The oldest rows leave the window first: usage is under the limit once the rows up to the
    # first whose running total exceeds the excess have left.
    running = select(
        at.label("at"), func.sum(amount).over(order_by=at, rows=(None, 0)).label("total")
    ).subquery()
    freeing = session.execute(
        select(running.c.at).where(running.c.total > used - limit).order_by(running.c.at).limit(1)
    ).scalar_one_or_none()
    wait_s = DAY_S if freeing is None else (freeing + timedelta(seconds=DAY_S) - now).total_seconds()
    raise QuotaExceeded(
        setting,
        f"{used:.{places}f} {unit} in the last 24 h; at most {limit:g} {unit} per day per user",
        wait_s,
    )
