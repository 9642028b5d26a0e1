"""Evaluations and rematch rounds, saved with the run's best in one transaction; the run's
Nash-averaged fitness recomputed after each."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update

from services.evolver.store.bots import promote
from shared.config import get_settings
from shared.db.models import EvolutionProgram, EvolutionRun
from shared.db.session import session_scope
from shared.states import ProgramStatus


@dataclass(frozen=True, slots=True)
class EvaluationRow:
    status: ProgramStatus
    stage: str
    fitness: float
    metrics: dict[str, Any]
    descriptors: dict[str, Any]
    cell: tuple[int, int] | None
    feedback: dict[str, Any]
    error: str | None


@dataclass(frozen=True, slots=True)
class Saved:
    new_best: bool
    promoted_version_id: uuid.UUID | None
    promoted_seq: int | None = None
    """The promoted program's number (after a rematch it may be another program than the one saved)."""


def save_evaluation(
    run_id: uuid.UUID, program_id: uuid.UUID, result: EvaluationRow, *, promotion_threshold: float
) -> Saved:
    """The evaluation, and the run's best when it beats it, in one transaction. A new best at or
    above the promotion threshold becomes a new version of the run's hosted bot (created on the
    first promotion, owned by the run's owner, on the ladder). Saving twice changes nothing."""
    settings = get_settings()
    with session_scope() as session:
        run = session.get(EvolutionRun, run_id, with_for_update=True)
        row = session.get(EvolutionProgram, program_id, with_for_update=True)
        assert run is not None
        assert row is not None
        if row.status in (ProgramStatus.EVALUATED, ProgramStatus.FAILED):
            session.rollback()
            return Saved(False, None)
        row.status = result.status
        row.stage = result.stage
        row.fitness = result.fitness
        row.metrics = result.metrics
        row.descriptors = result.descriptors
        row.cell_x, row.cell_y = result.cell if result.cell is not None else (None, None)
        row.feedback = result.feedback
        row.error = result.error
        row.evaluated_at = datetime.now(UTC)
        new_best = result.status == ProgramStatus.EVALUATED and (
            run.best_fitness is None or result.fitness > run.best_fitness
        )
        promoted: uuid.UUID | None = None
        if new_best:
            run.best_fitness = result.fitness
            run.best_program_id = row.id
            if result.fitness >= promotion_threshold:
                promoted = promote(session, settings, run, row)
        session.commit()
        return Saved(new_best, promoted)


def save_rematch(
    run_id: uuid.UUID,
    program_id: uuid.UUID,
    round_label: str,
    result: EvaluationRow,
    *,
    round_generation: int | None,
    promotion_threshold: float,
) -> Saved:
    """A rematch round's judgement (over all the program's matches) in one transaction, once per
    round: a round already saved changes nothing. The run's best is then the program with the
    highest fitness again (a rematch can lower the best's, or raise another's); a new best at or
    above the threshold is promoted if it was not before."""
    settings = get_settings()
    with session_scope() as session:
        run = session.get(EvolutionRun, run_id, with_for_update=True)
        row = session.get(EvolutionProgram, program_id, with_for_update=True)
        assert run is not None
        assert row is not None
        metrics = dict(row.metrics or {})
        if round_label in metrics.get("rounds", []) or row.status != ProgramStatus.EVALUATED:
            session.rollback()
            return Saved(False, None)
        row.fitness = result.fitness
        row.metrics = {
            **result.metrics,
            "rounds": [*metrics.get("rounds", []), round_label],
            "round": metrics.get("round") if round_generation is None else round_generation,
            "round_seconds": {**metrics.get("round_seconds", {}), round_label: result.metrics.get("seconds")},
        }
        row.descriptors = result.descriptors
        row.cell_x, row.cell_y = result.cell if result.cell is not None else (None, None)
        row.feedback = result.feedback
        session.flush()
        leader = session.scalars(
            select(EvolutionProgram)
            .where(
                EvolutionProgram.run_id == run_id,
                EvolutionProgram.status == ProgramStatus.EVALUATED,
                EvolutionProgram.fitness.is_not(None),
            )
            .order_by(EvolutionProgram.fitness.desc(), EvolutionProgram.seq)
            .limit(1)
        ).one()
        new_best = leader.id != run.best_program_id
        run.best_program_id, run.best_fitness = leader.id, leader.fitness
        promoted: uuid.UUID | None = None
        if (
            new_best
            and leader.fitness is not None
            and leader.fitness >= promotion_threshold
            and leader.promoted_version_id is None
        ):
            promoted = promote(session, settings, run, leader)
        session.commit()
        return Saved(new_best, promoted, leader.seq if promoted is not None else None)


def update_nash(run_id: uuid.UUID) -> dict[str, float]:
    """Recompute every evaluated program's Nash-averaged fitness from the run's payoff table
    (shared.evolution.payoff) and store the ones that changed; returns program name -> Nash
    fitness. It runs after every evaluation, so it reads only each program's per-opponent record
    (not its code and match records)."""
    from shared.evolution.payoff import nash_average, payoff_table

    with session_scope() as session:
        rows = session.execute(
            select(
                EvolutionProgram.id,
                EvolutionProgram.seq,
                EvolutionProgram.nash_fitness,
                EvolutionProgram.metrics["per_opponent"].label("per_opponent"),
            ).where(EvolutionProgram.run_id == run_id, EvolutionProgram.status == ProgramStatus.EVALUATED)
        ).all()
        table = payoff_table((f"p{r.seq}", {"per_opponent": r.per_opponent}) for r in rows)
        fitness = nash_average(table).fitness
        changes = [
            {"id": r.id, "nash_fitness": value}
            for r in rows
            if (value := _rounded(fitness.get(f"p{r.seq}"))) is not None and value != r.nash_fitness
        ]
        if changes:
            session.execute(update(EvolutionProgram), changes)
        session.commit()
        return fitness


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
