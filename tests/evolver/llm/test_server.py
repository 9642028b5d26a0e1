"""The built-in models behind the local OpenAI-compatible server, as a real process, driven through
LlmClient (and so through the real openai client)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from services.evolver.contract import TOOL_SPECS, ToolName
from services.evolver.llm import (
    BUILTIN_CHILD_MODEL,
    BUILTIN_ROOT_MODEL,
    LlmClient,
    LlmRequest,
    LlmRole,
    MemoryBudget,
)
from services.evolver.search.diffs import apply_blocks, parse_blocks
from tests.support.evolver_prompts import SEED, child_prompt
from tests.support.processes import ManagedProcess


@pytest.fixture
def server_url(spawn: Callable[..., ManagedProcess]) -> str:
    process = spawn(
        [sys.executable, "-m", "services.evolver.llm.server", "--host", "127.0.0.1", "--port", "0"],
        "builtin-llm",
    )
    process.wait_log("http://", timeout=30)
    first = process.log().splitlines()[0]
    assert first.startswith("http://127.0.0.1:"), first
    assert first.endswith("/v1"), first
    return first


@pytest.fixture
def client(server_url: str) -> Iterator[LlmClient]:
    with LlmClient(server_url, "any-key-at-all", max_attempts=1) as made:
        yield made


class MiniEngine:
    """Just enough of an evolution run to answer the root's tools with honest run blocks."""

    def __init__(self, max_generations: int, max_children: int) -> None:
        self.generation = 0
        self.max_generations = max_generations
        self.max_children = max_children
        self.children = 0
        self.next_id = 1
        self.unevaluated: list[str] = []
        self.top: list[dict[str, Any]] = [{"id": "p0", "fitness": 0.1}]
        self.best: dict[str, Any] = {"id": "p0", "fitness": 0.1}
        self.parameters: dict[str, Any] = {"exploration_ratio": 0.2}
        self.finished: dict[str, Any] | None = None

    def run_block(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "max_generations": self.max_generations,
            "children_this_generation": self.children,
            "max_children_per_generation": self.max_children,
            "unevaluated": list(self.unevaluated),
            "top": sorted(self.top, key=lambda p: -p["fitness"]),
            "best": self.best,
            "generations_without_improvement": 0,
            "parameters": dict(self.parameters),
            "spent_usd": 0.0,
            "budget_usd": 1.0,
            "tokens": 0,
            "token_budget": None,
        }

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == ToolName.SPAWN_CHILD:
            self.unevaluated.append(f"p{self.next_id}")
            self.next_id += 1
            self.children += 1
        elif name == ToolName.EVALUATE_PROGRAM:
            program = arguments["program_id"]
            self.unevaluated.remove(program)
            scored = {"id": program, "fitness": int(program[1:]) / 100}
            self.top.append(scored)
            self.best = max(self.best, scored, key=lambda p: p["fitness"])
        elif name == ToolName.ADVANCE_GENERATION:
            self.generation += 1
            self.children = 0
            self.top = []
        elif name == ToolName.MODIFY_PARAMETERS:
            self.parameters.update(arguments["updates"])
        elif name == ToolName.TERMINATE:
            self.finished = arguments
        return {"ok": True, "result": {}, "run": self.run_block()}


@pytest.mark.slow
def test_the_root_steers_a_run_to_its_end(client: LlmClient) -> None:
    engine = MiniEngine(max_generations=6, max_children=2)
    budget = MemoryBudget(max_usd=0.0)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You steer an evolution run."},
        {"role": "user", "content": "Begin."},
    ]
    names: list[str] = []
    for turn in range(60):
        request = LlmRequest(
            f"root:{turn}", LlmRole.ROOT, BUILTIN_ROOT_MODEL, list(messages), tools=TOOL_SPECS
        )
        outcome = client.complete(request, budget=budget)
        assert outcome.ok, outcome.error
        assert outcome.text
        assert not outcome.rejected_tool_calls
        assert len(outcome.tool_calls) == 1
        assert outcome.cost_usd == 0
        assert not outcome.usage_estimated
        messages.append(outcome.assistant_message())
        call = outcome.tool_calls[0]
        names.append(call.name)
        messages.append(
            {
                "role": "tool",
                "tool_call_id": call.id,
                "content": json.dumps(engine.call(call.name, call.arguments)),
            }
        )
        if engine.finished is not None:
            break
    generation = ["spawn_child", "evaluate_program"] * 2
    assert names == (
        ["performance_analysis"]
        + ([*generation, "advance_generation"]) * 5
        + ["modify_parameters"]
        + generation
        + ["terminate"]
    )
    assert engine.finished is not None
    assert "generation limit" in engine.finished["reason"]
    assert engine.finished["best_program_id"] == engine.best["id"] == "p12"
    assert engine.parameters == {"exploration_ratio": 0.2}
    assert budget.calls == len(names)
    assert budget.spent_usd == 0


def test_the_child_answers_with_blocks_that_apply(client: LlmClient) -> None:
    request = LlmRequest(
        "child:0:1",
        LlmRole.CHILD,
        BUILTIN_CHILD_MODEL,
        [{"role": "system", "content": "You write bots."}, {"role": "user", "content": child_prompt()}],
        temperature=0.7,
    )
    outcome = client.complete(request)
    assert outcome.ok
    assert not outcome.tool_calls
    changed = apply_blocks(SEED, parse_blocks(outcome.text))
    assert changed != SEED
    compile(changed, "child.py", "exec")


def test_models_and_bad_requests(server_url: str) -> None:
    with httpx.Client(base_url=server_url, timeout=10) as http:
        models = http.get("/models").json()
        assert {m["id"] for m in models["data"]} == {BUILTIN_ROOT_MODEL, BUILTIN_CHILD_MODEL}
        bad = http.post("/chat/completions", content=b"{not json", headers={"Authorization": "Bearer x"})
        assert bad.status_code == 400
        assert "error" in bad.json()
        streamed = http.post("/chat/completions", json={"model": "m", "messages": [], "stream": True})
        assert streamed.status_code == 400
        assert http.post("/elsewhere", json={}).status_code == 404
        plain = http.post("/chat/completions", json={"model": BUILTIN_CHILD_MODEL, "messages": []})
        assert plain.status_code == 200
        assert "no parent program" in plain.json()["choices"][0]["message"]["content"]
