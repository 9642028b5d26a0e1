"""LLM calls as the engine makes them: recorded once per step key, reused when the step runs again,
and refused by the run's hard caps (money, tokens) before they are made.

`RecordedLlm.complete` first looks the key up in the run's call log: a step that ran before a crash
gets the recorded outcome back at no cost. Otherwise it asks the transport (the real `openai`
client against the run's endpoint, or the built-in operator in process), which checks the caps
with `RunBudget` before every attempt, and records the outcome with its tokens and cost in the
transaction that adds them to the run's books.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import asdict, replace
from typing import Any, Protocol

from services.evolver import metrics
from services.evolver.llm import (
    FailureKind,
    LlmOutcome,
    LlmRequest,
    OutcomeStatus,
    RejectedToolCall,
    ToolCall,
)
from services.evolver.store import llm_calls as llm_call_store
from shared.config import Settings
from shared.evolution.config import LimitsConfig
from shared.jsonsafe import safe_text, storable
from shared.states import LlmCallStatus

log = logging.getLogger("services.evolver")


class Transport(Protocol):
    def complete(self, request: LlmRequest) -> LlmOutcome: ...


class OwnerCaps:
    """What the run's owner may still spend: the daily LLM quota (`ARENA_QUOTA_LLM_USD_PER_DAY`, on
    every run's calls) and, on an operator's endpoint, the allowance on them
    (shared.evolution.allowance). Checked before every call that could cost something."""

    def __init__(self, owner_id: uuid.UUID, settings: Settings, *, operator: bool) -> None:
        self.owner_id = owner_id
        self.settings = settings
        self.operator = operator

    def check(self, projected_cost_usd: float) -> str | None:
        if projected_cost_usd <= 0:
            return None
        left = llm_call_store.llm_usd_left_today(self.owner_id, self.settings)
        if projected_cost_usd > left:
            return (
                f"the owner's LLM quota: ${max(left, 0.0):.4f} of ${self.settings.quota_llm_usd_per_day:.2f} "
                f"left within 24 h (ARENA_QUOTA_LLM_USD_PER_DAY), this call could cost up to "
                f"${projected_cost_usd:.4f}"
            )
        if not self.operator:
            return None
        books = llm_call_store.operator_spent(self.owner_id, self.settings)
        if books is None:
            return None
        spent, cap = books
        if spent + projected_cost_usd > cap:
            return (
                f"the owner's allowance on the platform's model endpoints: ${spent:.4f} spent within "
                f"{self.settings.llm_operator_window_days:g} days, this call could cost up to "
                f"${projected_cost_usd:.4f}, allowance ${cap:.2f}"
            )
        return None


class RunBudget:
    """The run's hard caps, checked against the recorded books before every attempt, and what its
    owner may still spend (`OwnerCaps`)."""

    def __init__(self, run_id: uuid.UUID, limits: LimitsConfig) -> None:
        self.run_id = run_id
        self.limits = limits
        self.owner_caps: OwnerCaps | None = None

    def check(self, _request: LlmRequest, projected_cost_usd: float, projected_tokens: int) -> str | None:
        spent, tokens = llm_call_store.spend(self.run_id)
        cap = self.limits.max_cost_usd
        if cap is not None and spent + projected_cost_usd > cap:
            return (
                f"money cap: ${spent:.4f} spent, this call could cost up to ${projected_cost_usd:.4f}, "
                f"cap ${cap:.2f}"
            )
        token_cap = self.limits.max_tokens
        if token_cap is not None and tokens + projected_tokens > token_cap:
            return f"token cap: {tokens} used, this call could use up to {projected_tokens}, cap {token_cap}"
        if self.owner_caps is not None:
            return self.owner_caps.check(projected_cost_usd)
        return None

    def record(self, _request: LlmRequest, _outcome: LlmOutcome) -> None:
        """Recording happens in RecordedLlm (with the step key), not here."""
        return None


MAX_STORED_ERROR_CHARS = 2_000


def sanitised(outcome: LlmOutcome) -> LlmOutcome:
    """The one path for what the evolver keeps of an LLM's answer: text, tool calls and their
    arguments, rejected calls and errors lose NUL (also `\\u0000` inside JSON arguments), lone
    surrogates and non-finite numbers (shared.jsonsafe), so the database takes whatever the model
    sent, and everything downstream (programs, events, the root's reasoning) reads clean text."""
    return replace(
        outcome,
        text=safe_text(outcome.text),
        tool_calls=[
            ToolCall(safe_text(call.id), safe_text(call.name), storable(call.arguments))
            for call in outcome.tool_calls
        ],
        rejected_tool_calls=[
            RejectedToolCall(
                safe_text(call.id), safe_text(call.name), safe_text(call.arguments), safe_text(call.reason)
            )
            for call in outcome.rejected_tool_calls
        ],
        error=None if outcome.error is None else safe_text(outcome.error, MAX_STORED_ERROR_CHARS),
        finish_reason=None if outcome.finish_reason is None else safe_text(outcome.finish_reason, 64),
        model=None if outcome.model is None else safe_text(outcome.model, 200),
    )


def _outcome_json(outcome: LlmOutcome) -> llm_call_store.StoredCall:
    return llm_call_store.StoredCall(
        key="",
        status=LlmCallStatus.OK if outcome.status == OutcomeStatus.OK else LlmCallStatus.FAILED,
        failure=None if outcome.failure is None else str(outcome.failure),
        answer=outcome.text,
        tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in outcome.tool_calls],
        rejected_tool_calls=[asdict(r) for r in outcome.rejected_tool_calls],
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        cost_usd=outcome.cost_usd,
        latency_ms=outcome.latency_ms,
        attempts=outcome.attempts,
        error=outcome.error,
        usage_estimated=outcome.usage_estimated,
    )


def _outcome(stored: llm_call_store.StoredCall) -> LlmOutcome:
    return LlmOutcome(
        status=OutcomeStatus.OK if stored.status == LlmCallStatus.OK else OutcomeStatus.FAILED,
        failure=FailureKind(stored.failure) if stored.failure else None,
        text=stored.answer or "",
        tool_calls=[ToolCall(str(c["id"]), str(c["name"]), dict(c["arguments"])) for c in stored.tool_calls],
        rejected_tool_calls=[RejectedToolCall(**r) for r in stored.rejected_tool_calls],
        prompt_tokens=stored.prompt_tokens,
        completion_tokens=stored.completion_tokens,
        cost_usd=stored.cost_usd,
        latency_ms=int(stored.latency_ms),
        attempts=stored.attempts,
        error=stored.error,
        usage_estimated=stored.usage_estimated,
    )


class RecordedLlm:
    """The engine's only way to call a model."""

    def __init__(self, run_id: uuid.UUID, transport: Transport) -> None:
        self.run_id = run_id
        self.transport = transport
        self.reused = 0
        """Calls answered from the log (a step run again): what a resumed run did not pay twice."""

    def complete(self, request: LlmRequest, generation: int) -> LlmOutcome:
        found = llm_call_store.find_call(self.run_id, request.key)
        if found is not None:
            self.reused += 1
            return _outcome(found)
        outcome = sanitised(self.transport.complete(request))
        metrics.record_llm_call(request.role, outcome)
        if outcome.failure == FailureKind.BUDGET:
            return outcome  # never made: nothing to record or pay
        recorded = self._record(request, generation, outcome)
        if not recorded:  # another process recorded this step meanwhile: theirs is the one that counts
            again = llm_call_store.find_call(self.run_id, request.key)
            if again is not None:
                return _outcome(again)
        if outcome.status != OutcomeStatus.OK:
            log.warning("run %s: LLM call %s failed: %s", self.run_id, request.key, outcome.error)
        return outcome

    def _record(self, request: LlmRequest, generation: int, outcome: LlmOutcome) -> bool:
        """Record the call with its cost, in one transaction. Everything in it went through
        `sanitised` and `storable`, so the database takes whatever the model sent: only a database
        out of reach leaves a call unrecorded (the chunk then fails and is retried)."""
        return llm_call_store.record_call(
            self.run_id,
            key=request.key,
            role=request.role,
            model=safe_text(request.model, 128),
            generation=generation,
            messages=_storable_messages(request.messages),
            call=_outcome_json(outcome),
        )


def _storable_messages(messages: list[dict[str, Any]]) -> list[Any]:
    stored = storable(messages)
    return stored if isinstance(stored, list) else []
