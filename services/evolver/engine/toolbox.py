"""The root's tools (contract.TOOL_SPECS), each a method that takes the step key it runs under.

Every tool is idempotent per key: a step run again after a crash finds the program, the call, the
evaluation or the closed generation it produced and answers the same way, so a resumed run never
duplicates anything. Whatever a tool is asked, the hard limits hold: children per generation,
generations, and (through RecordedLlm) money and tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from services.evolver.contract import ToolName
from services.evolver.engine.bookkeeping import Bookkeeping
from services.evolver.engine.children import Children
from services.evolver.engine.judging import Judge
from services.evolver.engine.reports import Reports
from services.evolver.engine.state import EngineState, Evaluator, ToolError
from services.evolver.llm.calls import RecordedLlm
from services.evolver.store import runs as run_store


class Toolbox:
    """The root's tools by name, over four parts that share the run and the engine's state: the
    programs made (`Children`), how they are judged (`Judge`), the run's books (`Bookkeeping`) and
    what the root reads (`Reports`)."""

    def __init__(
        self,
        ctx: run_store.RunContext,
        state: EngineState,
        llm: RecordedLlm,
        evaluator: Evaluator,
        *,
        python_runner: Callable[[str, dict[str, Any]], str] | None = None,
        lease_lost: Callable[[], bool] = lambda: False,
    ) -> None:
        self.children = Children(ctx, state, llm, lease_lost)
        self.judge = Judge(ctx, state, evaluator)
        self.books = Bookkeeping(ctx, state, self.judge)
        self.reports = Reports(ctx, state, python_runner)
        self.tools: dict[ToolName, Callable[[dict[str, Any], str], dict[str, Any]]] = {
            ToolName.SPAWN_CHILD: self.children.spawn_child,
            ToolName.EVALUATE_PROGRAM: self.judge.evaluate_program,
            ToolName.PERFORMANCE_ANALYSIS: self.reports.performance_analysis,
            ToolName.HISTORICAL_TRENDS: self.reports.historical_trends,
            ToolName.ADVANCE_GENERATION: self.books.advance_generation,
            ToolName.MODIFY_PARAMETERS: self.books.modify_parameters,
            ToolName.TERMINATE: self.books.terminate,
            ToolName.PYTHON: self.reports.python,
        }

    def run_block(self) -> dict[str, Any]:
        """Where the run stands, at the end of every tool result."""
        return self.reports.run_block()

    def call(self, name: str, arguments: dict[str, Any], key: str) -> dict[str, Any]:
        """Run one tool call; a refusal is an {"ok": false} result, never an exception (except a
        spent budget, which ends the run)."""
        try:
            handler = self.tools[ToolName(name)]
        except (KeyError, ValueError):
            return {"ok": False, "error": f"unknown tool {name!r}", "run": self.run_block()}
        try:
            result = handler(arguments, key)
        except ToolError as exc:
            return {"ok": False, "error": str(exc), "run": self.run_block()}
        return {"ok": True, "result": result, "run": self.run_block()}

    # ------------------------------------------------------------ the engine's own steps
    def plant_seeds(self, seeds: Sequence[str]) -> None:
        self.children.plant_seeds(seeds)

    def evaluate_pending(self) -> None:
        self.judge.evaluate_pending()

    def close_generation(self, selected: list[str], reasoning: str) -> dict[str, Any]:
        return self.books.close_generation(selected, reasoning)

    def finish(self, reason: str, named_best: str | None = None) -> None:
        self.books.finish(reason, named_best)
