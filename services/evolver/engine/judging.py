"""How the run's programs are judged: the root's `evaluate_program` tool, the rematches of the kept
parents on each generation's matches, and the final rounds of the leaders before the run names its
best (with `evaluation.rematch`). Every evaluation is saved once, with the run's best, and counted in
the metrics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from services.evolver import metrics
from services.evolver.engine.context import RunTools
from services.evolver.engine.state import EngineState, Evaluator, ToolError
from services.evolver.search import database
from services.evolver.store import evaluations as evaluation_store
from services.evolver.store import generations as generation_store
from services.evolver.store import programs as program_store
from services.evolver.store import runs as run_store
from shared.db.models import EvolutionProgram
from shared.states import EvolutionEventKind, ProgramStatus

FINAL_ROUND_PROGRAMS = 4
"""With rematches, the leading programs that play the final rounds before the run names its best."""
FINAL_MIN_MATCHES = 36
"""A leader plays final rounds until it has played this many matches in all (at least one round),
so a young program's lucky start cannot make it the run's best."""
FINAL_MAX_ROUNDS = 4
"""Final rounds one program plays at most."""
FINAL_MAX_PASSES = 12
"""Passes over the leaders at most (a leader that sinks lets another one in, which then plays)."""


class Judge(RunTools):
    def __init__(self, ctx: run_store.RunContext, state: EngineState, evaluator: Evaluator) -> None:
        super().__init__(ctx, state)
        self.evaluator = evaluator

    def evaluate_program(self, args: dict[str, Any], _key: str) -> dict[str, Any]:
        row = self.program(str(args["program_id"]))
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
            saved = evaluation_store.save_evaluation(
                self.ctx.id, row.id, result, promotion_threshold=self.config.promotion_threshold
            )
            evaluation_store.update_nash(self.ctx.id)
            if saved.promoted_version_id is not None:
                run_store.add_event(
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
            fresh = program_store.program(row.id)
            assert fresh is not None
            row = fresh
        return _evaluation_summary(row)

    def _judge(
        self,
        play: Callable[[EvolutionProgram, dict[str, Any], int], evaluation_store.EvaluationRow],
        row: EvolutionProgram,
        scope: str,
    ) -> evaluation_store.EvaluationRow:
        """`play` (an evaluation or a rematch) on the matches of `scope`, counted in the metrics."""
        seed = self.rng(f"evaluate:{scope}").randrange(2**31)
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
        previous = generation_store.generation_row(self.ctx.id, g - 1)
        if previous is None:
            return
        selected = {str(i) for i in previous.selected_ids or []}
        for view in program_store.program_views(self.ctx.id):  # whole rows only for those still to play
            if str(view.id) in selected and not view.played_in(g):
                row = program_store.program(view.id)
                assert row is not None
                self.rematch_row(row, f"g{g}", f"generation:{g}", g)

    def rematch_row(self, row: EvolutionProgram, label: str, scope: str, generation: int | None) -> bool:
        """Play `row` on the matches of `scope` once (labelled `label`); whether it played now."""
        if row.status != ProgramStatus.EVALUATED or label in (row.metrics or {}).get("rounds", []):
            return False
        result = self._judge(self.evaluator.rematch, row, scope)
        before = row.fitness
        saved = evaluation_store.save_rematch(
            self.ctx.id,
            row.id,
            label,
            result,
            round_generation=generation,
            promotion_threshold=self.config.promotion_threshold,
        )
        evaluation_store.update_nash(self.ctx.id)
        run_store.add_event(
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
            promoted = program_store.program_by_seq(self.ctx.id, saved.promoted_seq or row.seq)
            run_store.add_event(
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
            for view in database.top(program_store.program_views(self.ctx.id), FINAL_ROUND_PROGRAMS):
                row = program_store.program(view.id)
                assert row is not None
                label = next_final_round(row)
                if label is not None:
                    played = self.rematch_row(row, label, label, None) or played
            if not played:
                return

    def evaluate_pending(self) -> None:
        self.rematch_parents()
        for view in program_store.program_views(self.ctx.id):
            if view.status == ProgramStatus.PENDING:
                row = program_store.program(view.id)
                assert row is not None
                self.evaluate_row(row)


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
