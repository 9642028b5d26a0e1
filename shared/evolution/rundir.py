"""An evolution run as a directory of plain files, written from the database: what someone reads,
greps, diffs or keeps after the run, without Arena. The gateway serves it as a .tar.gz
(`GET /api/v1/evolution/runs/{id}/export`).

Layout (`write_run_directory`):

    config.json               the run's EvolutionConfig (never any key)
    summary.json              status, generations, best program and fitness, spend, termination
    evolution_log.jsonl       every event, one JSON object a line
    root_llm_log.jsonl        the root's decisions and each of its LLM calls (tokens, cost, latency)
    best_bot.py               the best program, as a hosted bot file (decide contract)
    generations/gen_000/
        generation_summary.json            stats, selected parents, the root's reasoning
        programs/p00001/code.py
        programs/p00001/metrics.json       fitness, stage, metrics, descriptors, cell, feedback
        programs/p00001/metadata.json      id, generation, island, origin, status, focus, explanation
        programs/p00001/parent_info.json   parent, its fitness, inspirations, diff
        llm_calls/<key>.json               the generation's child calls: prompt, answer, tokens, cost

The encrypted LLM key saved with a run is never read here.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import tempfile
import uuid
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.db.models import (
    EvolutionEvent,
    EvolutionGeneration,
    EvolutionLlmCall,
    EvolutionProgram,
    EvolutionRun,
)
from shared.states import EvolutionEventKind, LlmRole

ROOT_LOG_KINDS = (
    EvolutionEventKind.ROOT_DECISION,
    EvolutionEventKind.FALLBACK,
    EvolutionEventKind.PARAMETERS_CHANGED,
    EvolutionEventKind.GENERATION_ADVANCED,
    EvolutionEventKind.TERMINATED,
)
"""The events that make up the root's decision log (with the root's LLM calls)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def program_dir_name(seq: int) -> str:
    return f"p{seq:05d}"


def generation_dir_name(number: int) -> str:
    return f"gen_{number:03d}"


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, default=str) + "\n")


def _event_line(event: EvolutionEvent) -> dict[str, Any]:
    return {
        "timestamp": _time(event.created_at),
        "event": str(event.kind),
        "generation": event.generation,
        "data": event.data,
    }


def _root_call_line(call: EvolutionLlmCall) -> dict[str, Any]:
    return {
        "timestamp": _time(call.created_at),
        "event": "llm_call",
        "generation": call.generation,
        "data": {
            "call_id": str(call.id),
            "key": call.key,
            "model": call.model,
            "status": str(call.status),
            "failure": call.failure,
            "prompt_tokens": call.prompt_tokens,
            "completion_tokens": call.completion_tokens,
            "usage_estimated": call.usage_estimated,
            "cost_usd": call.cost_usd,
            "latency_ms": call.latency_ms,
            "attempts": call.attempts,
            "tool_calls": call.tool_calls,
        },
    }


def sanitise(key: str) -> str:
    """A file name from an LLM call's key (step keys hold ':' and '/')."""
    return _UNSAFE.sub("_", key).strip("._")[:120] or "call"


def best_bot_source(run: EvolutionRun, best: EvolutionProgram) -> str:
    """The best program as a hosted bot file: the program itself under a comment that says where
    it comes from (the decide contract needs nothing else)."""
    fitness = "-" if best.fitness is None else f"{best.fitness:.4f}"
    header = (
        f"# Evolved by Arena's evolver: run {run.name!r} ({run.id}), game {run.game},\n"
        f"# program p{best.seq} of generation {best.generation}, fitness {fitness}.\n"
        "# A hosted bot (decide contract): upload it with POST /api/v1/bots/hosted.\n"
    )
    return header + best.code if best.code.endswith("\n") else header + best.code + "\n"


def _best(run: EvolutionRun, programs: list[EvolutionProgram]) -> EvolutionProgram | None:
    by_id = {p.id: p for p in programs}
    if run.best_program_id is not None and run.best_program_id in by_id:
        return by_id[run.best_program_id]
    scored = [p for p in programs if p.fitness is not None]
    return max(scored, key=lambda p: (p.fitness or 0.0, -p.seq)) if scored else None


def write_run_directory(session: Session, run: EvolutionRun, path: Path) -> Path:
    """Write run `run`'s directory under `path` (created if missing) and return it."""
    path.mkdir(parents=True, exist_ok=True)
    programs = list(
        session.scalars(
            select(EvolutionProgram).where(EvolutionProgram.run_id == run.id).order_by(EvolutionProgram.seq)
        )
    )
    gens = list(
        session.scalars(
            select(EvolutionGeneration)
            .where(EvolutionGeneration.run_id == run.id)
            .order_by(EvolutionGeneration.number)
        )
    )
    calls = list(
        session.scalars(
            select(EvolutionLlmCall)
            .where(EvolutionLlmCall.run_id == run.id)
            .order_by(EvolutionLlmCall.created_at, EvolutionLlmCall.key)
        )
    )
    events = list(
        session.scalars(
            select(EvolutionEvent).where(EvolutionEvent.run_id == run.id).order_by(EvolutionEvent.id)
        )
    )
    names: dict[uuid.UUID, str] = {p.id: f"p{p.seq}" for p in programs}
    by_id = {p.id: p for p in programs}

    _write_json(path / "config.json", run.config)
    _write_jsonl(path / "evolution_log.jsonl", (_event_line(e) for e in events))
    root_lines = [_event_line(e) for e in events if e.kind in ROOT_LOG_KINDS]
    root_lines += [_root_call_line(c) for c in calls if c.role == LlmRole.ROOT]
    root_lines.sort(key=lambda line: line["timestamp"] or "")
    _write_jsonl(path / "root_llm_log.jsonl", root_lines)

    best = _best(run, programs)
    status = run.job.status if run.job is not None else None
    numbers = sorted(
        {g.number for g in gens} | {p.generation for p in programs} | {c.generation for c in calls}
    )
    _write_json(
        path / "summary.json",
        {
            "run_id": str(run.id),
            "name": run.name,
            "game": run.game,
            "status": None if status is None else str(status),
            "generation": run.generation,
            "generations": len(numbers),
            "programs": len(programs),
            "best_program": names.get(best.id) if best else None,
            "best_fitness": run.best_fitness
            if run.best_fitness is not None
            else (best.fitness if best else None),
            "spend": {"usd": run.spent_usd, "tokens": run.tokens, "llm_calls": run.llm_calls},
            "elapsed_s": run.elapsed_s,
            "termination_reason": run.termination_reason,
            "parameters": run.parameters,
            "created_at": _time(run.created_at),
        },
    )
    if best is not None:
        (path / "best_bot.py").write_text(best_bot_source(run, best), encoding="utf-8")

    gen_rows = {g.number: g for g in gens}
    for number in numbers:
        folder = path / "generations" / generation_dir_name(number)
        (folder / "programs").mkdir(parents=True, exist_ok=True)
        row = gen_rows.get(number)
        selected = [_name_of(names, pid) for pid in (row.selected_ids if row else [])]
        _write_json(
            folder / "generation_summary.json",
            {
                "generation": number,
                "started_at": _time(row.started_at) if row else None,
                "closed_at": _time(row.closed_at) if row else None,
                "stats": row.stats if row else {},
                "selected": selected,
                "reasoning": row.reasoning if row else None,
                "programs": [names[p.id] for p in programs if p.generation == number],
            },
        )
        for program in (p for p in programs if p.generation == number):
            _write_program(folder / "programs" / program_dir_name(program.seq), program, names, by_id)
        child_calls = [c for c in calls if c.generation == number and c.role == LlmRole.CHILD]
        if child_calls:
            _write_calls(folder / "llm_calls", child_calls)
    return path


def _name_of(names: dict[uuid.UUID, str], program_id: Any) -> str:
    """ "p<seq>" for a program id stored as a string in a JSON column (the id itself if unknown)."""
    try:
        return names.get(uuid.UUID(str(program_id)), str(program_id))
    except ValueError:
        return str(program_id)


def _write_program(
    folder: Path,
    program: EvolutionProgram,
    names: dict[uuid.UUID, str],
    by_id: dict[uuid.UUID, EvolutionProgram],
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "code.py").write_text(program.code, encoding="utf-8")
    cell = (
        [program.cell_x, program.cell_y]
        if program.cell_x is not None and program.cell_y is not None
        else None
    )
    _write_json(
        folder / "metrics.json",
        {
            "fitness": program.fitness,
            "nash_fitness": program.nash_fitness,
            "stage": program.stage,
            "metrics": program.metrics,
            "descriptors": program.descriptors,
            "cell": cell,
            "feedback": program.feedback,
            "error": program.error,
        },
    )
    _write_json(
        folder / "metadata.json",
        {
            "id": str(program.id),
            "name": names[program.id],
            "generation": program.generation,
            "island": program.island,
            "origin": str(program.origin),
            "status": str(program.status),
            "created_at": _time(program.created_at),
            "evaluated_at": _time(program.evaluated_at),
            "focus": program.focus,
            "explanation": program.explanation,
        },
    )
    parent = by_id.get(program.parent_id) if program.parent_id is not None else None
    inspirations = [_name_of(names, pid) for pid in program.inspiration_ids]
    _write_json(
        folder / "parent_info.json",
        {
            "parent": names.get(parent.id) if parent else None,
            "parent_fitness": parent.fitness if parent else None,
            "inspirations": inspirations,
            "diff": program.diff,
        },
    )


def _write_calls(folder: Path, calls: list[EvolutionLlmCall]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    for call in calls:
        stem = sanitise(call.key)
        if stem in used:
            stem = f"{stem}_{call.id.hex[:8]}"
        used.add(stem)
        _write_json(
            folder / f"{stem}.json",
            {
                "id": str(call.id),
                "key": call.key,
                "role": str(call.role),
                "model": call.model,
                "generation": call.generation,
                "status": str(call.status),
                "failure": call.failure,
                "created_at": _time(call.created_at),
                "prompt": call.messages,
                "answer": call.answer,
                "prompt_tokens": call.prompt_tokens,
                "completion_tokens": call.completion_tokens,
                "usage_estimated": call.usage_estimated,
                "cost_usd": call.cost_usd,
                "latency_ms": call.latency_ms,
                "attempts": call.attempts,
                "error": call.error,
            },
        )


def archive_name(run: EvolutionRun) -> str:
    """The archive's top folder (and file stem): `evolution-<run name>-<short id>`."""
    return f"evolution-{sanitise(run.name)}-{run.id.hex[:8]}"


def run_archive(session: Session, run: EvolutionRun) -> bytes:
    """The run's directory as .tar.gz bytes, built in a temporary folder that is removed after."""
    name = archive_name(run)
    with tempfile.TemporaryDirectory(prefix="arena-evolution-") as temp:
        folder = write_run_directory(session, run, Path(temp) / name)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            tar.add(folder, arcname=name)
    return buffer.getvalue()
