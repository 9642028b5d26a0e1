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
from dataclasses import asdict
from typing import Any, Protocol

from services.evolver import metrics, store
from services.evolver.llm import (
    FailureKind,
    LlmOutcome,
    LlmRequest,
    OutcomeStatus,
    RejectedToolCall,
    ToolCall,
)
from shared.evolution.config import LimitsConfig
from shared.states import LlmCallStatus

log = logging.getLogger("services.evolver")


class Transport(Protocol):
    def complete(self, request: LlmRequest) -> LlmOutcome: ...


class RunBudget:
    """The run's hard caps, checked against the recorded books before every attempt."""

    def __init__(self, run_id: uuid.UUID, limits: LimitsConfig) -> None:
        self.run_id = run_id
        self.limits = limits

    def check(self, request: LlmRequest, projected_cost_usd: float, projected_tokens: int) -> str | None:
        spent, tokens = store.spend(self.run_id)
        cap = self.limits.max_cost_usd
        if cap is not None and spent + projected_cost_usd > cap:
            return (
                f"money cap: ${spent:.4f} spent, this call could cost up to ${projected_cost_usd:.4f}, "
                f"cap ${cap:.2f}"
            )
        token_cap = self.limits.max_tokens
        if token_cap is not None and tokens + projected_tokens > token_cap:
            return f"token cap: {tokens} used, this call could use up to {projected_tokens}, cap {token_cap}"
        return None

    def record(self, request: LlmRequest, outcome: LlmOutcome) -> None:
        """Recording happens in RecordedLlm (with the step key), not here."""
        return None


def _outcome_json(outcome: LlmOutcome) -> store.StoredCall:
    return store.StoredCall(
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


def _outcome(stored: store.StoredCall) -> LlmOutcome:
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
        found = store.find_call(self.run_id, request.key)
        if found is not None:
            self.reused += 1
            return _outcome(found)
        outcome = self.transport.complete(request)
        metrics.record_llm_call(request.role, outcome)
        if outcome.failure == FailureKind.BUDGET:
            return outcome  # never made: nothing to record or pay
        stored = _outcome_json(outcome)
        recorded = store.record_call(
            self.run_id,
            key=request.key,
            role=request.role,
            model=request.model,
            generation=generation,
            messages=_storable_messages(request.messages),
            call=stored,
        )
        if not recorded:  # another process recorded this step meanwhile: theirs is the one that counts
            again = store.find_call(self.run_id, request.key)
            if again is not None:
                return _outcome(again)
        if outcome.status != OutcomeStatus.OK:
            log.warning("run %s: LLM call %s failed: %s", self.run_id, request.key, outcome.error)
        return outcome


def _storable_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(m) for m in messages]
