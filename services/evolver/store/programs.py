"""Programs: stored once per step key and once per normalised code, numbered ("p<seq>") within the
run; read whole, as `ProgramView`s for the program database's rules, or as fitness and matches for
the constants table."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import func, select

from services.evolver.search import database
from shared.db.models import EvolutionProgram, EvolutionRun
from shared.db.session import session_scope
from shared.states import ProgramOrigin, ProgramStatus


def programs(run_id: uuid.UUID) -> list[EvolutionProgram]:
    """Every program of the run, detached, oldest first."""
    with session_scope() as session:
        rows = list(
            session.scalars(
                select(EvolutionProgram)
                .where(EvolutionProgram.run_id == run_id)
                .order_by(EvolutionProgram.seq)
            )
        )
        for row in rows:
            session.expunge(row)
        return rows


def program_views(run_id: uuid.UUID) -> list[database.ProgramView]:
    """What the program database's rules need of every program, without code or feedback (the run
    block, the analysis tools and sampling read these at every step)."""
    columns = (
        EvolutionProgram.id,
        EvolutionProgram.seq,
        EvolutionProgram.generation,
        EvolutionProgram.island,
        EvolutionProgram.status,
        EvolutionProgram.fitness,
        EvolutionProgram.cell_x,
        EvolutionProgram.cell_y,
        EvolutionProgram.parent_id,
        EvolutionProgram.nash_fitness,
        EvolutionProgram.metrics["round"].as_integer().label("last_round"),
    )
    with session_scope() as session:
        rows = session.execute(
            select(*columns).where(EvolutionProgram.run_id == run_id).order_by(EvolutionProgram.seq)
        ).all()
    return [
        database.ProgramView(
            id=r.id,
            seq=r.seq,
            generation=r.generation,
            island=r.island,
            status=r.status,
            fitness=r.fitness,
            cell=(r.cell_x, r.cell_y) if r.cell_x is not None and r.cell_y is not None else None,
            parent_id=r.parent_id,
            nash_fitness=r.nash_fitness,
            last_round=r.last_round,
        )
        for r in rows
    ]


def program_by_seq(run_id: uuid.UUID, seq: int) -> EvolutionProgram | None:
    with session_scope() as session:
        row = session.scalars(
            select(EvolutionProgram).where(EvolutionProgram.run_id == run_id, EvolutionProgram.seq == seq)
        ).one_or_none()
        if row is not None:
            session.expunge(row)
        return row


@dataclass(frozen=True, slots=True)
class Measured:
    """An evaluated program's fitness and how many matches it rests on."""

    id: uuid.UUID
    seq: int
    fitness: float
    matches: int


def recent_evaluated(run_id: uuid.UUID, limit: int) -> list[Measured]:
    """The `limit` most recently made evaluated programs, oldest first."""
    with session_scope() as session:
        rows = session.execute(
            select(
                EvolutionProgram.id,
                EvolutionProgram.seq,
                EvolutionProgram.fitness,
                EvolutionProgram.metrics["matches"].as_integer().label("matches"),
            )
            .where(
                EvolutionProgram.run_id == run_id,
                EvolutionProgram.status == ProgramStatus.EVALUATED,
                EvolutionProgram.fitness.is_not(None),
            )
            .order_by(EvolutionProgram.seq.desc())
            .limit(limit)
        ).all()
    return [Measured(r.id, r.seq, float(r.fitness), int(r.matches or 0)) for r in reversed(rows)]


def codes(program_ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    if not program_ids:
        return {}
    with session_scope() as session:
        rows = session.execute(
            select(EvolutionProgram.id, EvolutionProgram.code).where(EvolutionProgram.id.in_(program_ids))
        ).all()
    return {r.id: r.code for r in rows}


def program(program_id: uuid.UUID) -> EvolutionProgram | None:
    with session_scope() as session:
        row = session.get(EvolutionProgram, program_id)
        if row is not None:
            session.expunge(row)
        return row


@dataclass(frozen=True, slots=True)
class NewProgram:
    created_key: str
    generation: int
    island: int
    origin: ProgramOrigin
    status: ProgramStatus
    code: str
    code_hash: str
    parent_id: uuid.UUID | None = None
    inspiration_ids: tuple[uuid.UUID, ...] = ()
    diff: str | None = None
    focus: str | None = None
    explanation: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Inserted:
    program: EvolutionProgram
    duplicate_of: EvolutionProgram | None
    """Set when identical code (by normalised hash) was stored already: nothing new was stored."""


def insert_program(run_id: uuid.UUID, new: NewProgram) -> Inserted:
    """Store a program once: the same step key finds what it stored before; identical code finds
    the program that has it. Numbers ("p<seq>") are given under a lock on the run row."""
    with session_scope() as session:
        session.execute(select(EvolutionRun.id).where(EvolutionRun.id == run_id).with_for_update())
        same_step = session.scalars(
            select(EvolutionProgram).where(
                EvolutionProgram.run_id == run_id, EvolutionProgram.created_key == new.created_key
            )
        ).first()
        if same_step is not None:
            session.expunge(same_step)
            session.rollback()
            return Inserted(same_step, None)
        same_code = session.scalars(
            select(EvolutionProgram).where(
                EvolutionProgram.run_id == run_id, EvolutionProgram.code_hash == new.code_hash
            )
        ).first()
        if same_code is not None:
            session.expunge(same_code)
            session.rollback()
            return Inserted(same_code, same_code)
        seq = session.scalar(select(func.max(EvolutionProgram.seq)).where(EvolutionProgram.run_id == run_id))
        row = EvolutionProgram(
            id=uuid.uuid4(),
            run_id=run_id,
            seq=0 if seq is None else seq + 1,
            generation=new.generation,
            island=new.island,
            parent_id=new.parent_id,
            inspiration_ids=[str(i) for i in new.inspiration_ids],
            origin=new.origin,
            status=new.status,
            code=new.code,
            code_hash=new.code_hash,
            diff=new.diff,
            focus=new.focus,
            explanation=new.explanation,
            error=new.error,
            created_key=new.created_key,
            metrics={},
            descriptors={},
            feedback={},
            tournament_matches={},
        )
        session.add(row)
        session.commit()
        session.refresh(row)
        session.expunge(row)
        return Inserted(row, None)


def save_tournament_matches(program_id: uuid.UUID, mapping: dict[str, str]) -> None:
    with session_scope() as session:
        row = session.get(EvolutionProgram, program_id, with_for_update=True)
        assert row is not None
        row.tournament_matches = {**(row.tournament_matches or {}), **mapping}
        session.commit()
