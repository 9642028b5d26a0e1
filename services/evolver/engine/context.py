"""What every part of the toolbox reads: the run, the engine's state, the root's current parameters,
a program by the name the root gives it ("p12"), and randomness seeded by the step key, so a step
run again draws the same."""

from __future__ import annotations

import random
from typing import Any

from services.evolver.engine.state import EngineState, ToolError
from services.evolver.search.database import ProgramView
from services.evolver.store import programs as program_store
from services.evolver.store import runs as run_store
from shared.db.models import EvolutionProgram


class RunTools:
    """The run and the engine's state, shared by the toolbox's parts (one `EngineState` for all)."""

    def __init__(self, ctx: run_store.RunContext, state: EngineState) -> None:
        self.ctx = ctx
        self.state = state
        self.config = ctx.config

    def parameters(self) -> dict[str, Any]:
        current = run_store.counters(self.ctx.id).parameters
        return {**self.config.initial_parameters(), **current}

    def program(self, program_id: str) -> EvolutionProgram:
        row = program_store.program_by_seq(self.ctx.id, _seq(program_id))
        if row is None:
            raise ToolError(f"there is no program {program_id} in this run")
        return row

    def row(self, view: ProgramView) -> EvolutionProgram:
        row = program_store.program(view.id)
        assert row is not None
        return row

    def rng(self, key: str) -> random.Random:
        return random.Random(f"{self.config.random_seed}:{key}")


def _seq(program_id: str) -> int:
    if not (program_id.startswith("p") and program_id[1:].isdigit()):
        raise ToolError(f"{program_id!r} is not a program id (they look like p12)")
    return int(program_id[1:])
