"""The run's LLM call log: a call recorded once per step key, its tokens and cost added to the run's
books in the same transaction; the spend that the run's hard caps and the owner's quotas are
checked against."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert

from shared import quotas
from shared.config import Settings
from shared.db.models import EvolutionLlmCall, EvolutionRun, User
from shared.db.session import session_scope
from shared.evolution.allowance import operator_allowance
from shared.states import LlmCallStatus, LlmRole, UserRole


@dataclass(frozen=True, slots=True)
class StoredCall:
    key: str
    status: LlmCallStatus
    failure: str | None
    answer: str | None
    tool_calls: list[dict[str, Any]]
    rejected_tool_calls: list[dict[str, Any]]
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_ms: float
    attempts: int
    error: str | None
    usage_estimated: bool


def _stored(row: EvolutionLlmCall) -> StoredCall:
    return StoredCall(
        row.key,
        row.status,
        row.failure,
        row.answer,
        list(row.tool_calls or []),
        list(row.rejected_tool_calls or []),
        row.prompt_tokens,
        row.completion_tokens,
        row.cost_usd,
        row.latency_ms,
        row.attempts,
        row.error,
        row.usage_estimated,
    )


def find_call(run_id: uuid.UUID, key: str) -> StoredCall | None:
    with session_scope() as session:
        row = session.scalars(
            select(EvolutionLlmCall).where(EvolutionLlmCall.run_id == run_id, EvolutionLlmCall.key == key)
        ).one_or_none()
        return None if row is None else _stored(row)


def record_call(
    run_id: uuid.UUID,
    *,
    key: str,
    role: LlmRole,
    model: str,
    generation: int,
    messages: list[dict[str, Any]],
    call: StoredCall,
) -> bool:
    """Record a call and add its cost and tokens to the run, in one transaction; False (and nothing
    added) when a call with this key was recorded already."""
    with session_scope() as session:
        inserted = session.execute(
            insert(EvolutionLlmCall)
            .values(
                id=uuid.uuid4(),
                run_id=run_id,
                key=key,
                role=role,
                model=model,
                generation=generation,
                status=call.status,
                failure=call.failure,
                messages=messages,
                answer=call.answer,
                tool_calls=call.tool_calls,
                rejected_tool_calls=call.rejected_tool_calls,
                prompt_tokens=call.prompt_tokens,
                completion_tokens=call.completion_tokens,
                usage_estimated=call.usage_estimated,
                cost_usd=call.cost_usd,
                latency_ms=call.latency_ms,
                attempts=call.attempts,
                error=call.error,
            )
            .on_conflict_do_nothing(constraint="uq_evolution_llm_calls_run_key")
            .returning(EvolutionLlmCall.id)
        ).scalar_one_or_none()
        if inserted is None:
            session.rollback()
            return False
        session.execute(
            update(EvolutionRun)
            .where(EvolutionRun.id == run_id)
            .values(
                spent_usd=EvolutionRun.spent_usd + call.cost_usd,
                tokens=EvolutionRun.tokens + call.prompt_tokens + call.completion_tokens,
                llm_calls=EvolutionRun.llm_calls + 1,
            )
        )
        session.commit()
        return True


def spend(run_id: uuid.UUID) -> tuple[float, int]:
    """(USD spent, tokens used) as recorded, the books the hard caps are checked against."""
    with session_scope() as session:
        row = session.execute(
            select(EvolutionRun.spent_usd, EvolutionRun.tokens).where(EvolutionRun.id == run_id)
        ).one()
        return float(row[0]), int(row[1])


def llm_usd_left_today(owner_id: uuid.UUID, settings: Settings) -> float:
    """What the owner's runs may still spend on LLM calls today (shared.quotas)."""
    with session_scope() as session:
        owner = session.get(User, owner_id)
        return math.inf if owner is None else quotas.llm_usd_left(session, settings, owner)


def operator_spent(owner_id: uuid.UUID, settings: Settings) -> tuple[float, float] | None:
    """(spent, cap) of the owner's allowance on the operator's endpoints; None for an admin."""
    with session_scope() as session:
        role = session.scalar(select(User.role).where(User.id == owner_id))
        if role == UserRole.ADMIN:
            return None
        allowance = operator_allowance(session, settings, owner_id)
        return allowance.spent_usd, allowance.cap_usd
