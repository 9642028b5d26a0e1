"""Generations: opened, closed once (with the root's selection and the figures as it closes), read
back."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert

from shared.db.models import EvolutionGeneration, EvolutionRun
from shared.db.session import session_scope


def open_generation(run_id: uuid.UUID, number: int) -> None:
    with session_scope() as session:
        session.execute(
            insert(EvolutionGeneration)
            .values(run_id=run_id, number=number, selected_ids=[], stats={})
            .on_conflict_do_nothing()
        )
        session.commit()


def close_generation(
    run_id: uuid.UUID,
    number: int,
    selected: list[str],
    reasoning: str | None,
    stats: dict[str, Any],
    *,
    last: bool = False,
) -> bool:
    """Close generation `number` and make `number + 1` the run's current one (with `last`, the run
    is ending: no generation follows); False when it was closed already (the step ran before a
    crash), in which case nothing changes."""
    with session_scope() as session:
        row = session.get(EvolutionGeneration, (run_id, number), with_for_update=True)
        if row is None or row.closed_at is not None:
            session.rollback()
            return False
        row.closed_at = datetime.now(UTC)
        row.selected_ids = selected
        row.reasoning = reasoning
        row.stats = stats
        if not last:
            session.execute(
                insert(EvolutionGeneration)
                .values(run_id=run_id, number=number + 1, selected_ids=[], stats={})
                .on_conflict_do_nothing()
            )
            session.execute(
                update(EvolutionRun).where(EvolutionRun.id == run_id).values(generation=number + 1)
            )
        session.commit()
        return True


def generation_row(run_id: uuid.UUID, number: int) -> EvolutionGeneration | None:
    with session_scope() as session:
        row = session.get(EvolutionGeneration, (run_id, number))
        if row is not None:
            session.expunge(row)
        return row


def field_leader_generations(run_id: uuid.UUID) -> list[int]:
    """For each closed generation, the generation in which the leader of its field was made (as
    recorded when it closed; see database.trends)."""
    made = EvolutionGeneration.stats["leader"]["generation"].as_integer()
    with session_scope() as session:
        return list(
            session.scalars(
                select(made)
                .where(
                    EvolutionGeneration.run_id == run_id,
                    EvolutionGeneration.closed_at.is_not(None),
                    made.is_not(None),
                )
                .order_by(EvolutionGeneration.number)
            )
        )
