"""What the root reads about the run: the run block that ends every tool result, the
`performance_analysis` and `historical_trends` tools, and the snapshot its sandboxed `python` tool
runs over."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from services.evolver.engine.context import RunTools
from services.evolver.engine.state import EngineState, ToolError
from services.evolver.search import database
from services.evolver.search.database import ProgramView
from services.evolver.store import generations as generation_store
from services.evolver.store import programs as program_store
from services.evolver.store import runs as run_store
from shared.db.models import EvolutionProgram
from shared.states import ProgramStatus

TOP_IN_RUN_BLOCK = 8


class Reports(RunTools):
    def __init__(
        self,
        ctx: run_store.RunContext,
        state: EngineState,
        python_runner: Callable[[str, dict[str, Any]], str] | None,
    ) -> None:
        super().__init__(ctx, state)
        self.python_runner = python_runner

    def run_block(self) -> dict[str, Any]:
        counters = run_store.counters(self.ctx.id)
        progs = program_store.program_views(self.ctx.id)
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

    def performance_analysis(self, args: dict[str, Any], _key: str) -> dict[str, Any]:
        g = int(args.get("generation", self.state.generation))
        if g > self.state.generation:
            raise ToolError(f"generation {g} has not started (the current one is {self.state.generation})")
        progs = program_store.program_views(self.ctx.id)
        search = self.config.search
        return {
            "statistics": database.generation_stats(progs, g, search.islands),
            "top": [_brief(p) for p in database.top(progs, 8, generation=g)],
            "best_overall": [_brief(p) for p in database.top(progs, 3)],
            "grid": database.occupancy(progs, search.grid_bins, search.islands),
        }

    def historical_trends(self, _args: dict[str, Any], _key: str) -> dict[str, Any]:
        return self._trends(program_store.program_views(self.ctx.id), self.state.generation)

    def _trends(self, progs: list[database.ProgramView], generation: int) -> dict[str, Any]:
        """With racing, judged by the leaders of the fields (common matches); see database.trends."""
        racing = self.config.evaluation.rematch
        leaders = generation_store.field_leader_generations(self.ctx.id) if racing else None
        return database.trends(progs, generation, field_leaders=leaders)

    def python(self, args: dict[str, Any], _key: str) -> dict[str, Any]:
        if self.python_runner is None:
            raise ToolError("the python tool is not available on this worker")
        rows = program_store.programs(self.ctx.id)
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


def _parent_name(rows: Sequence[EvolutionProgram], parent_id: uuid.UUID | None) -> str | None:
    if parent_id is None:
        return None
    return next((f"p{r.seq}" for r in rows if r.id == parent_id), None)


def _brief(p: ProgramView) -> dict[str, Any]:
    return {
        "id": p.name,
        "fitness": None if p.fitness is None else round(p.fitness, 4),
        "nash_fitness": None if p.nash_fitness is None else round(p.nash_fitness, 4),
        "generation": p.generation,
        "island": p.island,
        "cell": list(p.cell) if p.cell else None,
    }
