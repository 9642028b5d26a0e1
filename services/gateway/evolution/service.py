"""The gateway's views of evolution runs: rows to API models, and the derived views (lineage,
MAP-Elites grid, payoff table). Everything that changes a run is shared.evolution."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services.gateway.evolution.schemas import (
    EventOut,
    EvolutionRunDetail,
    EvolutionRunOut,
    GenerationOut,
    Grid,
    GridCell,
    Lineage,
    LineageNode,
    LlmCallDetail,
    LlmCallOut,
    PayoffCellOut,
    PayoffOut,
    PayoffRow,
    ProgramDetail,
    ProgramOut,
    SpendLineOut,
    SpendOut,
)
from services.gateway.runs.service import OwnedRuns, owned_fields
from shared import evolution, quotas
from shared.config import Settings
from shared.db.models import (
    EvolutionEvent,
    EvolutionGeneration,
    EvolutionLlmCall,
    EvolutionProgram,
    EvolutionRun,
    User,
)
from shared.evolution.payoff import nash_average, payoff_table
from shared.states import ProgramStatus

PREVIEW_CHARS = 300


def _names(session: Session, run: EvolutionRun) -> dict[uuid.UUID, str]:
    return evolution.seq_names(session, run)


def _name_of(names: dict[uuid.UUID, str], value: Any) -> str:
    try:
        return names.get(uuid.UUID(str(value)), str(value))
    except ValueError:
        return str(value)


def run_view(session: Session, run: EvolutionRun) -> EvolutionRunOut:
    best = _names(session, run).get(run.best_program_id) if run.best_program_id else None
    return EvolutionRunOut(
        **owned_fields(run),
        generation=run.generation,
        best_program=best,
        best_fitness=run.best_fitness,
        spent_usd=run.spent_usd,
        tokens=run.tokens,
        llm_calls=run.llm_calls,
        elapsed_s=run.elapsed_s,
        termination_reason=run.termination_reason,
    )


def run_detail(session: Session, run: EvolutionRun) -> EvolutionRunDetail:
    config: dict[str, Any] = run.config or {}
    limits: dict[str, Any] = config.get("limits") or {}
    return EvolutionRunDetail(
        **run_view(session, run).model_dump(),
        parameters=run.parameters or {},
        config=config,
        has_api_key=run.api_key_encrypted is not None,
        max_generations=int(limits.get("max_generations", 0)),
        max_cost_usd=limits.get("max_cost_usd"),
        max_tokens=limits.get("max_tokens"),
    )


def _may_resume(session: Session, settings: Settings, run: EvolutionRun) -> None:
    """A run on one of the platform's endpoints spends its owner's allowance: none left, no resume."""
    if evolution.EvolutionConfig.model_validate(run.config).llm.endpoint is not None:
        owner = session.get(User, run.owner_id)
        if owner is not None:
            evolution.require_operator_allowance(session, settings, owner)


EVOLUTION_RUNS = OwnedRuns(
    quota=quotas.RunKind.EVOLUTION,
    get_run=evolution.get_run,
    list_runs=evolution.list_runs,
    stop_run=evolution.stop_run,
    resume_run=evolution.resume_run,
    run_view=run_view,
    run_detail=run_detail,
    may_resume=_may_resume,
)
"""Evolution runs as owned runs: the API's create, list, show, stop and resume."""


def generation_view(row: EvolutionGeneration, names: dict[uuid.UUID, str]) -> GenerationOut:
    return GenerationOut(
        number=row.number,
        started_at=row.started_at,
        closed_at=row.closed_at,
        stats=row.stats or {},
        selected=[_name_of(names, pid) for pid in row.selected_ids or []],
        reasoning=row.reasoning,
    )


def _cell(row: EvolutionProgram) -> list[int] | None:
    return [row.cell_x, row.cell_y] if row.cell_x is not None and row.cell_y is not None else None


def program_view(row: EvolutionProgram, names: dict[uuid.UUID, str]) -> ProgramOut:
    return ProgramOut(
        name=f"p{row.seq}",
        id=row.id,
        seq=row.seq,
        generation=row.generation,
        island=row.island,
        origin=row.origin,
        status=row.status,
        parent=names.get(row.parent_id) if row.parent_id else None,
        fitness=row.fitness,
        nash_fitness=row.nash_fitness,
        stage=row.stage,
        descriptors=row.descriptors or {},
        cell=_cell(row),
        focus=row.focus,
        explanation=row.explanation,
        error=row.error,
        created_at=row.created_at,
        evaluated_at=row.evaluated_at,
    )


def program_detail(session: Session, run: EvolutionRun, row: EvolutionProgram) -> ProgramDetail:
    names = _names(session, run)
    parent = session.get(EvolutionProgram, row.parent_id) if row.parent_id else None
    children = children_of(session, run, row)
    return ProgramDetail(
        **program_view(row, names).model_dump(),
        code=row.code,
        diff=row.diff,
        metrics=row.metrics or {},
        feedback=row.feedback or {},
        parent_fitness=parent.fitness if parent is not None else None,
        inspirations=[_name_of(names, pid) for pid in row.inspiration_ids or []],
        children=children,
    )


def children_of(session: Session, run: EvolutionRun, row: EvolutionProgram) -> list[str]:
    seqs = session.scalars(
        select(EvolutionProgram.seq)
        .where(EvolutionProgram.run_id == run.id, EvolutionProgram.parent_id == row.id)
        .order_by(EvolutionProgram.seq)
    )
    return [f"p{seq}" for seq in seqs]


def lineage(run: EvolutionRun, rows: Sequence[EvolutionProgram]) -> Lineage:
    names = {r.id: f"p{r.seq}" for r in rows}
    return Lineage(
        nodes=[
            LineageNode(
                name=names[r.id],
                generation=r.generation,
                island=r.island,
                fitness=r.fitness,
                status=r.status,
                origin=r.origin,
                parent=names.get(r.parent_id) if r.parent_id else None,
            )
            for r in rows
        ],
        best=names.get(run.best_program_id) if run.best_program_id else None,
    )


def _bin(value: Any, bins: int) -> int | None:
    if not isinstance(value, int | float):
        return None
    return min(bins - 1, max(0, int(min(1.0, max(0.0, float(value))) * bins)))


def descriptor_order(rows: Sequence[EvolutionProgram], bins: int) -> list[str]:
    """The x and y descriptors' names. The descriptors are stored as a JSON object (whose key
    order the database does not keep), so the order is the one that agrees with the stored cells
    of most programs; alphabetical when nothing tells them apart."""
    keys: list[str] = sorted({k for r in rows for k in (r.descriptors or {})})
    if len(keys) != 2:
        return keys[:2]
    first, second = keys
    agree = 0
    for r in rows:
        if r.cell_x is None or r.cell_y is None or not r.descriptors:
            continue
        a, b = _bin(r.descriptors.get(first), bins), _bin(r.descriptors.get(second), bins)
        agree += int((a, b) == (r.cell_x, r.cell_y)) - int((b, a) == (r.cell_x, r.cell_y))
    return [second, first] if agree < 0 else [first, second]


def grid(run: EvolutionRun, rows: Sequence[EvolutionProgram]) -> Grid:
    """The MAP-Elites grid: each cell's elite (best fitness, then the oldest) among evaluated
    programs, and how many cells each island's programs fill."""
    search: dict[str, Any] = (run.config or {}).get("search") or {}
    bins = int(search.get("grid_bins", 5))
    islands = int(search.get("islands", 1))
    placed = [
        r
        for r in rows
        if r.status == ProgramStatus.EVALUATED and r.cell_x is not None and r.cell_y is not None
    ]
    elites: dict[tuple[int, int], EvolutionProgram] = {}
    counts: dict[tuple[int, int], int] = {}
    for r in placed:
        key = (int(r.cell_x or 0), int(r.cell_y or 0))
        counts[key] = counts.get(key, 0) + 1
        held = elites.get(key)
        if held is None or (r.fitness or 0.0, -r.seq) > (held.fitness or 0.0, -held.seq):
            elites[key] = r
    occupancy = {
        str(i): len({(r.cell_x, r.cell_y) for r in placed if r.island == i})
        for i in range(max(islands, 1 + max((r.island for r in placed), default=-1)))
    }
    return Grid(
        bins=bins,
        descriptors=descriptor_order(placed, bins),
        cells=[
            GridCell(x=x, y=y, name=f"p{e.seq}", fitness=e.fitness, island=e.island, programs=counts[(x, y)])
            for (x, y), e in sorted(elites.items())
        ],
        islands=islands,
        occupancy=occupancy,
        cells_filled=len(elites),
    )


def call_view(row: EvolutionLlmCall) -> LlmCallOut:
    answer = row.answer
    return LlmCallOut(
        id=row.id,
        key=row.key,
        role=row.role,
        model=row.model,
        generation=row.generation,
        status=row.status,
        failure=row.failure,
        prompt_tokens=row.prompt_tokens,
        completion_tokens=row.completion_tokens,
        usage_estimated=row.usage_estimated,
        cost_usd=row.cost_usd,
        latency_ms=row.latency_ms,
        attempts=row.attempts,
        error=row.error,
        messages=len(row.messages or []),
        tool_calls=len(row.tool_calls or []),
        answer_preview=answer[:PREVIEW_CHARS] if answer is not None else None,
        created_at=row.created_at,
    )


def call_detail(row: EvolutionLlmCall) -> LlmCallDetail:
    return LlmCallDetail(
        **call_view(row).model_dump(),
        prompt=row.messages or [],
        answer=row.answer,
        tool_call_list=row.tool_calls or [],
        rejected_tool_calls=row.rejected_tool_calls or [],
    )


def event_view(row: EvolutionEvent) -> EventOut:
    return EventOut(
        id=row.id, kind=row.kind, generation=row.generation, data=row.data or {}, created_at=row.created_at
    )


def spend_view(session: Session, run: EvolutionRun) -> SpendOut:
    lines = evolution.spend(session, run)
    limits: dict[str, Any] = (run.config or {}).get("limits") or {}
    return SpendOut(
        lines=[
            SpendLineOut(
                role=line.role,
                model=line.model,
                calls=line.calls,
                failed=line.failed,
                prompt_tokens=line.prompt_tokens,
                completion_tokens=line.completion_tokens,
                cost_usd=line.cost_usd,
            )
            for line in lines
        ],
        total_usd=run.spent_usd,
        tokens=run.tokens,
        calls=run.llm_calls,
        budget_usd=limits.get("max_cost_usd"),
        budget_tokens=limits.get("max_tokens"),
    )


def payoff(rows: Sequence[EvolutionProgram]) -> PayoffOut:
    """Programs x opponents from the evaluated programs' `metrics.per_opponent`, with Nash fitness."""
    evaluated = [r for r in rows if r.status == ProgramStatus.EVALUATED]
    table = payoff_table((f"p{r.seq}", r.metrics) for r in evaluated)
    nash = nash_average(table)
    by_name = {f"p{r.seq}": r for r in evaluated}
    out_rows = []
    for name in table.programs:
        cells = []
        for opponent in table.opponents:
            cell = table.cells.get((name, opponent))
            if cell is not None:
                cells.append(
                    PayoffCellOut(
                        opponent=opponent,
                        wins=cell.wins,
                        draws=cell.draws,
                        losses=cell.losses,
                        games=cell.games,
                        win_rate=cell.win_rate,
                    )
                )
        row = by_name[name]
        out_rows.append(
            PayoffRow(
                program=name,
                generation=row.generation,
                fitness=row.fitness,
                nash_fitness=round(nash.fitness[name], 6),
                cells=cells,
            )
        )
    out_rows.sort(key=lambda r: (-r.nash_fitness, int(r.program[1:])))
    return PayoffOut(
        opponents=table.opponents,
        rows=out_rows,
        mixture={k: round(v, 6) for k, v in nash.mixture.items()},
        value=round(nash.value, 6),
    )
