"""The programs the run makes: the seeds, and the root's `spawn_child` tool. A child starts from a
parent (named by the root, or drawn from the program database) and its inspirations; the child LLM
is asked for a change, its SEARCH/REPLACE blocks are applied (on failure it is asked again with the
error shown, then for a whole program), and the result is gated and stored once per step key and
once per normalised code."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from services.evolver import metrics
from services.evolver.engine.context import RunTools
from services.evolver.engine.state import BudgetExhausted, EngineState, ToolError
from services.evolver.llm import FailureKind, LlmOutcome, LlmRequest, OutcomeStatus, prompts
from services.evolver.llm.calls import RecordedLlm
from services.evolver.search import database
from services.evolver.search.code import extract_code, normalised_hash, unified_diff
from services.evolver.search.database import Islands
from services.evolver.search.diffs import DiffError, apply_blocks, has_blocks, parse_blocks
from services.evolver.search.surrogate import TableRow, named_constants, render_table
from services.evolver.store import generations as generation_store
from services.evolver.store import programs as program_store
from services.evolver.store import runs as run_store
from shared.db.models import EvolutionProgram
from shared.sandbox.gate import check_source
from shared.states import HostedContract, LlmRole, ProgramOrigin, ProgramStatus


class Children(RunTools):
    def __init__(
        self,
        ctx: run_store.RunContext,
        state: EngineState,
        llm: RecordedLlm,
        lease_lost: Callable[[], bool],
    ) -> None:
        super().__init__(ctx, state)
        self.llm = llm
        self.lease_lost = lease_lost
        self._constants: dict[uuid.UUID, dict[str, float]] = {}

    def plant_seeds(self, seeds: Sequence[str]) -> None:
        """Generation 0's programs, spread over the islands; evaluated by the first steps."""
        for index, source in enumerate(seeds):
            problems = check_source(source, contract=HostedContract.DECIDE)
            program_store.insert_program(
                self.ctx.id,
                program_store.NewProgram(
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

    def spawn_child(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        limits = self.config.limits
        if self.state.spawned >= limits.max_children_per_generation:
            raise ToolError(
                f"this generation has spawned {self.state.spawned} children, the limit; evaluate them "
                "and advance the generation"
            )
        self.state.spawned += 1
        progs = program_store.program_views(self.ctx.id)
        island = (self.state.spawned - 1) % self.config.search.islands
        rng = self.rng(f"spawn:{key}")
        parameters = self.parameters()
        generation = (
            generation_store.generation_row(self.ctx.id, self.state.generation - 1)
            if self.state.generation
            else None
        )
        selected = list(generation.selected_ids) if generation else []
        if "parent_id" in args:
            parent = self.program(str(args["parent_id"]))
            if parent.status == ProgramStatus.REJECTED:
                raise ToolError(f"p{parent.seq} was rejected by the gate; pick a program that runs")
            island = parent.island
            inspirations = [self.program(str(i)) for i in args.get("inspiration_ids", [])]
            how = "chosen by the root"
        else:
            islands = Islands.from_json(self.config.search.islands, run_store.counters(self.ctx.id).islands)
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
                parent, inspirations, how = self.row(fallback), [], "the only program"
            else:
                parent = self.row(draw.parent)
                inspirations = [self.row(i) for i in draw.inspirations]
                how = draw.how
            if "inspiration_ids" in args:
                inspirations = [self.program(str(i)) for i in args["inspiration_ids"]]
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
    ) -> program_store.Inserted:
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
            return program_store.insert_program(
                self.ctx.id,
                program_store.NewProgram(
                    origin=ProgramOrigin.REWRITE,
                    status=ProgramStatus.REJECTED,
                    code=text,
                    code_hash=f"none:{key}"[:64],
                    error=error,
                    **common,  # type: ignore[arg-type]
                ),
            )
        problems = check_source(code, contract=HostedContract.DECIDE)
        return program_store.insert_program(
            self.ctx.id,
            program_store.NewProgram(
                origin=origin,
                status=ProgramStatus.REJECTED if problems else ProgramStatus.PENDING,
                code=code,
                code_hash=normalised_hash(code),
                diff=unified_diff(parent.code, code, f"p{parent.seq}", "child"),
                error=_gate_text(problems) if problems else None,
                **common,  # type: ignore[arg-type]
            ),
        )

    def _parent_change(self, parent: EvolutionProgram) -> tuple[str, str] | None:
        """The parent's own parent's name and the diff that made the parent, for the child prompt."""
        if parent.parent_id is None or not parent.diff:
            return None
        grandparent = program_store.program(parent.parent_id)
        return (f"p{grandparent.seq}", parent.diff) if grandparent is not None else None

    def _constants_table(self, parent: EvolutionProgram) -> str | None:
        """The recent evaluated programs' fitness and values of the parent's named constants, for
        the child prompt (search.constants_table rows; None when that is 0 or the parent has no
        named constant). Each program's constants are parsed once per worker."""
        limit = self.config.search.constants_table
        names = list(named_constants(parent.code))
        if limit <= 0 or not names:
            return None
        measured = program_store.recent_evaluated(self.ctx.id, limit)
        missing = [m.id for m in measured if m.id not in self._constants]
        for program_id, code in program_store.codes(missing).items():
            self._constants[program_id] = named_constants(code)
        rows = [
            TableRow(f"p{m.seq}", m.fitness, m.matches, self._constants.get(m.id, {}))
            for m in measured
            if m.matches > 0
        ]
        return render_table(names, rows) if rows else None


def _gate_text(problems: Sequence[Any]) -> str:
    return "the static gate refused the program: " + "; ".join(str(p) for p in problems[:20])


def _explanation(answer: str) -> str:
    head = answer.split("```", 1)[0].split("<<<<<<<", 1)[0]
    return " ".join(head.split())[:2_000]
