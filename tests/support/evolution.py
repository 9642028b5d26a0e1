"""Evolution runs for tests: created through the gateway's API, then filled with what an evolver
worker would write (programs, generations, LLM calls, events), inserted directly as
services/evolver/store/ writes it, since no worker runs in these tests.

Each `add_*` factory writes one row with defaults for what a test does not care about. Given a
session it writes in the caller's transaction (as `seed_run` does); without one, in its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import update
from sqlalchemy.orm import Session

from shared.db.models import (
    EvolutionEvent,
    EvolutionGeneration,
    EvolutionLlmCall,
    EvolutionProgram,
    EvolutionRun,
)
from shared.db.session import session_scope
from shared.states import EvolutionEventKind, LlmCallStatus, LlmRole, ProgramOrigin, ProgramStatus
from tests.support.accounts import Account, unique

API = "/api/v1/evolution/runs"
OWN_LLM_URL = "http://127.0.0.1:9/v1"
"""A run's own model server (never called: no evolver worker runs in these tests)."""
SEED_CODE = 'def decide(observation):\n    return {"pods": []}\n'
CHILD_CODE = 'def decide(observation):\n    # faster\n    return {"pods": [], "boost": True}\n'
CHILD_DIFF = (
    "--- p1\n+++ p2\n@@ -1,2 +1,3 @@\n def decide(observation):\n"
    '-    return {"pods": []}\n+    # faster\n+    return {"pods": [], "boost": True}\n'
)


def create_run(
    client: TestClient, owner: Account, api_key: str | None = None, **config: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"name": unique("evo"), "game": "podracing", "config": config}
    if api_key is not None:
        body["api_key"] = api_key  # a key goes with a base URL of the run's own
        config.setdefault("llm", {"base_url": OWN_LLM_URL})
    answer = client.post(API, json=body, headers=owner.headers)
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def per_opponent(wins: int, draws: int, losses: int) -> dict[str, int]:
    return {"wins": wins, "draws": draws, "losses": losses, "games": wins + draws + losses, "failed": 0}


@contextmanager
def _writing(session: Session | None) -> Iterator[Session]:
    if session is not None:
        yield session
        return
    with session_scope() as own:
        yield own


def add_program(
    run_id: uuid.UUID,
    seq: int,
    *,
    generation: int = 0,
    island: int = 0,
    origin: ProgramOrigin = ProgramOrigin.DIFF,
    status: ProgramStatus = ProgramStatus.EVALUATED,
    code: str | None = None,
    session: Session | None = None,
    **values: Any,
) -> uuid.UUID:
    """Program number `seq` (code: the seed's, made unique by its number); its id. Flushed, so a
    later program may name it as its parent."""
    with _writing(session) as writing:
        program = EvolutionProgram(
            id=uuid.uuid4(),
            run_id=run_id,
            seq=seq,
            generation=generation,
            island=island,
            origin=origin,
            status=status,
            code=SEED_CODE + f"# {seq}\n" if code is None else code,
            code_hash=uuid.uuid4().hex,
            created_key=f"k{seq}",
            **values,
        )
        writing.add(program)
        writing.flush()
        return program.id


def add_generation(
    run_id: uuid.UUID,
    number: int,
    *,
    selected: list[uuid.UUID] | None = None,
    stats: dict[str, Any] | None = None,
    session: Session | None = None,
    **values: Any,
) -> None:
    """Generation `number`, closed with the programs in `selected` chosen (none: still open)."""
    with _writing(session) as writing:
        writing.add(
            EvolutionGeneration(
                run_id=run_id,
                number=number,
                selected_ids=[str(program) for program in selected or []],
                stats=stats or {},
                **values,
            )
        )
        writing.flush()


def add_llm_call(
    run_id: uuid.UUID,
    key: str,
    *,
    role: LlmRole = LlmRole.CHILD,
    model: str = "child-model",
    generation: int = 0,
    status: LlmCallStatus = LlmCallStatus.OK,
    session: Session | None = None,
    **values: Any,
) -> uuid.UUID:
    """One call to a model, stored under its idempotency `key`; its id."""
    with _writing(session) as writing:
        call = EvolutionLlmCall(
            run_id=run_id, key=key, role=role, model=model, generation=generation, status=status, **values
        )
        writing.add(call)
        writing.flush()
        return call.id


def add_event(
    run_id: uuid.UUID,
    kind: EvolutionEventKind,
    generation: int = 0,
    data: dict[str, Any] | None = None,
    *,
    key: str | None = None,
    session: Session | None = None,
) -> int:
    """One event of the run's story (key: a fresh one, as for an event arriving live); its id."""
    with _writing(session) as writing:
        row = EvolutionEvent(
            run_id=run_id, key=key or unique("live"), generation=generation, kind=kind, data=data or {}
        )
        writing.add(row)
        writing.flush()
        return row.id


def update_run(run_id: uuid.UUID, *, session: Session | None = None, **values: Any) -> None:
    """Set the run's own columns (progress, totals, best program) as the evolver keeps them."""
    with _writing(session) as writing:
        writing.execute(update(EvolutionRun).where(EvolutionRun.id == run_id).values(**values))


@dataclass
class Seeded:
    run_id: uuid.UUID
    ids: dict[str, uuid.UUID]
    child_call: uuid.UUID
    root_call: uuid.UUID
    events: list[int]


def seed_run(run_id: uuid.UUID, *, finished: bool = False) -> Seeded:
    """Programs p1..p5 over generations 0-2 on two islands, with lineage, cells, payoff records,
    two closed generations, a root and a child LLM call and the root's events."""
    with session_scope() as session:
        ids = _seed_programs(run_id, session)
        _seed_generations(run_id, ids, session)
        root_call, child_call = _seed_llm_calls(run_id, session)
        events = _seed_events(run_id, finished, session)
        update_run(
            run_id,
            generation=2,
            best_program_id=ids["p2"],
            best_fitness=0.7,
            spent_usd=0.014,
            tokens=4680,
            llm_calls=3,
            elapsed_s=321.0,
            termination_reason="max generations" if finished else None,
            session=session,
        )
    return Seeded(run_id, ids, child_call, root_call, events)


def _seed_programs(run_id: uuid.UUID, session: Session) -> dict[str, uuid.UUID]:
    """p1 (the seed) begets p2 (island 0), p3 (island 1) and p4 (failed); p2 begets p5 (pending).

    x = aggression (0.3 -> bin 1), y = accuracy (0.5 -> bin 2): the descriptors' keys sort the
    other way round, so the grid must read the order from the stored cells."""
    p1 = add_program(
        run_id,
        1,
        origin=ProgramOrigin.SEED,
        fitness=0.4,
        descriptors={"aggression": 0.3, "accuracy": 0.5},
        cell_x=1,
        cell_y=2,
        metrics={
            "win_rate": 0.4,
            "per_opponent": {
                "builtin:runner": per_opponent(1, 0, 3),
                "builtin:blocker": per_opponent(2, 0, 2),
                "builtin:idle": per_opponent(4, 0, 0),
            },
        },
        feedback={"summary": "slow on corners"},
        stage="tournament",
        session=session,
    )
    p2 = add_program(
        run_id,
        2,
        generation=1,
        parent_id=p1,
        fitness=0.7,
        code=CHILD_CODE,
        diff=CHILD_DIFF,
        focus="boost on straights",
        explanation="boost when aligned",
        descriptors={"aggression": 0.7, "accuracy": 0.45},
        cell_x=3,
        cell_y=2,
        metrics={
            "per_opponent": {
                "builtin:runner": per_opponent(3, 0, 1),
                "builtin:blocker": per_opponent(2, 1, 1),
                "builtin:idle": per_opponent(4, 0, 0),
            }
        },
        feedback={"summary": "wins races"},
        inspiration_ids=[str(p1)],
        stage="tournament",
        session=session,
    )
    p3 = add_program(
        run_id,
        3,
        generation=1,
        island=1,
        parent_id=p1,
        origin=ProgramOrigin.REWRITE,
        fitness=0.55,
        descriptors={"aggression": 0.75, "accuracy": 0.5},
        cell_x=3,
        cell_y=2,
        metrics={
            "per_opponent": {
                "builtin:runner": per_opponent(2, 0, 2),
                "builtin:idle": per_opponent(3, 1, 0),
            }
        },
        stage="tournament",
        session=session,
    )
    p4 = add_program(
        run_id,
        4,
        generation=1,
        island=1,
        parent_id=p1,
        status=ProgramStatus.FAILED,
        fitness=0.0,
        stage="smoke",
        error="crashed on turn 1",
        session=session,
    )
    p5 = add_program(run_id, 5, generation=2, parent_id=p2, status=ProgramStatus.PENDING, session=session)
    return {"p1": p1, "p2": p2, "p3": p3, "p4": p4, "p5": p5}


def _seed_generations(run_id: uuid.UUID, ids: dict[str, uuid.UUID], session: Session) -> None:
    """Generations 0 and 1 closed (p1, then p2 chosen), generation 2 open."""
    add_generation(
        run_id,
        0,
        selected=[ids["p1"]],
        reasoning="the seed is all we have",
        stats={"best": 0.4, "median": 0.4, "islands": {"0": {"best": 0.4, "median": 0.4}}},
        session=session,
    )
    add_generation(
        run_id,
        1,
        selected=[ids["p2"]],
        reasoning="p2 boosts well",
        stats={
            "best": 0.7,
            "median": 0.55,
            "islands": {"0": {"best": 0.7, "median": 0.7}, "1": {"best": 0.55, "median": 0.275}},
        },
        session=session,
    )
    add_generation(run_id, 2, session=session)


def _seed_llm_calls(run_id: uuid.UUID, session: Session) -> tuple[uuid.UUID, uuid.UUID]:
    """The root's call in generation 0, a child's for p2 and a failed one for p4; (root, child)."""
    root_call = add_llm_call(
        run_id,
        "g0:root:1",
        role=LlmRole.ROOT,
        model="root-model",
        messages=[{"role": "system", "content": "you steer the evolution"}],
        answer="spawn two children",
        tool_calls=[{"name": "spawn_children", "arguments": {"n": 2}}],
        prompt_tokens=1200,
        completion_tokens=80,
        cost_usd=0.004,
        latency_ms=900.0,
        attempts=1,
        session=session,
    )
    child_call = add_llm_call(
        run_id,
        "g1:child:p2/a",
        generation=1,
        messages=[
            {"role": "system", "content": "you write podracing bots"},
            {"role": "user", "content": "improve p1: " + "x" * 500},
        ],
        answer="<<<SEARCH ... >>>",
        prompt_tokens=3000,
        completion_tokens=400,
        cost_usd=0.01,
        latency_ms=2500.0,
        attempts=1,
        session=session,
    )
    add_llm_call(
        run_id,
        "g1:child:p4",
        generation=1,
        status=LlmCallStatus.FAILED,
        failure="timeout",
        error="timed out",
        attempts=4,
        session=session,
    )
    return root_call, child_call


def _seed_events(run_id: uuid.UUID, finished: bool, session: Session) -> list[int]:
    """The run's story up to generation 2 (and its end when `finished`), keyed e0, e1, ...; their ids."""
    kinds: list[tuple[EvolutionEventKind, int, dict[str, Any]]] = [
        (EvolutionEventKind.RUN_STARTED, 0, {"game": "podracing", "seeds": 1}),
        (
            EvolutionEventKind.ROOT_DECISION,
            0,
            {
                "reasoning": "Start by mutating the seed towards boosting.",
                "tool_calls": [{"name": "spawn_children", "arguments": {"n": 2, "focus": "boost"}}],
                "rejected": [],
            },
        ),
        (
            EvolutionEventKind.PARAMETERS_CHANGED,
            0,
            {"changes": {"exploration_ratio": {"from": 0.3, "to": 0.5}}, "reasoning": "explore more"},
        ),
        (
            EvolutionEventKind.GENERATION_ADVANCED,
            0,
            {"from": 0, "to": 1, "selected": ["p1"], "reasoning": "the seed is all we have"},
        ),
        (EvolutionEventKind.FALLBACK, 1, {"why": "the root made no tool call"}),
        (
            EvolutionEventKind.GENERATION_ADVANCED,
            1,
            {"from": 1, "to": 2, "selected": ["p2"], "reasoning": "p2 boosts well"},
        ),
    ]
    if finished:
        kinds.append((EvolutionEventKind.TERMINATED, 2, {"reason": "max generations", "best": "p2"}))
    return [
        add_event(run_id, kind, generation, data, key=f"e{i}", session=session)
        for i, (kind, generation, data) in enumerate(kinds)
    ]
