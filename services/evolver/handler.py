"""The `evolution` job kind: an evolution run worked in chunks (shared.jobs, docs/long-jobs.md).

Each chunk loads the run, rebuilds the engine from the checkpoint (the root's conversation and
counters), and runs root turns for up to the run's `chunk_seconds`, stopping early at a stop or at
a generation boundary. Everything a turn produces is already in the database when the chunk
commits (services/evolver/store/); the checkpoint says which turn comes next. A chunk run again
after a crash replays its turns from the checkpoint and finds every LLM call, program and
evaluation it made before, so nothing is paid or stored twice.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from services.evolver.engine.loop import Engine
from services.evolver.engine.state import EngineState
from services.evolver.llm.calls import OwnerCaps, RecordedLlm, RunBudget, Transport
from services.evolver.store import runs as run_store
from shared.config import Settings, get_settings, llm_api_key
from shared.evolution import EVOLUTION, EvolutionError
from shared.evolution.endpoint import connect_llm_endpoint, operator_endpoint, pinned_http_client
from shared.jobs import ChunkResult, ChunkWork, JobHandler, PermanentJobError

log = logging.getLogger("services.evolver")


def make_transport(ctx: run_store.RunContext, settings: Settings, budget: RunBudget) -> Transport:
    """The run's LLM source, with its own key and nobody else's: the built-in operator in process,
    one of the operator's endpoints with the operator's key (charged the operator's prices, within
    the owner's allowance), or the run's own base URL with the run's own key. The HTTP client
    connects only to the address checked when the chunk starts and follows no redirect."""
    from services.evolver.llm import BuiltinTransport, LlmClient

    llm = ctx.config.llm
    if llm.builtin:
        return BuiltinTransport(budget=budget)
    try:
        if llm.endpoint is not None:
            endpoint = operator_endpoint(settings, llm.endpoint)
            base_url, operator = endpoint.base_url, True
            try:
                api_key = llm_api_key(endpoint)
            except OSError as exc:
                log.error("LLM endpoint %s: its key file cannot be read: %s", llm.endpoint, exc.strerror)
                raise PermanentJobError(
                    f"the platform's model endpoint {llm.endpoint!r} is misconfigured (its key cannot be "
                    "read); an operator has been told"
                ) from None
            prices = {model: {"input": p.input, "output": p.output} for model, p in endpoint.prices.items()}
        else:
            assert llm.base_url is not None
            if not ctx.api_key:
                raise PermanentJobError(
                    "the run has its own llm.base_url but no key of its own, and the platform's keys are "
                    "only used with its endpoints: start a new run with an api_key, or on llm.endpoint"
                )
            base_url, operator, api_key = llm.base_url, False, ctx.api_key
            prices = {model: {"input": p.input, "output": p.output} for model, p in llm.prices.items()}
        resolved = connect_llm_endpoint(settings, base_url, operator=operator)
        budget.owner_caps = OwnerCaps(ctx.owner_id, settings, operator=operator)
    except EvolutionError as exc:
        raise PermanentJobError(exc.message) from None
    return LlmClient(
        base_url=base_url,
        api_key=api_key,
        budget=budget,
        price_overrides=prices,
        max_attempts=llm.max_attempts,
        http_client=pinned_http_client(resolved, timeout_s=llm.timeout_s),
    )


def build_engine(ctx: run_store.RunContext, settings: Settings, work: ChunkWork | None = None) -> Engine:
    from services.evolver.engine.analysis import run_analysis
    from services.evolver.evaluation.evaluator import CascadeEvaluator

    budget = RunBudget(ctx.id, ctx.config.limits)
    llm = RecordedLlm(ctx.id, make_transport(ctx, settings, budget))
    evaluator = CascadeEvaluator(ctx, settings)
    return Engine(
        ctx,
        llm,
        evaluator,
        python_runner=lambda code, snapshot: run_analysis(code, snapshot, settings),
        stop_requested=(lambda: work.stop_requested) if work else (lambda: False),
        lease_lost=(lambda: work.lease_lost) if work else (lambda: False),
    )


def progress(run_id: uuid.UUID, state: EngineState) -> dict[str, Any]:
    counters = run_store.counters(run_id)
    return {
        "generation": state.generation,
        "turn": state.turn,
        "best_fitness": counters.best_fitness,
        "spent_usd": round(counters.spent_usd, 6),
        "tokens": counters.tokens,
        "llm_calls": counters.llm_calls,
        "elapsed_s": round(counters.elapsed_s, 1),
        "finished": state.finished,
        "reason": state.reason,
    }


def run_engine_chunk(
    ctx: run_store.RunContext, settings: Settings, checkpoint: dict[str, Any], work: ChunkWork | None
) -> tuple[EngineState, dict[str, Any]]:
    state = EngineState.from_json(checkpoint.get("engine", {}))
    engine = build_engine(ctx, settings, work)
    started = time.monotonic()
    try:
        state = engine.run(state, ctx.config.chunk_seconds)
    finally:
        run_store.add_elapsed(ctx.id, time.monotonic() - started)
        if engine.llm.reused:
            log.info(
                "evolution run %s: %d LLM calls answered from the run's log (recorded before a restart)",
                ctx.id,
                engine.llm.reused,
            )
    info = progress(ctx.id, state)
    log.info(
        "evolution run %s: generation %d, turn %d, best %s, spent $%.4f%s",
        ctx.id,
        state.generation,
        state.turn,
        info["best_fitness"],
        info["spent_usd"],
        f", finished: {state.reason}" if state.finished else "",
    )
    return state, info


class EvolutionHandler(JobHandler):
    kind = EVOLUTION.kind

    def run_chunk(self, work: ChunkWork) -> ChunkResult:
        settings = get_settings()
        try:
            run_id = uuid.UUID(str(work.config["run_id"]))
        except (KeyError, ValueError):
            raise PermanentJobError("the job names no evolution run") from None
        ctx = run_store.load_context(run_id, settings)
        if ctx is None:
            raise PermanentJobError(f"evolution run {run_id} does not exist")
        state, info = run_engine_chunk(ctx, settings, work.checkpoint, work)
        return ChunkResult(checkpoint={"engine": state.to_json()}, progress=info, finished=state.finished)


HANDLER = EvolutionHandler()
