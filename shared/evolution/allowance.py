"""What a user's runs may still spend on the operator's model endpoints.

The operator's keys cost the operator money, so every user has an allowance on them
(`ARENA_LLM_OPERATOR_USD_PER_USER` over a rolling `ARENA_LLM_OPERATOR_WINDOW_DAYS`; admins have
none). It counts the recorded cost of every LLM call of the user's runs on an operator endpoint
(`llm.endpoint`; a run's endpoint never changes after it is created). The gateway refuses a new or
resumed run once it is used up, and the evolver worker checks it before every call, worst case
included, so a running run stops at the allowance rather than past it.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.config import Settings
from shared.db.models import EvolutionLlmCall, EvolutionRun, User
from shared.evolution.errors import LlmMoneyCapReached
from shared.states import UserRole


@dataclass(frozen=True, slots=True)
class Allowance:
    cap_usd: float
    spent_usd: float
    retry_after_s: float
    """When enough of the spending leaves the window for the user to be under the cap again (0
    while under it)."""

    @property
    def left_usd(self) -> float:
        return max(self.cap_usd - self.spent_usd, 0.0)


def operator_allowance(
    session: Session, settings: Settings, owner_id: uuid.UUID, *, now: datetime | None = None
) -> Allowance:
    """The user's spending on operator endpoints within the window, against the cap."""
    now = now or datetime.now(UTC)
    window = timedelta(days=settings.llm_operator_window_days)
    rows = session.execute(
        select(EvolutionLlmCall.created_at, EvolutionLlmCall.cost_usd)
        .join(EvolutionRun, EvolutionRun.id == EvolutionLlmCall.run_id)
        .where(
            EvolutionRun.owner_id == owner_id,
            EvolutionRun.config["llm"]["endpoint"].as_string().is_not(None),
            EvolutionLlmCall.created_at > now - window,
            EvolutionLlmCall.cost_usd > 0,
        )
        .order_by(EvolutionLlmCall.created_at)
    ).all()
    cap = settings.llm_operator_usd_per_user
    spent = math.fsum(float(cost) for _, cost in rows)
    retry_after = 0.0
    remaining = spent
    for created_at, cost in rows:
        if remaining < cap:
            break
        remaining -= float(cost)
        retry_after = max((created_at + window - now).total_seconds(), 1.0)
    return Allowance(cap_usd=cap, spent_usd=spent, retry_after_s=retry_after)


def require_operator_allowance(session: Session, settings: Settings, owner: User) -> None:
    """Raise LlmMoneyCapReached when `owner` (not an admin) has used up the allowance."""
    if owner.role == UserRole.ADMIN:
        return
    if settings.llm_operator_usd_per_user <= 0:
        raise LlmMoneyCapReached(
            "this platform's model endpoints are not open to users (ARENA_LLM_OPERATOR_USD_PER_USER is 0); "
            "run on your own endpoint and key (llm.base_url)",
            settings.llm_operator_window_days * 86_400,
        )
    allowance = operator_allowance(session, settings, owner.id)
    if allowance.spent_usd >= allowance.cap_usd:
        raise LlmMoneyCapReached(
            f"your runs have spent ${allowance.spent_usd:.4f} on this platform's model endpoints in the "
            f"last {settings.llm_operator_window_days:g} days, the allowance is "
            f"${allowance.cap_usd:.2f} (ARENA_LLM_OPERATOR_USD_PER_USER); try again in "
            f"{math.ceil(allowance.retry_after_s)} s, or run on your own endpoint and key (llm.base_url)",
            allowance.retry_after_s,
        )
