"""The evolution loop: the root LLM decides, through tool calls, until it terminates or a hard limit
ends the run.

One root turn: ask the root (key "root:<turn>"), run each tool call it made (keys "<turn>:<i>"),
answer every call with a tool message that ends with the run block, log the decision. A chunk runs
turns until its time is up, a stop is asked, or a generation closes (each generation commits).

Whatever the root does, the system holds the limits: a failed root call or three answers in a row
without a tool call get the built-in root's decision instead (logged as a fallback, so the run
goes on); a root that spends its turns without advancing has the generation advanced for it; the
wall-time, money and token caps end the run, after the programs already made are evaluated.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from services.evolver.contract import TOOL_SPECS
from services.evolver.engine.state import BudgetExhausted, EngineState, Evaluator
from services.evolver.engine.toolbox import Toolbox
from services.evolver.llm import FailureKind, LlmRequest, ToolCall, builtin_root_answer, prompts
from services.evolver.llm.calls import RecordedLlm
from services.evolver.search import database
from services.evolver.seeds import seed_program
from services.evolver.store import generations as generation_store
from services.evolver.store import programs as program_store
from services.evolver.store import runs as run_store
from shared.evolution.config import DEFAULT_FITNESS_WEIGHTS
from shared.states import EvolutionEventKind, LlmRole

log = logging.getLogger("services.evolver")

NO_TOOL_PATIENCE = 3
MAX_CONVERSATION_CHARS = 150_000
"""Past this the root's conversation restarts from a fresh briefing (the database keeps it all)."""
MAX_RESULT_EVENT_CHARS = 20_000

COMPONENT_TEXT = {
    "win_rate": "win rate (draws count half)",
    "kill_rate": "kill rate (enemy units killed / enemy units)",
    "damage_share": "damage share (damage dealt / (dealt + taken))",
    "progress": "progress (your share of the checkpoints passed)",
}


def fitness_text(game: str, weights: dict[str, float] | None) -> str:
    """The run's fitness in words, for the root's system prompt."""
    used = weights or DEFAULT_FITNESS_WEIGHTS.get(game) or {"win_rate": 1.0}
    terms = [f"{weight:g} x {COMPONENT_TEXT.get(name, name)}" for name, weight in used.items() if weight > 0]
    return " + ".join(terms) + " over the evaluation matches."


class Engine:
    def __init__(
        self,
        ctx: run_store.RunContext,
        llm: RecordedLlm,
        evaluator: Evaluator,
        *,
        python_runner: Callable[[str, dict[str, Any]], str] | None = None,
        stop_requested: Callable[[], bool] = lambda: False,
        lease_lost: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.monotonic,
        on_turn: Callable[[EngineState], None] | None = None,
    ) -> None:
        self.ctx = ctx
        self.config = ctx.config
        self.llm = llm
        self.evaluator = evaluator
        self.python_runner = python_runner
        self.stop_requested = stop_requested
        self.lease_lost = lease_lost
        self.clock = clock
        self.on_turn = on_turn

    # ------------------------------------------------------------ messages
    def system_message(self) -> dict[str, Any]:
        limits = self.config.limits
        shown = {
            "max_generations": limits.max_generations,
            "max_children_per_generation": limits.max_children_per_generation,
            "max_wall_s": limits.max_wall_s,
            "max_cost_usd": limits.max_cost_usd,
            "max_tokens": limits.max_tokens,
            "max_root_turns_per_generation": limits.root_turns(),
        }
        fitness = fitness_text(self.ctx.game, self.ctx.config.evaluation.fitness_weights)
        return {"role": "system", "content": prompts.root_system(self.ctx.game, shown, fitness)}

    def briefing(self, toolbox: Toolbox, state: EngineState) -> dict[str, Any]:
        progs = program_store.program_views(self.ctx.id)
        stats = {
            "run": toolbox.run_block(),
            "trends": database.trends(progs, state.generation)["generations"][-5:],
        }
        return {"role": "user", "content": prompts.generation_briefing(state.generation, stats)}

    def fresh_conversation(self, toolbox: Toolbox, state: EngineState) -> None:
        state.messages = [self.system_message(), self.briefing(toolbox, state)]

    # ------------------------------------------------------------ the loop
    def run(self, state: EngineState, seconds: float) -> EngineState:
        """Run root turns from `state` for about `seconds`; returns the state to checkpoint."""
        toolbox = Toolbox(
            self.ctx,
            state,
            self.llm,
            self.evaluator,
            python_runner=self.python_runner,
            lease_lost=self.lease_lost,
        )
        started = self.clock()
        if not state.started:
            self.start(toolbox, state)
        limits = self.config.limits
        while not state.finished:
            spent_s = run_store.counters(self.ctx.id).elapsed_s + (self.clock() - started)
            if spent_s >= limits.max_wall_s:
                self.limit(toolbox, state, f"wall-time limit reached ({limits.max_wall_s:.0f} s)")
                break
            if self.stop_requested() or self.lease_lost() or self.clock() - started >= seconds:
                break
            generation = state.generation
            try:
                if state.generation_turns >= limits.root_turns():
                    self.advance_for_root(toolbox, state)
                else:
                    self.root_turn(toolbox, state)
            except BudgetExhausted as exc:
                self.limit(toolbox, state, f"budget exhausted: {exc}")
                break
            if self.on_turn is not None:
                self.on_turn(state)
            if state.generation != generation and not state.finished:
                self.fresh_conversation(toolbox, state)
                break  # a generation boundary: commit
            if len(json.dumps(state.messages, default=str)) > MAX_CONVERSATION_CHARS:
                self.fresh_conversation(toolbox, state)
        return state

    def start(self, toolbox: Toolbox, state: EngineState) -> None:
        seeds = list(self.config.seeds) or [seed_program(self.ctx.game)]
        toolbox.plant_seeds(seeds)
        generation_store.open_generation(self.ctx.id, 0)
        run_store.add_event(
            self.ctx.id,
            "run_started",
            0,
            EvolutionEventKind.RUN_STARTED,
            {"game": self.ctx.game, "seeds": len(seeds), "config": self.config.model_dump(mode="json")},
        )
        state.started = True
        self.fresh_conversation(toolbox, state)

    def limit(self, toolbox: Toolbox, state: EngineState, reason: str) -> None:
        run_store.add_event(
            self.ctx.id, "limit", state.generation, EvolutionEventKind.LIMIT_REACHED, {"reason": reason}
        )
        log.info("run %s: %s", self.ctx.id, reason)
        toolbox.finish(reason)

    def advance_for_root(self, toolbox: Toolbox, state: EngineState) -> None:
        """The root used its turns for this generation without advancing: the system does it."""
        key = f"system:{state.turn}"
        limits = self.config.limits
        run_store.add_event(
            self.ctx.id,
            key,
            state.generation,
            EvolutionEventKind.FALLBACK,
            {"why": f"the root used {limits.root_turns()} turns in generation {state.generation}"},
        )
        if state.generation + 1 >= limits.max_generations:
            toolbox.finish("the root used its last generation's turns")
            return
        toolbox.evaluate_pending()
        progs = program_store.program_views(self.ctx.id)
        chosen = [str(p.id) for p in database.top(progs, 4)]
        toolbox.close_generation(chosen, "selected by the system: the best four so far")
        state.turn += 1

    def root_turn(self, toolbox: Toolbox, state: EngineState) -> None:
        key = f"root:{state.turn}"
        llm = self.config.llm
        request = LlmRequest(
            key=key,
            role=LlmRole.ROOT,
            model=llm.root_model,
            messages=list(state.messages),
            tools=TOOL_SPECS,
            max_tokens=llm.root_max_tokens,
            temperature=None,
            timeout_s=llm.timeout_s,
        )
        outcome = self.llm.complete(request, state.generation)
        if outcome.failure == FailureKind.BUDGET:
            raise BudgetExhausted(outcome.error or "budget exhausted")
        assistant: dict[str, Any]
        calls: list[ToolCall]
        rejected: list[dict[str, Any]] = []
        fallback_why: str | None = None
        if not outcome.ok:
            run_store.add_event(
                self.ctx.id,
                f"failure:{key}",
                state.generation,
                EvolutionEventKind.LLM_FAILURE,
                {"key": key, "failure": str(outcome.failure), "error": outcome.error},
            )
            fallback_why = f"the root's call failed ({outcome.failure}: {outcome.error})"
        elif not outcome.tool_calls and not outcome.rejected_tool_calls:
            state.no_tool_streak += 1
            if state.no_tool_streak >= NO_TOOL_PATIENCE:
                fallback_why = f"the root answered {state.no_tool_streak} times without a tool call"
            else:
                state.messages += [
                    outcome.assistant_message(),
                    {"role": "user", "content": "Act through one of the tools (see the tool list)."},
                ]
                self.log_decision(state, key, outcome.text, [], [])
                state.turn += 1
                state.generation_turns += 1
                return
        if fallback_why is not None:
            assistant, calls = self.fallback(state, key, fallback_why)
        else:
            assistant = outcome.assistant_message()
            calls = list(outcome.tool_calls)
            rejected = [
                {"id": r.id, "name": r.name, "arguments": r.arguments, "reason": r.reason}
                for r in outcome.rejected_tool_calls
            ]
        state.no_tool_streak = 0 if calls else state.no_tool_streak
        state.messages.append(assistant)
        for bad in rejected:
            state.messages.append(
                _tool_message(bad["id"], {"ok": False, "error": bad["reason"], "run": toolbox.run_block()})
            )
        self.log_decision(state, key, assistant.get("content") or "", calls, rejected)
        turn = state.turn
        for index, call in enumerate(calls):
            if state.finished:
                result: dict[str, Any] = {
                    "ok": False,
                    "error": "the run has terminated",
                    "run": toolbox.run_block(),
                }
            else:
                result = toolbox.call(call.name, call.arguments, f"{turn}:{index}")
            state.messages.append(_tool_message(call.id, result))
            text = json.dumps(result, default=str)
            run_store.add_event(
                self.ctx.id,
                f"tool:{turn}:{index}",
                state.generation,
                EvolutionEventKind.TOOL_RESULT,
                {"tool": call.name, "arguments": call.arguments, "result": _cut(text)},
            )
        state.turn += 1
        state.generation_turns += 1

    def fallback(self, state: EngineState, key: str, why: str) -> tuple[dict[str, Any], list[ToolCall]]:
        """The built-in root's decision on the same conversation, so the run goes on."""
        message = builtin_root_answer(state.messages, TOOL_SPECS)
        calls = []
        for raw in message.get("tool_calls") or []:
            function = raw["function"]
            calls.append(ToolCall(str(raw["id"]), str(function["name"]), json.loads(function["arguments"])))
        run_store.add_event(
            self.ctx.id,
            f"fallback:{key}",
            state.generation,
            EvolutionEventKind.FALLBACK,
            {"why": why, "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls]},
        )
        state.no_tool_streak = 0
        return message, calls

    def log_decision(
        self, state: EngineState, key: str, text: str, calls: list[ToolCall], rejected: list[dict[str, Any]]
    ) -> None:
        run_store.add_event(
            self.ctx.id,
            key,
            state.generation,
            EvolutionEventKind.ROOT_DECISION,
            {
                "reasoning": (text or "")[:8_000],
                "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls],
                "rejected": rejected,
            },
        )


def _tool_message(call_id: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result, default=str)}


def _cut(text: str) -> str:
    return text if len(text) <= MAX_RESULT_EVENT_CHARS else text[:MAX_RESULT_EVENT_CHARS] + " …(cut)"
