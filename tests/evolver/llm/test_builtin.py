"""The built-in root's rules over hand-built run blocks, the built-in child's answers, and the
in-process transport."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.evolver import contract
from services.evolver.contract import TOOL_SPECS, ToolName
from services.evolver.llm import (
    BUILTIN_CHILD_MODEL,
    BUILTIN_ROOT_MODEL,
    BuiltinTransport,
    LlmRequest,
    LlmRole,
    MemoryBudget,
    builtin_child_answer,
    builtin_completion,
    builtin_root_answer,
    validate,
)
from services.evolver.llm.builtin import EXPLORE_AFTER, PATIENCE, ROOT_FOCUSES
from services.evolver.search.code import extract_code
from services.evolver.search.diffs import apply_blocks, parse_blocks
from tests.support.evolver_prompts import SEED, child_prompt

SCHEMAS = {spec["function"]["name"]: spec["function"]["parameters"] for spec in TOOL_SPECS}


def run_block(**changes: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "generation": 1,
        "max_generations": 10,
        "children_this_generation": 0,
        "max_children_per_generation": 4,
        "unevaluated": [],
        "top": [{"id": "p5", "fitness": 0.6}, {"id": "p2", "fitness": 0.5}],
        "best": {"id": "p5", "fitness": 0.6},
        "generations_without_improvement": 0,
        "parameters": {"exploration_ratio": 0.2},
        "spent_usd": 0.0,
        "budget_usd": None,
        "tokens": 0,
        "token_budget": None,
    }
    block.update(changes)
    assert set(block) == set(contract.RUN_BLOCK_KEYS)
    return block


def conversation(*turns: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """A root conversation: each turn is a tool call the root made and the run block it got back."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You steer an evolution run."},
        {"role": "user", "content": "Begin."},
    ]
    for index, (name, run) in enumerate(turns):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": f"t{index}", "type": "function", "function": {"name": name, "arguments": "{}"}}
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "tool_call_id": f"t{index}",
                "content": json.dumps({"ok": True, "result": {}, "run": run}),
            }
        )
    return messages


def decide(messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    answer = builtin_root_answer(messages, TOOL_SPECS)
    assert answer["role"] == "assistant"
    assert answer["content"]
    [call] = answer["tool_calls"]
    name = call["function"]["name"]
    arguments = json.loads(call["function"]["arguments"])
    assert validate(arguments, SCHEMAS[name]) is None, (name, arguments)
    return name, arguments


def test_first_the_root_looks_at_the_run() -> None:
    assert decide(conversation()) == (ToolName.PERFORMANCE_ANALYSIS, {})


def test_unevaluated_programs_are_evaluated_first() -> None:
    run = run_block(unevaluated=["p9", "p10"], children_this_generation=1)
    assert decide(conversation(("spawn_child", run))) == (ToolName.EVALUATE_PROGRAM, {"program_id": "p9"})


def test_children_are_spawned_with_rotating_focuses() -> None:
    run = run_block(children_this_generation=2)
    name, arguments = decide(
        conversation(("spawn_child", run), ("spawn_child", run), ("evaluate_program", run))
    )
    assert name == ToolName.SPAWN_CHILD
    assert arguments == {"prompt": ROOT_FOCUSES[2]}
    name, arguments = decide(conversation(("performance_analysis", run_block())))
    assert arguments == {"prompt": ROOT_FOCUSES[0]}
    assert "parent_id" not in arguments


def test_a_full_generation_advances_with_the_top_and_the_best() -> None:
    top = [{"id": f"p{i}", "fitness": 1 - i / 10} for i in range(3, 9)]
    run = run_block(children_this_generation=4, top=top, best={"id": "p1", "fitness": 0.95})
    name, arguments = decide(conversation(("evaluate_program", run)))
    assert name == ToolName.ADVANCE_GENERATION
    assert arguments["selected_ids"] == ["p3", "p4", "p5", "p6", "p1"]
    assert arguments["reasoning"]
    run = run_block(children_this_generation=4)
    assert decide(conversation(("evaluate_program", run)))[1]["selected_ids"] == ["p5", "p2"]


def test_parameters_are_revisited_every_fifth_generation() -> None:
    stagnant = run_block(generation=5, generations_without_improvement=3)
    name, arguments = decide(conversation(("advance_generation", stagnant)))
    assert name == ToolName.MODIFY_PARAMETERS
    assert arguments["updates"] == {"exploration_ratio": 0.5}
    steady = run_block(generation=10, generations_without_improvement=1)
    assert decide(conversation(("advance_generation", steady)))[1]["updates"] == {"exploration_ratio": 0.2}
    # A leader that has held for two generations is not stagnation yet (with racing it is routine).
    holding = run_block(generation=10, generations_without_improvement=EXPLORE_AFTER - 1)
    assert decide(conversation(("advance_generation", holding)))[1]["updates"] == {"exploration_ratio": 0.2}
    # While the run improves, it never explores more than it was given (a run set to 0 stays at 0).
    greedy = run_block(
        generation=10, generations_without_improvement=1, parameters={"exploration_ratio": 0.0}
    )
    assert decide(conversation(("advance_generation", greedy)))[1]["updates"] == {"exploration_ratio": 0.0}
    bold = run_block(generation=5, generations_without_improvement=3, parameters={"exploration_ratio": 0.7})
    assert decide(conversation(("advance_generation", bold)))[1]["updates"] == {"exploration_ratio": 0.7}
    # Once per generation: after the change, the generation goes on.
    name, _ = decide(conversation(("advance_generation", stagnant), ("modify_parameters", stagnant)))
    assert name == ToolName.SPAWN_CHILD
    assert decide(conversation(("advance_generation", run_block(generation=6))))[0] == ToolName.SPAWN_CHILD


def test_the_generation_limit_terminates() -> None:
    run = run_block(generation=9, max_generations=10, children_this_generation=4)
    name, arguments = decide(conversation(("evaluate_program", run)))
    assert name == ToolName.TERMINATE
    assert "generation limit" in arguments["reason"]
    assert arguments["best_program_id"] == "p5"


def test_stagnation_terminates() -> None:
    run = run_block(generations_without_improvement=PATIENCE, children_this_generation=4)
    name, arguments = decide(conversation(("evaluate_program", run)))
    assert name == ToolName.TERMINATE
    assert "no improvement" in arguments["reason"]


def test_a_nearly_spent_budget_terminates() -> None:
    run = run_block(spent_usd=0.95, budget_usd=1.0)
    name, arguments = decide(conversation(("spawn_child", run)))
    assert name == ToolName.TERMINATE
    assert "budget" in arguments["reason"]
    run = run_block(tokens=9_500, token_budget=10_000)
    assert "token budget" in decide(conversation(("spawn_child", run)))[1]["reason"]


def test_nothing_to_select_terminates_without_a_best() -> None:
    run = run_block(children_this_generation=4, top=[], best=None)
    name, arguments = decide(conversation(("evaluate_program", run)))
    assert name == ToolName.TERMINATE
    assert "best_program_id" not in arguments


def test_an_unreadable_tool_result_gets_a_fresh_look() -> None:
    messages = conversation(("spawn_child", run_block()))
    messages[-1]["content"] = "not json"
    assert decide(messages)[0] == ToolName.PERFORMANCE_ANALYSIS


def test_the_root_is_deterministic() -> None:
    messages = conversation(("spawn_child", run_block(children_this_generation=1)))
    assert builtin_root_answer(messages, TOOL_SPECS) == builtin_root_answer(messages, TOOL_SPECS)


def test_the_child_answers_with_blocks_that_apply() -> None:
    messages = [{"role": "system", "content": "You write bots."}, {"role": "user", "content": child_prompt()}]
    answer = builtin_child_answer(messages)
    assert answer == builtin_child_answer(messages)  # deterministic
    explanation = answer.split("\n", 1)[0]
    assert explanation
    assert contract.SEARCH_MARKER not in explanation
    changed = apply_blocks(SEED, parse_blocks(answer))
    assert changed != SEED
    compile(changed, "child.py", "exec")


def test_different_prompts_give_different_children() -> None:
    answers = {
        builtin_child_answer([{"role": "user", "content": f"Variant {i}.\n\n" + child_prompt()}])
        for i in range(6)
    }
    assert len(answers) > 1


def test_the_child_uses_inspirations_and_survives_odd_fences() -> None:
    odd = SEED.replace('"""A starting', '"""```python is not a fence here``` A starting', 1)
    messages = [{"role": "user", "content": child_prompt(odd, inspirations=(SEED, SEED))}]
    changed = apply_blocks(odd, parse_blocks(builtin_child_answer(messages)))
    compile(changed, "child.py", "exec")


def test_the_parents_change_in_the_prompt_does_not_change_the_child() -> None:
    """The built-in child does not read the section: its answer is the one it gives without it."""
    change = (
        f"{contract.PARENT_CHANGE_HEADING} p3 from p1\n\n```diff\n--- p1\n+++ child\n@@ -1 +1 @@\n"
        "-MIN_RANGE = 4.0\n+MIN_RANGE = 5.0\n```"
    )
    for focus in range(5):
        plain = child_prompt().replace("Tune the numeric constants.", f"Tune constant {focus}.")
        feedback = "## Evaluation feedback of p3\n\n{}"
        shown = plain.replace(feedback, f"{feedback}\n\n{change}")
        assert shown != plain
        assert builtin_child_answer([{"role": "user", "content": shown}]) == builtin_child_answer(
            [{"role": "user", "content": plain}]
        )


def test_a_retry_gets_a_full_rewrite() -> None:
    messages = [
        {"role": "user", "content": child_prompt()},
        {"role": "assistant", "content": "<<<<<<< SEARCH\nnothing\n=======\nx\n>>>>>>> REPLACE\n"},
        {"role": "user", "content": f"{contract.RETRY_HEADING}\n\nblock 1 matches nothing."},
    ]
    answer = builtin_child_answer(messages)
    code = extract_code(answer)
    assert code is not None
    assert code != SEED
    assert "def " in code
    compile(code, "child.py", "exec")


def test_no_parent_is_said_plainly() -> None:
    answer = builtin_child_answer([{"role": "user", "content": "Write me a bot."}])
    assert "no parent program" in answer
    assert extract_code(answer) is None


@pytest.mark.parametrize(
    ("model", "tools", "root"),
    [
        (BUILTIN_ROOT_MODEL, None, True),
        (BUILTIN_CHILD_MODEL, TOOL_SPECS, False),
        ("gpt-4o", TOOL_SPECS, True),
        ("gpt-4o", None, False),
    ],
)
def test_the_completion_shape(model: str, tools: list[dict[str, Any]] | None, root: bool) -> None:
    messages = [{"role": "user", "content": child_prompt()}]
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = tools
    answer = builtin_completion(body)
    assert answer["object"] == "chat.completion"
    assert answer["model"] == model
    message = answer["choices"][0]["message"]
    assert message["role"] == "assistant"
    assert bool(message.get("tool_calls")) is root
    assert answer["choices"][0]["finish_reason"] == ("tool_calls" if root else "stop")
    usage = answer["usage"]
    assert usage["prompt_tokens"] > 0
    assert usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_the_in_process_transport() -> None:
    budget = MemoryBudget(max_usd=0.0)
    transport = BuiltinTransport(budget=budget)
    root = transport.complete(
        LlmRequest("root:0", LlmRole.ROOT, "gpt-4o", conversation(), tools=TOOL_SPECS, max_tokens=500)
    )
    assert root.ok
    assert root.cost_usd == 0
    assert not root.usage_estimated
    assert root.attempts == 1
    assert [c.name for c in root.tool_calls] == [ToolName.PERFORMANCE_ANALYSIS]
    assert not root.rejected_tool_calls
    child = transport.complete(
        LlmRequest(
            "child:0:1", LlmRole.CHILD, BUILTIN_CHILD_MODEL, [{"role": "user", "content": child_prompt()}]
        )
    )
    assert child.ok
    assert apply_blocks(SEED, parse_blocks(child.text)) != SEED
    assert budget.calls == 2
    assert budget.spent_usd == 0
    assert budget.tokens == root.total_tokens + child.total_tokens
