"""The run's books: the root's `advance_generation`, `modify_parameters` and `terminate` tools, and
the engine's own closing of a generation and of the run. Each change is written once per step key,
with its event."""

from __future__ import annotations

from typing import Any

from services.evolver import metrics
from services.evolver.contract import MUTABLE_PARAMETERS, PARAMETER_UPDATES
from services.evolver.engine.context import RunTools
from services.evolver.engine.judging import Judge
from services.evolver.engine.state import EngineState, ToolError
from services.evolver.llm.schema import validate
from services.evolver.search import database
from services.evolver.search.database import Islands
from services.evolver.store import generations as generation_store
from services.evolver.store import programs as program_store
from services.evolver.store import runs as run_store
from shared.states import EvolutionEventKind, ProgramStatus

_UPDATES_ARGUMENT: dict[str, Any] = {
    "type": "object",
    "properties": {"updates": PARAMETER_UPDATES},
    "required": ["updates"],
}
"""Checked again here (the client checked the whole call): nothing reaches the run's parameters
that their schema refuses, whoever calls the tool."""


class Bookkeeping(RunTools):
    def __init__(self, ctx: run_store.RunContext, state: EngineState, judge: Judge) -> None:
        super().__init__(ctx, state)
        self.judge = judge

    def advance_generation(self, args: dict[str, Any], _key: str) -> dict[str, Any]:
        limits = self.config.limits
        g = self.state.generation
        if g + 1 >= limits.max_generations:
            raise ToolError(
                f"generation {g} is the last one allowed "
                f"(max_generations {limits.max_generations}); terminate"
            )
        selected = [self.program(str(i)) for i in args["selected_ids"]]
        self.judge.evaluate_pending()
        runnable = [r for r in selected if r.status != ProgramStatus.REJECTED]
        if not runnable:
            raise ToolError("none of the selected programs runs; select evaluated programs")
        return self.close_generation([str(r.id) for r in runnable], str(args.get("reasoning", "")))

    def close_generation(self, selected: list[str], reasoning: str) -> dict[str, Any]:
        g = self.state.generation
        progs = program_store.program_views(self.ctx.id)
        stats = self._closing_stats(progs, g)
        if generation_store.close_generation(self.ctx.id, g, selected, reasoning or None, stats):
            metrics.record_generation(self.ctx.game, generation_store.generation_row(self.ctx.id, g))
        moves: list[tuple[int, int, str]] = []
        interval = int(self.parameters()["migration_interval"])
        if (g + 1) % interval == 0:
            counters = run_store.counters(self.ctx.id)
            islands = Islands.from_json(self.config.search.islands, counters.islands)
            moves = islands.migrate(progs)
            run_store.update_run(self.ctx.id, islands=islands.to_json())
            if moves:
                run_store.add_event(
                    self.ctx.id,
                    f"migration:{g + 1}",
                    g + 1,
                    EvolutionEventKind.MIGRATION,
                    {"moves": [{"from": a, "to": b, "program": p} for a, b, p in moves]},
                )
        by_id = {str(p.id): p.name for p in progs}
        run_store.add_event(
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

    def modify_parameters(self, args: dict[str, Any], key: str) -> dict[str, Any]:
        problem = validate(args, _UPDATES_ARGUMENT)
        if problem:
            raise ToolError(problem)
        clean = {
            name: int(value) if MUTABLE_PARAMETERS[name]["type"] == "integer" else float(value)
            for name, value in args["updates"].items()
        }
        before = self.parameters()
        run_store.update_run(self.ctx.id, parameters={**run_store.counters(self.ctx.id).parameters, **clean})
        run_store.add_event(
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

    def terminate(self, args: dict[str, Any], _key: str) -> dict[str, Any]:
        reason = str(args["reason"])
        named = str(args["best_program_id"]) if "best_program_id" in args else None
        if named is not None:
            self.program(named)
        self.finish(reason, named)
        return {"terminated": True, "reason": reason}

    def finish(self, reason: str, named_best: str | None = None) -> None:
        self.judge.evaluate_pending()
        # The last generation closes too, with its figures as they stand before the final rounds
        # (like every other generation's); nothing is selected, since no generation follows.
        g = self.state.generation
        stats = self._closing_stats(program_store.program_views(self.ctx.id), g)
        if generation_store.close_generation(
            self.ctx.id, g, [], f"the run ended: {reason}", stats, last=True
        ):
            metrics.record_generation(self.ctx.game, generation_store.generation_row(self.ctx.id, g))
        self.judge.final_round()
        counters = run_store.counters(self.ctx.id)
        best = program_store.program(counters.best_program_id) if counters.best_program_id else None
        run_store.update_run(self.ctx.id, termination_reason=reason)
        run_store.add_event(
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
