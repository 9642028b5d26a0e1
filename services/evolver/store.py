"""The evolver worker's database side.

Everything an engine step produces (an LLM call, a program, an evaluation, an event, a generation)
is written at once, in its own short transaction, under a key derived from the step: a step run
again after a crash finds what it wrote and reuses it. So a resumed run never pays for an LLM call
twice, never stores a program twice and never evaluates one twice, whatever chunk it died in.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from services.evolver import database
from shared import bots, quotas
from shared.config import Settings, get_settings
from shared.crypto import decrypt_secret
from shared.db.models import (
    Bot,
    EvolutionEvent,
    EvolutionGeneration,
    EvolutionLlmCall,
    EvolutionProgram,
    EvolutionRun,
    User,
)
from shared.db.session import session_scope
from shared.evolution.allowance import operator_allowance
from shared.evolution.config import EvolutionConfig
from shared.states import (
    BotOrigin,
    BotStatus,
    EvolutionEventKind,
    HostedContract,
    LlmCallStatus,
    LlmRole,
    ProgramOrigin,
    ProgramStatus,
    UserRole,
)


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


# ---------------------------------------------------------------- LLM calls
@dataclass(frozen=True, slots=True)
class StoredCall:
    key: str
    status: LlmCallStatus
    failure: str | None
    answer: str | None
    tool_calls: list[dict[str, Any]]
    rejected_tool_calls: list[dict[str, Any]]
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_ms: float
    attempts: int
    error: str | None
    usage_estimated: bool


def _stored(row: EvolutionLlmCall) -> StoredCall:
    return StoredCall(
        row.key,
        row.status,
        row.failure,
        row.answer,
        list(row.tool_calls or []),
        list(row.rejected_tool_calls or []),
        row.prompt_tokens,
        row.completion_tokens,
        row.cost_usd,
        row.latency_ms,
        row.attempts,
        row.error,
        row.usage_estimated,
    )


def find_call(run_id: uuid.UUID, key: str) -> StoredCall | None:
    with session_scope() as session:
        row = session.scalars(
            select(EvolutionLlmCall).where(EvolutionLlmCall.run_id == run_id, EvolutionLlmCall.key == key)
        ).one_or_none()
        return None if row is None else _stored(row)


def record_call(
    run_id: uuid.UUID,
    *,
    key: str,
    role: LlmRole,
    model: str,
    generation: int,
    messages: list[dict[str, Any]],
    call: StoredCall,
) -> bool:
    """Record a call and add its cost and tokens to the run, in one transaction; False (and nothing
    added) when a call with this key was recorded already."""
    with session_scope() as session:
        inserted = session.execute(
            insert(EvolutionLlmCall)
            .values(
                id=uuid.uuid4(),
                run_id=run_id,
                key=key,
                role=role,
                model=model,
                generation=generation,
                status=call.status,
                failure=call.failure,
                messages=messages,
                answer=call.answer,
                tool_calls=call.tool_calls,
                rejected_tool_calls=call.rejected_tool_calls,
                prompt_tokens=call.prompt_tokens,
                completion_tokens=call.completion_tokens,
                usage_estimated=call.usage_estimated,
                cost_usd=call.cost_usd,
                latency_ms=call.latency_ms,
                attempts=call.attempts,
                error=call.error,
            )
            .on_conflict_do_nothing(constraint="uq_evolution_llm_calls_run_key")
            .returning(EvolutionLlmCall.id)
        ).scalar_one_or_none()
        if inserted is None:
            session.rollback()
            return False
        session.execute(
            update(EvolutionRun)
            .where(EvolutionRun.id == run_id)
            .values(
                spent_usd=EvolutionRun.spent_usd + call.cost_usd,
                tokens=EvolutionRun.tokens + call.prompt_tokens + call.completion_tokens,
                llm_calls=EvolutionRun.llm_calls + 1,
            )
        )
        session.commit()
        return True


def spend(run_id: uuid.UUID) -> tuple[float, int]:
    """(USD spent, tokens used) as recorded, the books the hard caps are checked against."""
    with session_scope() as session:
        row = session.execute(
            select(EvolutionRun.spent_usd, EvolutionRun.tokens).where(EvolutionRun.id == run_id)
        ).one()
        return float(row[0]), int(row[1])


def llm_usd_left_today(owner_id: uuid.UUID, settings: Settings) -> float:
    """What the owner's runs may still spend on LLM calls today (shared.quotas)."""
    with session_scope() as session:
        owner = session.get(User, owner_id)
        return math.inf if owner is None else quotas.llm_usd_left(session, settings, owner)


def operator_spent(owner_id: uuid.UUID, settings: Settings) -> tuple[float, float] | None:
    """(spent, cap) of the owner's allowance on the operator's endpoints; None for an admin."""
    with session_scope() as session:
        role = session.scalar(select(User.role).where(User.id == owner_id))
        if role == UserRole.ADMIN:
            return None
        allowance = operator_allowance(session, settings, owner_id)
        return allowance.spent_usd, allowance.cap_usd


# ---------------------------------------------------------------- events and generations
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


# ---------------------------------------------------------------- programs
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
        assert run is not None and row is not None
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
                promoted = _promote(session, settings, run, row)
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
        assert run is not None and row is not None
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
            promoted = _promote(session, settings, run, leader)
        session.commit()
        return Saved(new_best, promoted, leader.seq if promoted is not None else None)


def _promote(session: Session, settings: Settings, run: EvolutionRun, row: EvolutionProgram) -> uuid.UUID:
    notes = {"evolution_run": str(run.id), "program": f"p{row.seq}", "fitness": row.fitness}
    bot = session.get(Bot, run.bot_id) if run.bot_id else None
    if bot is None:
        owner = session.get(User, run.owner_id)
        assert owner is not None
        config = EvolutionConfig.model_validate(run.config)
        name = config.bot_name or f"evo-{run.name}"[:64]
        bot = bots.register_hosted_bot(
            session,
            settings,
            owner,
            name=_free_name(session, run.game, name),
            game=run.game,
            source=row.code,
            origin=BotOrigin.EVOLVER,
            notes=notes,
        )
        locked = session.get(EvolutionRun, run.id, with_for_update=True)
        assert locked is not None
        locked.bot_id = bot.id
        version_id = bot.current_version_id
    else:
        version = bots.add_version(session, settings, bot, source=row.code, notes=notes)
        version_id = version.id
    assert version_id is not None
    row.promoted_version_id = version_id
    return version_id


def _free_name(session: Session, game: str, name: str) -> str:
    taken = set(session.scalars(select(Bot.name).where(Bot.game == game, Bot.name.startswith(name[:56]))))
    if name not in taken:
        return name
    for n in range(2, 10_000):
        candidate = f"{name[:56]}-{n}"
        if candidate not in taken:
            return candidate
    return f"{name[:40]}-{uuid.uuid4().hex[:12]}"


def candidate_version(run_id: uuid.UUID, program_id: uuid.UUID) -> tuple[uuid.UUID, uuid.UUID]:
    """(bot id, version id) pinning this program for tournament matches: a version of the run's
    candidate bot, which is inactive so the ladder never seats it. Made once per program."""
    settings = get_settings()
    with session_scope() as session:
        run = session.get(EvolutionRun, run_id, with_for_update=True)
        row = session.get(EvolutionProgram, program_id, with_for_update=True)
        assert run is not None and row is not None
        bot = session.get(Bot, run.candidate_bot_id) if run.candidate_bot_id else None
        if bot is not None and row.version_id is not None:
            return bot.id, row.version_id
        if bot is None:
            owner = session.get(User, run.owner_id)
            assert owner is not None
            bot = bots.register_hosted_bot(
                session,
                settings,
                owner,
                name=_free_name(session, run.game, f"evo-{str(run.id)[:8]}-candidates"),
                game=run.game,
                source=row.code,
                origin=BotOrigin.EVOLVER,
                notes={"evolution_run": str(run.id), "program": f"p{row.seq}"},
                status=BotStatus.INACTIVE,
                status_reason="evolution candidates: plays only the run's evaluation matches",
            )
            run = session.get(EvolutionRun, run_id, with_for_update=True)
            row = session.get(EvolutionProgram, program_id, with_for_update=True)
            assert run is not None and row is not None
            run.candidate_bot_id = bot.id
            version_id = bot.current_version_id
            assert version_id is not None
            row.version_id = version_id
            session.commit()
            return bot.id, version_id
        version = bots.add_version(
            session,
            settings,
            bot,
            source=row.code,
            contract=HostedContract.DECIDE,
            notes={"evolution_run": str(run.id), "program": f"p{row.seq}"},
        )
        # add_version committed; pin the version on the program in a second short transaction
    with session_scope() as session:
        session.execute(
            update(EvolutionProgram).where(EvolutionProgram.id == program_id).values(version_id=version.id)
        )
        session.commit()
    return bot.id, version.id


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
