"""The evolution engine end to end, in this process: real database, real sandboxes, real matches
against the built-in bots, and LLMs reached through the real `openai` client on a loopback server
that answers like the built-in models unless a test scripts it to misbehave."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from services.evolver.contract import (
    CONSTANTS_TABLE_HEADING,
    PARENT_CHANGE_HEADING,
    RETRY_HEADING,
    SEARCH_MARKER,
)
from services.evolver.search.surrogate import named_constants, parse_table
from services.evolver.store import generations as generation_store
from shared.states import EvolutionEventKind, JobStatus, LlmCallStatus, ProgramOrigin, ProgramStatus
from tests.support.evolver_engine import (
    PRICED_MODEL,
    PRICES,
    LlmStub,
    Reply,
    calls,
    config,
    drive,
    events,
    is_root,
    make_run,
    programs,
    run_row,
    text_answer,
    tool_answer,
    tools_called,
)

pytestmark = pytest.mark.usefixtures("database_url")


@pytest.fixture
def stub() -> Iterator[LlmStub]:
    server = LlmStub()
    yield server
    server.close()


def llm(stub: LlmStub, **extra: Any) -> dict[str, Any]:
    return {"base_url": stub.url, "root_model": "stub-root", "child_model": "stub-child", **extra}


@pytest.mark.slow
def test_the_built_in_operator_runs_a_whole_evolution_without_any_llm() -> None:
    run_id, job_id = make_run(
        config(
            limits={"max_generations": 3, "max_children_per_generation": 3},
            # Eight bins a side: the seed's close relatives, on four short matches, differ in
            # accuracy and aggression by a few hundredths to a tenth, within one cell of five.
            search={"islands": 2, "grid_bins": 8},
            evaluation={"quick_matches": 4, "match_config": {"time_limit_s": 12.0}},
            random_seed=2,
        )
    )
    assert drive(job_id) == JobStatus.FINISHED
    run = run_row(run_id)
    rows = programs(run_id)
    seed = rows[0]
    assert seed.origin == ProgramOrigin.SEED
    assert seed.status == ProgramStatus.EVALUATED
    children = [p for p in rows if p.origin != ProgramOrigin.SEED]
    assert len(children) >= 4
    assert run.best_fitness is not None
    assert seed.fitness is not None
    # Every program plays the same four 12-second matches (common random numbers), so a higher
    # fitness is a better program on them, not easier matches. The run is deterministic for a given
    # random_seed (sampling, mutations and matches derive from it, never from timings); with seed
    # 2 the built-in operator finds a better child within nine (of seeds 1 to 5, all but 1 do).
    assert run.best_fitness > seed.fitness, "some child beat the seed within the small budget"
    evaluated = [p for p in rows if p.status == ProgramStatus.EVALUATED]
    assert len({(p.cell_x, p.cell_y) for p in evaluated}) > 1, "the MAP-Elites grid fills more than one cell"
    assert len({p.island for p in evaluated}) > 1, "more than one island holds programs"
    assert len({p.code_hash for p in rows}) == len(rows), "no code stored twice"
    assert run.termination_reason
    assert "generation" in run.termination_reason
    assert {"spawn_child", "evaluate_program", "advance_generation", "terminate"} <= set(tools_called(run_id))
    assert run.spent_usd == 0.0
    assert all(c.cost_usd == 0.0 for c in calls(run_id))
    # Every generation of the finished run is closed with its figures, the last one too (it
    # selects nothing: no generation follows), and none is opened after it.
    generations = [generation_store.generation_row(run_id, n) for n in range(run.generation + 2)]
    assert generations[-1] is None
    assert run.generation == 2
    for row in generations[:-1]:
        assert row is not None, row
        assert row.closed_at is not None, row
        assert row.stats["generation"] == row.number
        assert row.stats["evaluated"] > 0
    last = generations[-2]
    assert last is not None
    assert last.selected_ids == []
    assert last.stats["leader"] is not None
    assert last.reasoning == f"the run ended: {run.termination_reason}"


@pytest.mark.slow
def test_the_llm_path_through_the_openai_client_spawns_advances_modifies_and_terminates(
    stub: LlmStub,
) -> None:
    def intercept(body: dict[str, Any], index: int) -> Reply | None:
        if is_root(body) and index == 2:
            return Reply(
                200,
                tool_answer(
                    "modify_parameters",
                    {"updates": {"exploration_ratio": 0.9, "quick_matches": 1}, "reasoning": "explore"},
                ),
            )
        return None

    stub.intercept = intercept
    run_id, job_id = make_run(config(llm=llm(stub)))
    assert drive(job_id) == JobStatus.FINISHED
    called = tools_called(run_id)
    for tool in ("spawn_child", "evaluate_program", "advance_generation", "modify_parameters", "terminate"):
        assert tool in called, tool
    run = run_row(run_id)
    assert run.parameters["exploration_ratio"] == 0.9
    assert run.parameters["quick_matches"] == 1
    changed = events(run_id, EvolutionEventKind.PARAMETERS_CHANGED)
    assert changed
    assert changed[0].data["changes"]["exploration_ratio"]["to"] == 0.9
    recorded = calls(run_id)
    assert len(recorded) == stub.count(), "every request that reached the server is recorded once"
    assert {c.role for c in recorded} == {"root", "child"}
    assert all(c.prompt_tokens > 0 and c.status == LlmCallStatus.OK for c in recorded)
    first_child = next(r for r in stub.requests if not is_root(r))
    assert "## Parent program p0" in first_child["messages"][-1]["content"]
    assert PARENT_CHANGE_HEADING not in first_child["messages"][-1]["content"], "the seed has no parent"
    # A child of a child is shown the change that made its parent (the stored diff), named.
    rows = {f"p{p.seq}": p for p in programs(run_id)}
    by_id = {p.id: name for name, p in rows.items()}
    shown = 0
    for request in stub.requests:
        if is_root(request):
            continue
        prompt = request["messages"][1]["content"]
        parent = rows[prompt.split("## Parent program ", 1)[1].split()[0]]
        if parent.parent_id is None:
            continue
        heading = f"{PARENT_CHANGE_HEADING} p{parent.seq} from {by_id[parent.parent_id]}"
        assert heading in prompt
        assert parent.diff
        assert parent.diff.rstrip() in prompt
        shown += 1
    assert shown, "some child was asked to change a child"
    # The prompt lists recent evaluated programs with the values of the parent's named constants.
    tables = 0
    for request in stub.requests:
        if is_root(request) or CONSTANTS_TABLE_HEADING not in request["messages"][1]["content"]:
            continue
        prompt = request["messages"][1]["content"]
        table = prompt.split(CONSTANTS_TABLE_HEADING, 1)[1]
        parent = rows[prompt.split("## Parent program ", 1)[1].split()[0]]
        names = table.split("constants: ", 1)[1].splitlines()[0].split()
        assert names == list(named_constants(parent.code))
        listed = [line.split()[0] for line in table.splitlines() if line.startswith("p")]
        scored = parse_table(table)
        assert listed
        assert len(scored) == len(listed)
        for name, row in zip(listed, scored, strict=True):
            program = rows[name]
            assert program.status == ProgramStatus.EVALUATED
            assert row.matches > 0
            assert dict(row.constants) == {
                key: value for key, value in named_constants(program.code).items() if key in names
            }
        tables += 1
    assert tables, "children were shown the table of evaluated programs"
    assert events(run_id, EvolutionEventKind.TERMINATED)


@pytest.mark.slow
def test_a_child_diff_that_does_not_apply_is_retried_with_the_error_then_rewritten(stub: LlmStub) -> None:
    bad = (
        f"I changed it.\n{SEARCH_MARKER}\nthis line is not in the program\n=======\nx = 1\n>>>>>>> REPLACE\n"
    )

    def intercept(body: dict[str, Any], index: int) -> Reply | None:
        if not is_root(body) and index in (0, 1):
            return Reply(200, text_answer(bad))
        return None

    stub.intercept = intercept
    run_id, job_id = make_run(
        config(llm=llm(stub), limits={"max_generations": 1, "max_children_per_generation": 1})
    )
    assert drive(job_id) == JobStatus.FINISHED
    child_requests = [r for r in stub.requests if not is_root(r)]
    assert len(child_requests) == 3, "first answer, one retry with the error, then the rewrite"
    retry = child_requests[1]["messages"][-1]["content"]
    assert RETRY_HEADING in retry
    assert "did not apply" in retry
    assert "this line is not in the program" in retry
    assert "complete new program" in child_requests[2]["messages"][-1]["content"]
    (child,) = [p for p in programs(run_id) if p.origin != ProgramOrigin.SEED]
    assert child.origin == ProgramOrigin.REWRITE
    assert child.status in (
        ProgramStatus.EVALUATED,
        ProgramStatus.FAILED,
    )
    assert [c.key.rsplit(":", 1)[-1] for c in calls(run_id) if c.role == "child"] == ["1", "2", "3"]


@pytest.mark.slow
def test_rate_limits_are_retried_and_a_timed_out_call_costs_only_itself(stub: LlmStub) -> None:
    def intercept(body: dict[str, Any], index: int) -> Reply | None:
        if is_root(body) and index == 0:
            return Reply(429, {"error": {"message": "slow down"}})
        if not is_root(body) and index in (0, 1):
            return Reply(200, text_answer("late"), delay_s=5.0)
        return None

    stub.intercept = intercept
    run_id, job_id = make_run(
        config(
            llm=llm(stub, timeout_s=1.0, max_attempts=2),
            limits={"max_generations": 1, "max_children_per_generation": 2},
        )
    )
    assert drive(job_id) == JobStatus.FINISHED
    recorded = {c.key: c for c in calls(run_id)}
    assert recorded["root:0"].status == LlmCallStatus.OK
    assert recorded["root:0"].attempts == 2
    failed = [c for c in recorded.values() if c.status == LlmCallStatus.FAILED]
    assert len(failed) == 1
    assert failed[0].failure == "timeout"
    assert failed[0].attempts == 2
    rows = programs(run_id)
    assert any(p.status == ProgramStatus.REJECTED and "failed" in (p.error or "") for p in rows)
    assert any(p.origin != ProgramOrigin.SEED and p.status != ProgramStatus.REJECTED for p in rows), (
        "it went on"
    )


@pytest.mark.slow
def test_the_money_cap_stops_new_calls_and_ends_the_run(stub: LlmStub) -> None:
    cap = 3.0
    run_id, job_id = make_run(
        config(
            llm={**llm(stub), "root_model": PRICED_MODEL, "child_model": PRICED_MODEL, "prices": PRICES},
            limits={"max_generations": 50, "max_children_per_generation": 4, "max_cost_usd": cap},
        )
    )
    assert drive(job_id) == JobStatus.FINISHED
    run = run_row(run_id)
    assert run.termination_reason is not None
    assert "budget exhausted" in run.termination_reason
    recorded = calls(run_id)
    assert run.spent_usd == pytest.approx(sum(c.cost_usd for c in recorded))
    assert 0 < run.spent_usd <= cap
    assert len(recorded) == stub.count(), "the refused call never reached the server"
    assert events(run_id, EvolutionEventKind.LIMIT_REACHED)


@pytest.mark.slow
def test_a_root_that_answers_without_tools_or_fails_is_replaced_by_the_built_in_decision(
    stub: LlmStub,
) -> None:
    def intercept(body: dict[str, Any], index: int) -> Reply | None:
        if is_root(body) and index < 3:
            return Reply(200, text_answer("I am thinking about it."))
        if is_root(body) and index == 3:
            return Reply(200, b'{"choices": [{"message": {"content": "tru', delay_s=0.0)
        return None

    stub.intercept = intercept
    run_id, job_id = make_run(
        config(llm=llm(stub, max_attempts=1), limits={"max_generations": 1, "max_children_per_generation": 1})
    )
    assert drive(job_id) == JobStatus.FINISHED
    fallbacks = events(run_id, EvolutionEventKind.FALLBACK)
    whys = " ".join(str(e.data.get("why")) for e in fallbacks)
    assert "without a tool call" in whys
    assert "failed" in whys
    assert events(run_id, EvolutionEventKind.LLM_FAILURE)
    assert events(run_id, EvolutionEventKind.TERMINATED)


def test_identical_programs_are_never_stored_or_evaluated_twice(stub: LlmStub) -> None:
    def intercept(body: dict[str, Any], _index: int) -> Reply | None:
        if not is_root(body):
            parent = body["messages"][-1]["content"].split("```python\n", 1)[1].split("\n```", 1)[0]
            return Reply(
                200, text_answer("Only comments changed.\n```python\n# a comment\n" + parent + "\n```")
            )
        return None

    stub.intercept = intercept
    run_id, job_id = make_run(
        config(llm=llm(stub), limits={"max_generations": 1, "max_children_per_generation": 2})
    )
    assert drive(job_id) == JobStatus.FINISHED
    assert len(programs(run_id)) == 1, "the children's code is the seed's once normalised"
    notes = [
        json.loads(e.data["result"])
        for e in events(run_id, EvolutionEventKind.TOOL_RESULT)
        if e.data["tool"] == "spawn_child"
    ]
    assert notes
    assert all(n["ok"] and "identical to p0" in n["result"]["note"] for n in notes)


@pytest.mark.slow
def test_the_python_tool_runs_analysis_in_the_sandbox_over_a_snapshot(stub: LlmStub) -> None:
    analysis = (
        "best = max(programs, key=lambda p: p['fitness'] or 0)\n"
        "print(len(programs), best['id'], sorted(best))"
    )
    escape = "import os\nprint(os.environ)"
    loops = "while True:\n    pass"

    def intercept(body: dict[str, Any], index: int) -> Reply | None:
        if is_root(body) and index in (2, 3, 4):
            code = {2: analysis, 3: escape, 4: loops}[index]
            return Reply(200, tool_answer("python", {"code": code}))
        return None

    stub.intercept = intercept
    run_id, job_id = make_run(
        config(llm=llm(stub), limits={"max_generations": 1, "max_children_per_generation": 1})
    )
    assert drive(job_id) == JobStatus.FINISHED
    outputs = [
        json.loads(e.data["result"])["result"]["output"]
        for e in events(run_id, EvolutionEventKind.TOOL_RESULT)
        if e.data["tool"] == "python"
    ]
    assert len(outputs) == 3
    assert outputs[0].startswith("1 p0 ['descriptors', 'fitness', 'generation', 'id', 'island'"), outputs[0]
    assert "static gate refused" in outputs[1]
    assert "os" in outputs[1]
    assert "failed" in outputs[2] or "timed out" in outputs[2].lower(), outputs[2]
