"""The built-in root and child: rule-based stand-ins for the two LLMs, behind the chat-completions
shape, so an evolution run works without any key or network.

The child mutates the parent program with the evolver's mutation operator; the root follows a
fixed policy over the run block that every tool result carries (contract.py). Both are
deterministic functions of the conversation, so a run with them is reproducible.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from services.evolver import contract
from services.evolver.contract import ToolName
from services.evolver.llm.client import (
    CHARS_PER_TOKEN,
    BaseTransport,
    Budget,
    FailureKind,
    LlmRequest,
    Reply,
)
from services.evolver.llm.prices import BUILTIN_CHILD_MODEL, BUILTIN_ROOT_MODEL, FREE, Price
from services.evolver.search.mutation import Mutation, MutationError, mutate_several
from services.evolver.search.surrogate import (
    SCREEN_OPTIMISM,
    SCREENED_STEPS,
    Scored,
    best_predicted,
    parse_table,
)

ROOT_FOCUSES: tuple[str, ...] = (
    "Tune the numeric constants (distances, thresholds, weights, angles) towards better values.",
    "Improve target selection: choose better what to go for or aim at, and when to switch.",
    "Improve movement and positioning relative to the goal, the opponents and the obstacles.",
    "Improve the reaction to danger: notice threats earlier and avoid or answer them.",
    "Simplify the decision logic where it is convoluted and remove branches that never help.",
    "Anticipate: use velocities to predict where things will be a few turns ahead.",
)
"""Game-agnostic focuses the built-in root rotates through when it spawns children."""

PATIENCE = 6
"""Generations without improvement after which the built-in root stops the run."""
MODIFY_EVERY = 5
"""The built-in root revisits the parameters at generations 5, 10, 15, ..."""
EXPLORE_AFTER = 3
"""Generations without improvement after which a review raises the exploration ratio (with racing
a good leader routinely holds for two)."""
BUDGET_NEAR_END = 0.9
MAX_SELECTED = 4


# ---------------------------------------------------------------- helpers over messages


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) and isinstance(part.get("text"), str) else ""
            for part in content
        )
    return ""


def _calls_in(messages: list[dict[str, Any]]) -> list[str]:
    """Names of the tool calls the assistant made so far, in order."""
    names: list[str] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                names.append(function["name"])
    return names


def _fenced_after(text: str, start: int) -> str | None:
    """The body of the first ```python fence at or after `start`."""
    opening = text.find("```python", start)
    if opening < 0:
        return None
    body_start = text.find("\n", opening)
    if body_start < 0:
        return None
    closing = text.find("\n```", body_start)
    body = text[body_start + 1 : closing if closing >= 0 else len(text)]
    return body + "\n" if not body.endswith("\n") else body


def _sections(text: str, heading: str) -> list[str]:
    found: list[str] = []
    position = text.find(heading)
    while position >= 0:
        code = _fenced_after(text, position + len(heading))
        if code is not None:
            found.append(code)
        position = text.find(heading, position + len(heading))
    return found


# ---------------------------------------------------------------- the child


def builtin_child_answer(messages: list[dict[str, Any]]) -> str:
    """Mutate the parent program of the prompt; answer with SEARCH/REPLACE blocks, or with a full
    rewrite when the last message says the previous answer could not be applied.

    The parent and inspirations come from the last user message that has a parent section (a
    retry's message usually carries only the error); the mutation's randomness is seeded from all
    the user messages without their evaluation feedback (which holds timings) and the change that
    made the parent (which it does not read), so the same request always gets the same answer,
    however fast the parent's matches ran.
    """
    from services.evolver.search.diffs import render_blocks

    prompts = [_text(message.get("content")) for message in messages if message.get("role") == "user"]
    last = prompts[-1] if prompts else ""
    parents: list[str] = []
    inspirations: list[str] = []
    rows: list[Scored] = []
    for prompt in reversed(prompts):
        parents = _sections(prompt, contract.PARENT_HEADING)
        if parents:
            inspirations = _sections(prompt, contract.INSPIRATION_HEADING)
            rows = parse_table(_section_text(prompt, contract.CONSTANTS_TABLE_HEADING))
            break
    if not parents:
        return (
            "I found no parent program in the prompt (expected a section starting with "
            f"{contract.PARENT_HEADING!r} followed by a ```python fence), so I cannot propose a change."
        )
    whole = "\n\n".join(_what_it_reads(prompt) for prompt in prompts)
    seed = int.from_bytes(hashlib.sha256(whole.encode("utf-8")).digest()[:8], "big")
    try:
        mutation = _screened_mutation(parents[0], inspirations, random.Random(seed), rows)
    except MutationError as exc:
        return f"I could not find a change to make to the parent program: {exc}."
    if contract.RETRY_HEADING in last or not mutation.blocks:
        return f"{mutation.description}\n\nThe whole program:\n\n```python\n{mutation.source.rstrip()}\n```\n"
    return f"{mutation.description}\n\n{render_blocks(mutation.blocks)}"


def _screened_mutation(
    parent: str, inspirations: list[str], rng: random.Random, rows: list[Scored]
) -> Mutation:
    """One step of the operator; with a table of evaluated programs, the best predicted of
    SCREENED_STEPS distinct steps (search/surrogate.py)."""
    first = mutate_several(parent, rng, inspirations)
    if not rows:
        return first
    drawn = [first]
    for _ in range(5 * SCREENED_STEPS):
        if len(drawn) >= SCREENED_STEPS:
            break
        try:
            step = mutate_several(parent, rng, inspirations)
        except MutationError:
            break
        if all(step.source != other.source for other in drawn):
            drawn.append(step)
    return drawn[best_predicted(parent, [step.source for step in drawn], rows, optimism=SCREEN_OPTIMISM)]


def _section_text(prompt: str, heading: str) -> str:
    """The text of the section under `heading`, up to the next `## ` heading ("" when absent)."""
    start = prompt.find(heading)
    if start < 0:
        return ""
    end = prompt.find("\n## ", start + len(heading))
    return prompt[start + len(heading) : end if end >= 0 else len(prompt)]


UNREAD_SECTIONS = re.compile(
    rf"(?ms)^(?:## Evaluation feedback|{re.escape(contract.PARENT_CHANGE_HEADING)}).*?(?=^## |\Z)"
)
"""What the built-in child does not read: the feedback (it holds timings) and the change that made
the parent. Left out of its seed, so that neither changes which child it makes."""


def _what_it_reads(prompt: str) -> str:
    return UNREAD_SECTIONS.sub("", prompt)


# ---------------------------------------------------------------- the root


@dataclass(frozen=True)
class _Decision:
    tool: ToolName
    arguments: dict[str, Any]
    reasoning: str


def _last_run_block(messages: list[dict[str, Any]]) -> tuple[bool, dict[str, Any] | None]:
    """(whether a tool message exists, the run block of the last one if it has one)."""
    for message in reversed(messages):
        if message.get("role") != "tool":
            continue
        try:
            result = json.loads(_text(message.get("content")))
        except ValueError:
            return True, None
        run = result.get("run") if isinstance(result, dict) else None
        return True, run if isinstance(run, dict) else None
    return False, None


def _int(run: dict[str, Any], key: str, default: int = 0) -> int:
    value = run.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _number(run: dict[str, Any], key: str) -> float | None:
    value = run.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _program_id(entry: object) -> str | None:
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        return str(entry["id"])
    return None


def _budget_near_end(run: dict[str, Any]) -> str | None:
    spent, budget = _number(run, "spent_usd"), _number(run, "budget_usd")
    if spent is not None and budget is not None and budget > 0 and spent >= BUDGET_NEAR_END * budget:
        return f"the budget is nearly spent (${spent:.2f} of ${budget:.2f})"
    tokens, token_budget = _number(run, "tokens"), _number(run, "token_budget")
    if tokens is not None and token_budget and tokens >= BUDGET_NEAR_END * token_budget > 0:
        return f"the token budget is nearly spent ({int(tokens)} of {int(token_budget)})"
    return None


def _decide(messages: list[dict[str, Any]], offered: set[str]) -> _Decision:
    has_tool_message, run = _last_run_block(messages)
    if not has_tool_message or run is None:
        return _Decision(
            ToolName.PERFORMANCE_ANALYSIS,
            {},
            "First, a look at where the run stands.",
        )
    calls = _calls_in(messages)
    generation = _int(run, "generation")
    best = run.get("best")
    best_id = _program_id(best)
    stagnant = _int(run, "generations_without_improvement")

    def terminate(why: str) -> _Decision:
        arguments: dict[str, Any] = {"reason": why}
        if best_id is not None:
            arguments["best_program_id"] = best_id
        return _Decision(ToolName.TERMINATE, arguments, f"Stopping: {why}.")

    unevaluated = [item for item in run.get("unevaluated") or () if isinstance(item, str)]
    if unevaluated:
        return _Decision(
            ToolName.EVALUATE_PROGRAM,
            {"program_id": unevaluated[0]},
            f"{unevaluated[0]} passed the gate but has no fitness yet; evaluating it.",
        )
    near_end = _budget_near_end(run)
    if near_end:
        return terminate(near_end)

    last_advance = max((i for i, name in enumerate(calls) if name == ToolName.ADVANCE_GENERATION), default=-1)
    modified_since = any(name == ToolName.MODIFY_PARAMETERS for name in calls[last_advance + 1 :])
    if (
        ToolName.MODIFY_PARAMETERS in offered
        and generation > 0
        and generation % MODIFY_EVERY == 0
        and not modified_since
    ):
        parameters = run.get("parameters")
        current = parameters.get("exploration_ratio") if isinstance(parameters, dict) else None
        now = float(current) if isinstance(current, int | float) and not isinstance(current, bool) else 0.3
        if stagnant >= EXPLORE_AFTER:
            ratio, why = max(now, 0.5), f"{stagnant} generations without improvement: explore more"
        else:  # never more exploration than the run was given while it improves
            ratio, why = min(now, 0.2), "progress is steady: mostly exploit the best programs"
        return _Decision(
            ToolName.MODIFY_PARAMETERS,
            {"updates": {"exploration_ratio": ratio}, "reasoning": why},
            f"Generation {generation}: revisiting the parameters; {why}.",
        )

    children = _int(run, "children_this_generation")
    if children < _int(run, "max_children_per_generation"):
        spawned = sum(1 for name in calls if name == ToolName.SPAWN_CHILD)
        focus = ROOT_FOCUSES[spawned % len(ROOT_FOCUSES)]
        return _Decision(
            ToolName.SPAWN_CHILD,
            {"prompt": focus},
            f"Child {children + 1} of generation {generation}: {focus}",
        )

    max_generations = _int(run, "max_generations")
    if generation + 1 >= max_generations:
        return terminate(f"the generation limit is reached ({max_generations})")
    if stagnant >= PATIENCE:
        return terminate(f"no improvement for {stagnant} generations")
    selected = [pid for pid in (_program_id(entry) for entry in run.get("top") or ()) if pid][:MAX_SELECTED]
    if best_id is not None and best_id not in selected:
        selected.append(best_id)
    if not selected:
        return terminate("no program has been evaluated successfully, so there is nothing to select")
    reasoning = f"Keeping the best of generation {generation} ({', '.join(selected)}) as parents."
    return _Decision(
        ToolName.ADVANCE_GENERATION,
        {"selected_ids": selected, "reasoning": reasoning},
        reasoning,
    )


def builtin_root_answer(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The built-in root's next assistant message: a short reasoning text and one tool call."""
    offered = {
        tool["function"]["name"]
        for tool in tools or contract.TOOL_SPECS
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict)
    } or {str(name) for name in ToolName}
    decision = _decide(messages, offered)
    turn = sum(1 for message in messages if message.get("role") == "assistant")
    return {
        "role": "assistant",
        "content": decision.reasoning,
        "tool_calls": [
            {
                "id": f"call_{turn}_{decision.tool}",
                "type": "function",
                "function": {"name": str(decision.tool), "arguments": json.dumps(decision.arguments)},
            }
        ],
    }


# ---------------------------------------------------------------- the completion shape


def _chars(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


def builtin_completion(request_json: dict[str, Any]) -> dict[str, Any]:
    """A chat.completion answer from the built-in root or child (chosen by the model name; any
    other model: the root when tools are offered, else the child)."""
    model = str(request_json.get("model") or BUILTIN_CHILD_MODEL)
    raw_messages = request_json.get("messages")
    messages = [m for m in raw_messages if isinstance(m, dict)] if isinstance(raw_messages, list) else []
    raw_tools = request_json.get("tools")
    tools = [t for t in raw_tools if isinstance(t, dict)] if isinstance(raw_tools, list) else None
    as_root = model == BUILTIN_ROOT_MODEL or (model != BUILTIN_CHILD_MODEL and bool(tools))
    if as_root:
        message = builtin_root_answer(messages, tools)
        finish_reason = "tool_calls"
    else:
        message = {"role": "assistant", "content": builtin_child_answer(messages)}
        finish_reason = "stop"
    prompt_tokens = math.ceil((_chars(messages) + (_chars(tools) if tools else 0)) / CHARS_PER_TOKEN)
    completion_tokens = math.ceil(_chars(message) / CHARS_PER_TOKEN)
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True, default=str).encode()).hexdigest()[:24]
    return {
        "id": f"chatcmpl-{digest}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class BuiltinTransport(BaseTransport):
    """The built-in root and child in-process, through the same attempt loop and answer checks as
    `LlmClient` (used when no endpoint is configured). It costs nothing whatever the model name."""

    def __init__(self, *, budget: Budget | None = None) -> None:
        super().__init__(budget=budget, max_attempts=1)

    def price(self, _model: str) -> Price:
        return FREE

    def _exchange(self, request: LlmRequest, _params: dict[str, Any]) -> Reply:
        payload: dict[str, Any] = {
            "model": request.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
        }
        if request.tools:
            payload["tools"] = request.tools
        try:
            body = builtin_completion(payload)
        except Exception as exc:  # a bug in the built-in must fail the call, not the engine
            return Reply(
                failure=FailureKind.SERVER_ERROR,
                error=f"the built-in model failed: {type(exc).__name__}: {exc}",
            )
        return Reply(body=body, answered=True, answer_chars=_chars(body))
