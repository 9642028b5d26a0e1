"""The engine's checkpoint, the evaluator its tools call, and the two ways a tool stops: a refusal
(its message goes back to the root) or a spent budget (the run ends)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from services.evolver.store import evaluations as evaluation_store
from shared.db.models import EvolutionProgram


class Evaluator(Protocol):
    """Runs the evaluation cascade on one stored program (services/evolver/evaluation)."""

    def evaluate(
        self, program: EvolutionProgram, parameters: dict[str, Any], seed: int
    ) -> evaluation_store.EvaluationRow: ...

    def rematch(
        self, program: EvolutionProgram, parameters: dict[str, Any], seed: int
    ) -> evaluation_store.EvaluationRow: ...


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
