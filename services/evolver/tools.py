"""The root's tools (contract.TOOL_SPECS), each a method that takes the step key it runs under.

Every tool is idempotent per key: a step run again after a crash finds the program, the call, the
evaluation or the closed generation it produced and answers the same way, so a resumed run never
duplicates anything. Whatever a tool is asked, the hard limits hold: children per generation,
generations, and (through RecordedLlm) money and tokens.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from services.evolver import database, metrics, prompts, store
from services.evolver.calls import RecordedLlm
from services.evolver.code import extract_code, normalised_hash, unified_diff
from services.evolver.contract import MUTABLE_PARAMETERS, ToolName
from services.evolver.database import Islands, ProgramView
from services.evolver.diffs import DiffError, apply_blocks, has_blocks, parse_blocks
from services.evolver.llm import FailureKind, LlmOutcome, LlmRequest, OutcomeStatus
from services.evolver.surrogate import TableRow, named_constants, render_table
from shared.db.models import EvolutionProgram
from shared.sandbox.gate import check_source
from shared.states import EvolutionEventKind, HostedContract, LlmRole, ProgramOrigin, ProgramStatus

log = logging.getLogger("services.evolver")

TOP_IN_RUN_BLOCK = 8
FINAL_ROUND_PROGRAMS = 4
"""With rematches, the leading programs that play the final rounds before the run names its best."""
FINAL_MIN_MATCHES = 36
"""A leader plays final rounds until it has played this many matches in all (at least one round),
so a young program's lucky start cannot make it the run's best."""
FINAL_MAX_ROUNDS = 4
"""Final rounds one program plays at most."""
FINAL_MAX_PASSES = 12
"""Passes over the leaders at most (a leader that sinks lets another one in, which then plays)."""


class Evaluator(Protocol):
    """Runs the evaluation cascade on one stored program (services/evolver/evaluation)."""

    def evaluate(
        self, program: EvolutionProgram, parameters: dict[str, Any], seed: int
    ) -> store.EvaluationRow: ...

    def rematch(
        self, program: EvolutionProgram, parameters: dict[str, Any], seed: int
    ) -> store.EvaluationRow: ...


class ToolError(Exception):
    """A tool refused what it was asked; the message goes back to the root."""


class BudgetExhausted(Exception):
    """A hard cap refused an LLM call: the run ends."""


@dataclass
class EngineState:
    """The engine's checkpoint (JSON on the job row)."""

    turn: int = 0
    """Root turns so far in the run: the step keys count with it."""
    generation: int = 0
    generation_turns: int = 0
    spawned: int = 0
    """Children spawned in this generation (each spawn counts, whatever came of it)."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    no_tool_streak: int = 0
    started: bool = False
    finished: bool = False
    reason: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EngineState:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def views(rows: Sequence[EvolutionProgram]) -> list[ProgramView]:
    return [
        ProgramView(
            id=r.id,
            seq=r.seq,
            generation=r.generation,
            island=r.island,
            status=r.status,
            fitness=r.fitness,
            cell=(r.cell_x, r.cell_y) if r.cell_x is not None and r.cell_y is not None else None,
            parent_id=r.parent_id,
            nash_fitness=r.nash_fitness,
            last_round=(r.metrics or {}).get("round"),
        )
        for r in rows
    ]


def _seq(program_id: str) -> int:
    if not (program_id.startswith("p") and program_id[1:].isdigit()):
        raise ToolError(f"{program_id!r} is not a program id (they look like p12)")
    return int(program_id[1:])


class Toolbox:
    def __init__(
        self,
        ctx: store.RunContext,
        state: EngineState,
        llm: RecordedLlm,
        evaluator: Evaluator,
        *,
        python_runner: Callable[[str, dict[str, Any]], str] | None = None,
        lease_lost: Callable[[], bool] = lambda: False,
    ) -> None:
        self.ctx = ctx
        self.state = state
        self.llm = llm
        self.evaluator = evaluator
        self.python_runner = python_runner
        self.lease_lost = lease_lost
        self.config = ctx.config
        self._constants: dict[uuid.UUID, dict[str, float]] = {}

    # ------------------------------------------------------------ helpers
    def parameters(self) -> dict[str, Any]:
        current = store.counters(self.ctx.id).parameters
        return {**self.config.initial_parameters(), **current}

    def _program(self, program_id: str) -> EvolutionProgram:
        row = store.program_by_seq(self.ctx.id, _seq(program_id))
        if row is None:
            raise ToolError(f"there is no program {program_id} in this run")
        return row

    def _row(self, view: ProgramView) -> EvolutionProgram:
        row = store.program(view.id)
        assert row is not None
        return row

    def _parent_change(self, parent: EvolutionProgram) -> tuple[str, str] | None:
        """The parent's own parent's name and the diff that made the parent, for the child prompt."""
        if parent.parent_id is None or not parent.diff:
            return None
        grandparent = store.program(parent.parent_id)
        return (f"p{grandparent.seq}", parent.diff) if grandparent is not None else None

    def _constants_table(self, parent: EvolutionProgram) -> str | None:
        """The recent evaluated programs' fitness and values of the parent's named constants, for
        the child prompt (search.constants_table rows; None when that is 0 or the parent has no
        named constant). Each program's constants are parsed once per worker."""
        limit = self.config.search.constants_table
        names = list(named_constants(parent.code))
        if limit <= 0 or not names:
            return None
        measured = store.recent_evaluated(self.ctx.id, limit)
        missing = [m.id for m in measured if m.id not in self._constants]
        for program_id, code in store.codes(missing).items():
            self._constants[program_id] = named_constants(code)
        rows = [
            TableRow(f"p{m.seq}", m.fitness, m.matches, self._constants.get(m.id, {}))
            for m in measured
            if m.matches > 0
        ]
        return render_table(names, rows) if rows else None

    def _rng(self, key: str) -> random.Random:
        return random.Random(f"{self.config.random_seed}:{key}")

    def run_block(self) -> dict[str, Any]:
        counters = store.counters(self.ctx.id)
        progs = store.program_views(self.ctx.id)
        g = self.state.generation
        best = next((p for p in progs if p.id == counters.best_program_id), None)
        limits = self.config.limits
        stagnant = self._trends(progs, g)["generations_without_improvement"]
        return {
            "generation": g,
            "max_generations": limits.max_generations,
            "children_this_generation": self.state.spawned,
            "max_children_per_generation": limits.max_children_per_generation,
            "unevaluated": [p.name for p in progs if p.generation == g and p.status == ProgramStatus.PENDING],
            "top": [
                {"id": p.name, "fitness": round(p.score, 4)}
                for p in database.top(progs, TOP_IN_RUN_BLOCK, generation=g)
            ],
            "best": None if best is None else {"id": best.name, "fitness": round(best.score, 4)},
            "generations_without_improvement": stagnant,
            "parameters": {**self.config.initial_parameters(), **counters.parameters},
            "spent_usd": round(counters.spent_usd, 6),
            "budget_usd": limits.max_cost_usd,
            "tokens": counters.tokens,
            "token_budget": limits.max_tokens,
        }

    def call(self, name: str, arguments: dict[str, Any], key: str) -> dict[str, Any]:
        """Run one tool call; a refusal is an {"ok": false} result, never an exception (except a
        spent budget, which ends the run)."""
        try:
            handler = {
                ToolName.SPAWN_CHILD: self.spawn_child,
                ToolName.EVALUATE_PROGRAM: self.evaluate_program,
                ToolName.PERFORMANCE_ANALYSIS: self.performance_analysis,
                ToolName.HISTORICAL_TRENDS: self.historical_trends,
                ToolName.ADVANCE_GENERATION: self.advance_generation,
                ToolName.MODIFY_PARAMETERS: self.modify_parameters,
                ToolName.TERMINATE: self.terminate,
                ToolName.PYTHON: self.python,
            }[ToolName(name)]
        except (KeyError, ValueError):
            return {"ok": False, "error": f"unknown tool {name!r}", "run": self.run_block()}
        try:
            result = handler(arguments, key)
        except ToolError as exc:
            return {"ok": False, "error": str(exc), "run": self.run_block()}
        return {"ok": True, "result": result, "run": self.run_block()}

    # ------------------------------------------------------------ seeds
    def plant_seeds(self, seeds: Sequence[str]) -> None:
        """Generation 0's programs, spread over the islands; evaluated by the first steps."""
        for index, source in enumerate(seeds):
            problems = check_source(source, contract=HostedContract.DECIDE)
            store.insert_program(
                self.ctx.id,
                store.NewProgram(
                    created_key=f"seed:{index}",
                    generation=0,
                    island=index % self.config.search.islands,
                    origin=ProgramOrigin.SEED,
                    status=ProgramStatus.REJECTED if problems else ProgramStatus.PENDING,
                    code=source,
                    code_hash=normalised_hash(source),
                    error=_gate_text(problems) if problems else None,
                ),
            )

    # ------------------------------------------------------------ spawn_child
    def spawn_child(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        limits = self.config.limits
        if self.state.spawned >= limits.max_children_per_generation:
            raise ToolError(
                f"this generation has spawned {self.state.spawned} children, the limit; evaluate them "
                "and advance the generation"
            )
        self.state.spawned += 1
        progs = store.program_views(self.ctx.id)
        island = (self.state.spawned - 1) % self.config.search.islands
        rng = self._rng(f"spawn:{key}")
        parameters = self.parameters()
        generation = (
            store.generation_row(self.ctx.id, self.state.generation - 1) if self.state.generation else None
        )
        selected = list(generation.selected_ids) if generation else []
        if "parent_id" in args:
            parent = self._program(str(args["parent_id"]))
            if parent.status == ProgramStatus.REJECTED:
                raise ToolError(f"p{parent.seq} was rejected by the gate; pick a program that runs")
            island = parent.island
            inspirations = [self._program(str(i)) for i in args.get("inspiration_ids", [])]
            how = "chosen by the root"
        else:
            islands = Islands.from_json(self.config.search.islands, store.counters(self.ctx.id).islands)
            draw = database.sample(
                progs,
                islands,
                island,
                selected,
                rng,
                exploration_ratio=float(parameters["exploration_ratio"]),
                inspirations=self.config.search.inspirations,
                selection=self.config.search.parent_selection,
            )
            if draw is None:
                fallback = next((p for p in progs if p.status != ProgramStatus.REJECTED), None)
                if fallback is None:
                    raise ToolError("no program runs yet: nothing to build on")
                parent, inspirations, how = self._row(fallback), [], "the only program"
            else:
                parent = self._row(draw.parent)
                inspirations = [self._row(i) for i in draw.inspirations]
                how = draw.how
            if "inspiration_ids" in args:
                inspirations = [self._program(str(i)) for i in args["inspiration_ids"]]
        focus = str(args["prompt"])
        made = self._child_program(key, focus, parent, inspirations, island, parameters)
        program, duplicate = made.program, made.duplicate_of
        out: dict[str, Any] = {
            "program_id": f"p{program.seq}",
            "parent_id": f"p{parent.seq}",
            "inspiration_ids": [f"p{i.seq}" for i in inspirations],
            "parent_drawn_by": how,
            "island": program.island,
            "status": str(program.status),
            "origin": str(program.origin),
        }
        if duplicate is not None:
            out["note"] = (
                f"identical to p{duplicate.seq} (same normalised code): not stored or evaluated again"
            )
        if program.status == ProgramStatus.REJECTED:
            out["error"] = program.error
            metrics.record_failure(metrics.Failure.PROGRAM_REJECTED)
        if program.explanation:
            out["explanation"] = program.explanation[:1_000]
        return out

    def _child_call(self, key: str, messages: list[dict[str, Any]], temperature: float) -> LlmOutcome:
        if self.lease_lost():
            raise ToolError("this worker lost the run's lease; stopping")
        request = LlmRequest(
            key=key,
            role=LlmRole.CHILD,
            model=self.config.llm.child_model,
            messages=messages,
            tools=None,
            max_tokens=self.config.llm.child_max_tokens,
            temperature=temperature,
            timeout_s=self.config.llm.timeout_s,
        )
        outcome = self.llm.complete(request, self.state.generation)
        if outcome.failure == FailureKind.BUDGET:
            raise BudgetExhausted(outcome.error or "budget exhausted")
        return outcome

    def _child_program(
        self,
        key: str,
        focus: str,
        parent: EvolutionProgram,
        inspirations: Sequence[EvolutionProgram],
        island: int,
        parameters: dict[str, Any],
    ) -> store.Inserted:
        """Ask the child; apply its blocks (retry once with the error shown, then ask for a whole
        program); gate the result; store it (once per key, once per normalised code)."""
        game = self.ctx.game
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": prompts.child_system(game)},
            {
                "role": "user",
                "content": prompts.child_prompt(
                    f"generation {self.state.generation}, child {self.state.spawned}",
                    focus,
                    f"p{parent.seq}",
                    parent.code,
                    dict(parent.feedback or {}),
                    parent.fitness,
                    [(f"p{i.seq}", i.code, i.fitness) for i in inspirations],
                    self._parent_change(parent),
                    self._constants_table(parent),
                ),
            },
        ]
        temperature = float(parameters["child_temperature"])
        code: str | None = None
        origin = ProgramOrigin.DIFF
        explanation = ""
        error: str | None = None
        for attempt in range(1, 4):
            outcome = self._child_call(f"child:{key}:{attempt}", messages, temperature)
            if outcome.status != OutcomeStatus.OK:
                error = f"the child LLM call failed: {outcome.error}"
                break
            answer = outcome.text or ""
            explanation = explanation or _explanation(answer)
            if attempt < 3 and has_blocks(answer):
                try:
                    code = apply_blocks(parent.code, parse_blocks(answer))
                    origin = ProgramOrigin.DIFF
                    break
                except DiffError as exc:
                    error = f"the SEARCH/REPLACE blocks did not apply: {exc}"
            else:
                code = extract_code(answer)
                if code is not None:
                    origin = ProgramOrigin.REWRITE
                    break
                error = "the answer held neither SEARCH/REPLACE blocks nor a ```python program"
            messages = [
                *messages,
                {"role": "assistant", "content": answer},
                {
                    "role": "user",
                    "content": (prompts.retry_prompt if attempt == 1 else prompts.rewrite_prompt)(error),
                },
            ]
        common = {
            "created_key": f"program:{key}",
            "generation": self.state.generation,
            "island": island,
            "parent_id": parent.id,
            "inspiration_ids": tuple(i.id for i in inspirations),
            "focus": focus,
            "explanation": explanation or None,
        }
        if code is None:
            text = parent.code + f"\n# no usable program from {key}\n"
            return store.insert_program(
                self.ctx.id,
                store.NewProgram(
                    origin=ProgramOrigin.REWRITE,
                    status=ProgramStatus.REJECTED,
                    code=text,
                    code_hash=f"none:{key}"[:64],
                    error=error,
                    **common,  # type: ignore[arg-type]
                ),
            )
        problems = check_source(code, contract=HostedContract.DECIDE)
        return store.insert_program(
            self.ctx.id,
            store.NewProgram(
                origin=origin,
                status=ProgramStatus.REJECTED if problems else ProgramStatus.PENDING,
                code=code,
                code_hash=normalised_hash(code),
                diff=unified_diff(parent.code, code, f"p{parent.seq}", "child"),
                error=_gate_text(problems) if problems else None,
                **common,  # type: ignore[arg-type]
            ),
        )

    # ------------------------------------------------------------ evaluate_program
    def evaluate_program(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        row = self._program(str(args["program_id"]))
        return self.evaluate_row(row)

    def evaluate_row(self, row: EvolutionProgram) -> dict[str, Any]:
        if row.status == ProgramStatus.REJECTED:
            raise ToolError(f"p{row.seq} was rejected and cannot run: {row.error}")
        if row.status == ProgramStatus.PENDING:
            self.rematch_parents()
            # Common random numbers: programs play the same matches (seeds and seats), across the
            # run or within a generation, so their fitnesses differ by how they play, not by which
            # matches they drew (with ten matches, the draw alone moves a win rate by +-0.15).
            scope = "run" if self.config.evaluation.match_seeds == "run" else f"generation:{row.generation}"
            result = self._judge(self.evaluator.evaluate, row, scope)
            label = f"g{row.generation}"
            result = replace(
                result,
                metrics={
                    **result.metrics,
                    "rounds": [label],
                    "round_seconds": {label: result.metrics.get("seconds")},
                },
            )
            saved = store.save_evaluation(
                self.ctx.id, row.id, result, promotion_threshold=self.config.promotion_threshold
            )
            store.update_nash(self.ctx.id)
            if saved.promoted_version_id is not None:
                store.add_event(
                    self.ctx.id,
                    f"promoted:{row.seq}",
                    self.state.generation,
                    EvolutionEventKind.PROGRAM_PROMOTED,
                    {
                        "program": f"p{row.seq}",
                        "fitness": result.fitness,
                        "version_id": str(saved.promoted_version_id),
                    },
                )
            fresh = store.program(row.id)
            assert fresh is not None
            row = fresh
        return _evaluation_summary(row)

    def _judge(
        self,
        play: Callable[[EvolutionProgram, dict[str, Any], int], store.EvaluationRow],
        row: EvolutionProgram,
        scope: str,
    ) -> store.EvaluationRow:
        """`play` (an evaluation or a rematch) on the matches of `scope`, counted in the metrics."""
        seed = self._rng(f"evaluate:{scope}").randrange(2**31)
        try:
            result = play(row, self.parameters(), seed)
        except Exception:
            metrics.record_failure(metrics.Failure.EVALUATION_ERROR)
            raise
        metrics.record_evaluation(self.ctx.game, result.status, result.stage, result.metrics.get("seconds"))
        return result

    def rematch_parents(self) -> None:
        """With `evaluation.rematch`: the programs selected at the end of the last generation play
        this generation's matches too (once per program and generation), so they and this
        generation's children are judged on common matches and a lucky parent loses its place."""
        g = self.state.generation
        if not self.config.evaluation.rematch or g == 0:
            return
        previous = store.generation_row(self.ctx.id, g - 1)
        if previous is None:
            return
        selected = {str(i) for i in previous.selected_ids or []}
        for view in store.program_views(self.ctx.id):  # whole rows only for those still to play
            if str(view.id) in selected and not view.played_in(g):
                row = store.program(view.id)
                assert row is not None
                self.rematch_row(row, f"g{g}", f"generation:{g}", g)

    def rematch_row(self, row: EvolutionProgram, label: str, scope: str, generation: int | None) -> bool:
        """Play `row` on the matches of `scope` once (labelled `label`); whether it played now."""
        if row.status != ProgramStatus.EVALUATED or label in (row.metrics or {}).get("rounds", []):
            return False
        result = self._judge(self.evaluator.rematch, row, scope)
        before = row.fitness
        saved = store.save_rematch(
            self.ctx.id,
            row.id,
            label,
            result,
            round_generation=generation,
            promotion_threshold=self.config.promotion_threshold,
        )
        store.update_nash(self.ctx.id)
        store.add_event(
            self.ctx.id,
            f"rematch:{label}:{row.seq}",
            self.state.generation,
            EvolutionEventKind.PROGRAM_REMATCHED,
            {
                "program": f"p{row.seq}",
                "round": label,
                "fitness_before": before,
                "fitness": result.fitness,
                "matches": result.metrics.get("matches"),
            },
        )
        if saved.promoted_version_id is not None:
            promoted = store.program_by_seq(self.ctx.id, saved.promoted_seq or row.seq)
            store.add_event(
                self.ctx.id,
                f"promoted:{saved.promoted_seq}:{label}",
                self.state.generation,
                EvolutionEventKind.PROGRAM_PROMOTED,
                {
                    "program": f"p{saved.promoted_seq}",
                    "fitness": None if promoted is None else promoted.fitness,
                    "version_id": str(saved.promoted_version_id),
                },
            )
        return True

    def final_round(self) -> None:
        """With `evaluation.rematch`: before the run names its best, the leading programs play new
        matches, each until it has played FINAL_MIN_MATCHES in all, so the best is neither the
        luckiest of the last generation nor a young program ahead on a few matches. Every
        program in a round plays the same matches, so the leaders still meet on common ground."""
        if not self.config.evaluation.rematch:
            return
        for _ in range(FINAL_MAX_PASSES):
            played = False
            for view in database.top(store.program_views(self.ctx.id), FINAL_ROUND_PROGRAMS):
                row = store.program(view.id)
                assert row is not None
                label = next_final_round(row)
                if label is not None:
                    played = self.rematch_row(row, label, label, None) or played
            if not played:
                return

    def evaluate_pending(self) -> None:
        self.rematch_parents()
        for view in store.program_views(self.ctx.id):
            if view.status == ProgramStatus.PENDING:
                row = store.program(view.id)
                assert row is not None
                self.evaluate_row(row)

    # ------------------------------------------------------------ analysis tools
    def performance_analysis(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        g = int(args.get("generation", self.state.generation))
        if g > self.state.generation:
            raise ToolError(f"generation {g} has not started (the current one is {self.state.generation})")
        progs = store.program_views(self.ctx.id)
        search = self.config.search
        return {
            "statistics": database.generation_stats(progs, g, search.islands),
            "top": [_brief(p) for p in database.top(progs, 8, generation=g)],
            "best_overall": [_brief(p) for p in database.top(progs, 3)],
            "grid": database.occupancy(progs, search.grid_bins, search.islands),
        }

    def historical_trends(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        return self._trends(store.program_views(self.ctx.id), self.state.generation)

    def _trends(self, progs: list[database.ProgramView], generation: int) -> dict[str, Any]:
        """With racing, judged by the leaders of the fields (common matches); see database.trends."""
        racing = self.config.evaluation.rematch
        leaders = store.field_leader_generations(self.ctx.id) if racing else None
        return database.trends(progs, generation, field_leaders=leaders)

    # ------------------------------------------------------------ advance_generation
    def advance_generation(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        limits = self.config.limits
        g = self.state.generation
        if g + 1 >= limits.max_generations:
            raise ToolError(
                f"generation {g} is the last one allowed "
                f"(max_generations {limits.max_generations}); terminate"
            )
        selected = [self._program(str(i)) for i in args["selected_ids"]]
        self.evaluate_pending()
        runnable = [r for r in selected if r.status != ProgramStatus.REJECTED]
        if not runnable:
            raise ToolError("none of the selected programs runs; select evaluated programs")
        return self.close_generation([str(r.id) for r in runnable], str(args.get("reasoning", "")), key)

    def close_generation(self, selected: list[str], reasoning: str, key: str) -> dict[str, Any]:
        g = self.state.generation
        progs = store.program_views(self.ctx.id)
        stats = self._closing_stats(progs, g)
        if store.close_generation(self.ctx.id, g, selected, reasoning or None, stats):
            metrics.record_generation(self.ctx.game, store.generation_row(self.ctx.id, g))
        moves: list[tuple[int, int, str]] = []
        interval = int(self.parameters()["migration_interval"])
        if (g + 1) % interval == 0:
            counters = store.counters(self.ctx.id)
            islands = Islands.from_json(self.config.search.islands, counters.islands)
            moves = islands.migrate(progs)
            store.update_run(self.ctx.id, islands=islands.to_json())
            if moves:
                store.add_event(
                    self.ctx.id,
                    f"migration:{g + 1}",
                    g + 1,
                    EvolutionEventKind.MIGRATION,
                    {"moves": [{"from": a, "to": b, "program": p} for a, b, p in moves]},
                )
        by_id = {str(p.id): p.name for p in progs}
        store.add_event(
            self.ctx.id,
            f"advance:{g}",
            g,
            EvolutionEventKind.GENERATION_ADVANCED,
            {"from": g, "to": g + 1, "selected": [by_id.get(s, s) for s in selected], "reasoning": reasoning},
        )
        self.state.generation = g + 1
        self.state.generation_turns = 0
        self.state.spawned = 0
        return {"generation": g + 1, "closed": stats, "migrations": len(moves)}

    def _closing_stats(self, progs: list[database.ProgramView], generation: int) -> dict[str, Any]:
        """A generation's figures as it closes (a later rematch changes its programs', not these)."""
        search = self.config.search
        stats = database.generation_stats(progs, generation, search.islands)
        stats["grid"] = database.occupancy(progs, search.grid_bins, search.islands)
        return stats

    # ------------------------------------------------------------ modify_parameters
    def modify_parameters(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        updates = args.get("updates")
        if not isinstance(updates, dict) or not updates:
            raise ToolError("updates must be a non-empty object")
        clean: dict[str, Any] = {}
        for name, value in updates.items():
            spec = MUTABLE_PARAMETERS.get(name)
            if spec is None:
                raise ToolError(f"{name!r} cannot be changed; allowed: {', '.join(MUTABLE_PARAMETERS)}")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ToolError(f"{name} must be a number")
            if spec["type"] == "integer" and not float(value).is_integer():
                raise ToolError(f"{name} must be an integer")
            if not spec["minimum"] <= value <= spec["maximum"]:
                raise ToolError(f"{name} must be within {spec['minimum']}..{spec['maximum']}")
            clean[name] = int(value) if spec["type"] == "integer" else float(value)
        before = self.parameters()
        store.update_run(self.ctx.id, parameters={**store.counters(self.ctx.id).parameters, **clean})
        store.add_event(
            self.ctx.id,
            f"parameters:{key}",
            self.state.generation,
            EvolutionEventKind.PARAMETERS_CHANGED,
            {
                "changes": {k: {"from": before.get(k), "to": v} for k, v in clean.items()},
                "reasoning": str(args.get("reasoning", "")),
            },
        )
        return {"parameters": self.parameters()}

    # ------------------------------------------------------------ terminate
    def terminate(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        reason = str(args["reason"])
        named = str(args["best_program_id"]) if "best_program_id" in args else None
        if named is not None:
            self._program(named)
        self.finish(reason, key, named)
        return {"terminated": True, "reason": reason}

    def finish(self, reason: str, key: str, named_best: str | None = None) -> None:
        self.evaluate_pending()
        # The last generation closes too, with its figures as they stand before the final rounds
        # (like every other generation's); nothing is selected, since no generation follows.
        g = self.state.generation
        stats = self._closing_stats(store.program_views(self.ctx.id), g)
        if store.close_generation(self.ctx.id, g, [], f"the run ended: {reason}", stats, last=True):
            metrics.record_generation(self.ctx.game, store.generation_row(self.ctx.id, g))
        self.final_round()
        counters = store.counters(self.ctx.id)
        best = store.program(counters.best_program_id) if counters.best_program_id else None
        store.update_run(self.ctx.id, termination_reason=reason)
        store.add_event(
            self.ctx.id,
            "terminated",
            self.state.generation,
            EvolutionEventKind.TERMINATED,
            {
                "reason": reason,
                "root_named_best": named_best,
                "best": None if best is None else f"p{best.seq}",
                "best_fitness": counters.best_fitness,
            },
        )
        self.state.finished = True
        self.state.reason = reason

    # ------------------------------------------------------------ python
    def python(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        if self.python_runner is None:
            raise ToolError("the python tool is not available on this worker")
        rows = store.programs(self.ctx.id)
        snapshot = {
            "programs": [
                {
                    "id": f"p{r.seq}",
                    "generation": r.generation,
                    "island": r.island,
                    "parent_id": _parent_name(rows, r.parent_id),
                    "status": str(r.status),
                    "origin": str(r.origin),
                    "fitness": r.fitness,
                    "metrics": {k: v for k, v in (r.metrics or {}).items() if k != "records"},
                    "descriptors": r.descriptors,
                }
                for r in rows
            ],
            "generations": database.trends(views(rows), self.state.generation)["generations"],
        }
        return {"output": self.python_runner(str(args["code"]), snapshot)}


def _parent_name(rows: Sequence[EvolutionProgram], parent_id: uuid.UUID | None) -> str | None:
    if parent_id is None:
        return None
    return next((f"p{r.seq}" for r in rows if r.id == parent_id), None)


def _gate_text(problems: Sequence[Any]) -> str:
    return "the static gate refused the program: " + "; ".join(str(p) for p in problems[:20])


def _explanation(answer: str) -> str:
    head = answer.split("```", 1)[0].split("<<<<<<<", 1)[0]
    return " ".join(head.split())[:2_000]


def _brief(p: ProgramView) -> dict[str, Any]:
    return {
        "id": p.name,
        "fitness": None if p.fitness is None else round(p.fitness, 4),
        "nash_fitness": None if p.nash_fitness is None else round(p.nash_fitness, 4),
        "generation": p.generation,
        "island": p.island,
        "cell": list(p.cell) if p.cell else None,
    }


def _evaluation_summary(row: EvolutionProgram) -> dict[str, Any]:
    metrics = {k: v for k, v in (row.metrics or {}).items() if k != "records"}
    return {
        "program_id": f"p{row.seq}",
        "status": str(row.status),
        "stage": row.stage,
        "fitness": row.fitness,
        "nash_fitness": row.nash_fitness,
        "metrics": metrics,
        "descriptors": row.descriptors,
        "error": row.error,
        "feedback": {k: v for k, v in (row.feedback or {}).items() if k != "records"},
    }


def next_final_round(row: EvolutionProgram) -> str | None:
    """The final round `row` plays next ("final", then "final-2", ...), or None when it has
    played one and enough matches, or the most final rounds allowed."""
    metrics = row.metrics or {}
    rounds = set(metrics.get("rounds", []))
    finals = sum(1 for label in rounds if label == "final" or str(label).startswith("final-"))
    matches = metrics.get("matches")
    enough = isinstance(matches, int) and matches >= FINAL_MIN_MATCHES
    if finals >= FINAL_MAX_ROUNDS or (finals > 0 and enough):
        return None
    return "final" if finals == 0 else f"final-{finals + 1}"
