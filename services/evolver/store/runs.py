"""A run's row: what a chunk reads at its start, the run's counters and parameters, and its event
log (one event per step key)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert

from shared.config import Settings, get_settings
from shared.crypto import decrypt_secret
from shared.db.models import EvolutionEvent, EvolutionRun
from shared.db.session import session_scope
from shared.evolution.config import EvolutionConfig
from shared.states import EvolutionEventKind


@dataclass(frozen=True, slots=True)
class RunContext:
    """What a chunk needs to know about its run, read once at its start."""

    id: uuid.UUID
    owner_id: uuid.UUID
    name: str
    game: str
    config: EvolutionConfig
    api_key: str | None


def load_context(run_id: uuid.UUID, settings: Settings | None = None) -> RunContext | None:
    settings = settings or get_settings()
    with session_scope() as session:
        run = session.get(EvolutionRun, run_id)
        if run is None:
            return None
        key = decrypt_secret(settings, run.api_key_encrypted) if run.api_key_encrypted else None
        return RunContext(
            run.id, run.owner_id, run.name, run.game, EvolutionConfig.model_validate(run.config), key
        )


@dataclass(frozen=True, slots=True)
class RunCounters:
    generation: int
    parameters: dict[str, Any]
    best_program_id: uuid.UUID | None
    best_fitness: float | None
    spent_usd: float
    tokens: int
    llm_calls: int
    elapsed_s: float
    islands: dict[str, Any]
    termination_reason: str | None


def counters(run_id: uuid.UUID) -> RunCounters:
    with session_scope() as session:
        run = session.get(EvolutionRun, run_id)
        assert run is not None
        return RunCounters(
            run.generation,
            dict(run.parameters or {}),
            run.best_program_id,
            run.best_fitness,
            run.spent_usd,
            run.tokens,
            run.llm_calls,
            run.elapsed_s,
            dict(run.islands or {}),
            run.termination_reason,
        )


def update_run(run_id: uuid.UUID, **values: Any) -> None:
    with session_scope() as session:
        session.execute(update(EvolutionRun).where(EvolutionRun.id == run_id).values(**values))
        session.commit()


def add_elapsed(run_id: uuid.UUID, seconds: float) -> None:
    with session_scope() as session:
        session.execute(
            update(EvolutionRun)
            .where(EvolutionRun.id == run_id)
            .values(elapsed_s=EvolutionRun.elapsed_s + seconds)
        )
        session.commit()


def add_event(
    run_id: uuid.UUID, key: str, generation: int, kind: EvolutionEventKind, data: dict[str, Any]
) -> None:
    """Once per key: a step run again does not log twice."""
    with session_scope() as session:
        session.execute(
            insert(EvolutionEvent)
            .values(run_id=run_id, key=key, generation=generation, kind=kind, data=data)
            .on_conflict_do_nothing(constraint="uq_evolution_events_run_key")
        )
        session.commit()
