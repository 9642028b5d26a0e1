"""Prometheus metrics of the evolver, served by the worker's pool process on
ARENA_EVOLVER_METRICS_PORT (services/evolver/worker.py).

Recorded where the engine does the work, once per thing done by this process: an LLM call made
(services/evolver/llm/calls.py; a call answered from the run's log after a restart cost nothing
and is not counted again), a candidate program evaluated or rejected (services/evolver/engine/),
a generation closed. Labels are bounded: role, status, token kind, failure kind, evaluation stage,
game; never a run, program or model name. Every label combination is created at import, so each
series exists (at 0) before its first event and rate() sees the first one.

The spend counter is what this process paid; the platform's total per day, which the
LlmSpendOverBudget alert watches, comes from the database through the gateway
(`arena_evolution_spent_usd`), so it is exact however many evolver processes run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import Counter, Histogram

from services.evolver.evaluation.cascade import EvalStage
from services.evolver.llm import FailureKind, LlmOutcome, OutcomeStatus
from shared.games.registry import game_names
from shared.states import LlmRole, ProgramStatus

if TYPE_CHECKING:
    from shared.db.models import EvolutionGeneration


class Failure:
    """Failure kinds besides the LLM's (whose kinds are `llm_<FailureKind>`)."""

    PROGRAM_REJECTED = "program_rejected"
    """A child's program failed the static gate, or the child gave no usable program."""
    EVALUATION_ERROR = "evaluation_error"
    """The evaluation itself raised (sandbox, matches): the chunk fails and is retried."""


def llm_failure(kind: FailureKind) -> str:
    return f"llm_{kind}"


def evaluation_failure(stage: str) -> str:
    """A program that failed its evaluation at `stage` (gate or smoke: it did not run properly)."""
    return f"evaluation_{stage}"


FAILURE_KINDS = (
    *(llm_failure(kind) for kind in FailureKind),
    Failure.PROGRAM_REJECTED,
    evaluation_failure(EvalStage.GATE),
    evaluation_failure(EvalStage.SMOKE),
    Failure.EVALUATION_ERROR,
)
TOKEN_KINDS = ("prompt", "completion")
EVALUATION_STATUSES = (ProgramStatus.EVALUATED, ProgramStatus.FAILED)

LLM_CALLS = Counter(
    "arena_evolver_llm_calls",
    "LLM calls made (all attempts of one call count once), by role and status",
    ["role", "status"],
)
LLM_RETRIES = Counter(
    "arena_evolver_llm_retries",
    "Attempts beyond the first of LLM calls (rate limits, errors), by role",
    ["role"],
)
LLM_TOKENS = Counter(
    "arena_evolver_llm_tokens", "LLM tokens used, by role and kind (prompt, completion)", ["role", "kind"]
)
LLM_COST = Counter("arena_evolver_llm_cost_usd", "LLM spend in US dollars by this worker, by role", ["role"])
LLM_LATENCY = Histogram(
    "arena_evolver_llm_latency_seconds",
    "Wall-clock time of one LLM call (all its attempts), by role",
    ["role"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300),
)
FAILURES = Counter(
    "arena_evolver_failures",
    "Things that went wrong, by kind: llm_<kind> (an LLM call failed or was refused by the run's "
    "budget), program_rejected, evaluation_gate / evaluation_smoke (a candidate that did not run "
    "properly), evaluation_error (the evaluation itself failed)",
    ["kind"],
)
CANDIDATES = Counter(
    "arena_evolver_candidates_evaluated",
    "Candidate programs evaluated, by game, result (evaluated, failed) and the cascade stage reached",
    ["game", "status", "stage"],
)
EVALUATION_SECONDS = Histogram(
    "arena_evolver_evaluation_seconds",
    "Wall-clock time of one candidate's evaluation cascade, by game",
    ["game"],
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600),
)
GENERATION_SECONDS = Histogram(
    "arena_evolver_generation_duration_seconds",
    "Time from a generation's start to its close (across chunks and restarts), by game",
    ["game"],
    buckets=(10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400),
)


def _initialise() -> None:
    for role in LlmRole:
        LLM_RETRIES.labels(role)
        LLM_COST.labels(role)
        LLM_LATENCY.labels(role)
        for outcome in OutcomeStatus:
            LLM_CALLS.labels(role, outcome)
        for kind in TOKEN_KINDS:
            LLM_TOKENS.labels(role, kind)
    for failure in FAILURE_KINDS:
        FAILURES.labels(failure)
    for game in game_names():
        EVALUATION_SECONDS.labels(game)
        GENERATION_SECONDS.labels(game)
        for evaluated in EVALUATION_STATUSES:
            for stage in EvalStage:
                CANDIDATES.labels(game, evaluated, stage)


_initialise()


def record_llm_call(role: LlmRole, outcome: LlmOutcome) -> None:
    """A call this process made (not one answered from the run's log)."""
    if outcome.failure == FailureKind.BUDGET:  # refused before it was made: nothing spent
        FAILURES.labels(llm_failure(FailureKind.BUDGET)).inc()
        return
    LLM_CALLS.labels(role, outcome.status).inc()
    LLM_RETRIES.labels(role).inc(max(0, outcome.attempts - 1))
    LLM_TOKENS.labels(role, "prompt").inc(max(0, outcome.prompt_tokens))
    LLM_TOKENS.labels(role, "completion").inc(max(0, outcome.completion_tokens))
    LLM_COST.labels(role).inc(max(0.0, outcome.cost_usd))
    LLM_LATENCY.labels(role).observe(max(0, outcome.latency_ms) / 1000)
    if outcome.failure is not None:
        FAILURES.labels(llm_failure(outcome.failure)).inc()


def record_evaluation(game: str, status: ProgramStatus, stage: str, seconds: float | None) -> None:
    """A candidate's evaluation ended (`status` evaluated or failed, at `stage`)."""
    CANDIDATES.labels(game, status, stage).inc()
    if seconds is not None:
        EVALUATION_SECONDS.labels(game).observe(seconds)
    if status == ProgramStatus.FAILED:
        FAILURES.labels(evaluation_failure(stage)).inc()


def record_failure(kind: str) -> None:
    FAILURES.labels(kind).inc()


def record_generation(game: str, generation: EvolutionGeneration | None) -> None:
    """A generation this process closed, timed from its row (it may have started in another)."""
    if generation is None or generation.closed_at is None:
        return
    GENERATION_SECONDS.labels(game).observe(
        max(0.0, (generation.closed_at - generation.started_at).total_seconds())
    )
