"""What the root and the children are told.

The root gets the run's goal, its limits and its tools; at each generation a briefing with where
the run stands. A child gets the game's rules, the bot contract, the root's focus, the parent's
code with its evaluation feedback, the change that made the parent, inspirations, and the answer
format (SEARCH/REPLACE blocks, or a whole program). The game's rules come from its document
(docs/games/<game>.md), so the LLM reads what people read.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from services.evolver.contract import (
    CONSTANTS_TABLE_HEADING,
    DIVIDER_MARKER,
    INSPIRATION_HEADING,
    PARENT_CHANGE_HEADING,
    PARENT_HEADING,
    REPLACE_MARKER,
    RETRY_HEADING,
    SEARCH_MARKER,
)

DOCS = Path(__file__).resolve().parents[3] / "docs" / "games"
GAME_SECTIONS = ("Rules", "Rules as implemented", "Action", "Observation")
MAX_FEEDBACK_CHARS = 4_000
MAX_PARENT_CHANGE_CHARS = 4_000
"""A rewrite's diff can be as long as the program; the direction of a small change is what helps."""

_FALLBACK = {
    "battle": "A top-down team shooter: each player commands units that move, turn, fire and dodge; "
    "the last team standing wins, else units alive, then total hp, then damage at the time limit.",
    "podracing": "CodinGame's Mad Pod Racing: two pods per player race through checkpoints; thrust, "
    "BOOST and SHIELD; the first pod to finish its laps wins.",
}


@functools.cache
def game_brief(game: str) -> str:
    """The rules, action and observation sections of the game's document (or a short summary)."""
    path = DOCS / f"{game}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return _FALLBACK.get(game, f"The game {game}.")
    parts = re.split(r"(?m)^## ", text)
    keep = [f"## {part.strip()}" for part in parts[1:] if part.split("\n", 1)[0].strip() in GAME_SECTIONS]
    return "\n\n".join(keep) if keep else _FALLBACK.get(game, f"The game {game}.")


def root_system(game: str, limits: dict[str, Any], fitness: str) -> str:
    return (
        f"You direct an evolutionary search for the strongest {game} bot on the Arena platform.\n"
        "Child LLMs write the code; you decide what they work on, which programs are evaluated, "
        "which programs the next generation starts from, and when to stop. Act only through the "
        "tools. Every tool result ends with a `run` block that tells you where the run stands.\n\n"
        f"Fitness: {fitness}\n"
        "A typical generation: spawn children (each with a focused prompt), evaluate them, look at "
        "the performance analysis, then advance the generation with the programs worth building on "
        "(several, to keep diversity). Terminate when progress has stalled or the budget is nearly "
        "spent, naming the best program.\n\n"
        "Hard limits the system enforces whatever you decide: " + json.dumps(limits, sort_keys=True)
    )


def generation_briefing(generation: int, stats: dict[str, Any]) -> str:
    return (
        f"Generation {generation} begins. Where the run stands:\n"
        + json.dumps(stats, sort_keys=True, default=str)
        + "\nDecide what to do next."
    )


def child_system(game: str) -> str:
    return (
        f"You write Python bots for the game `{game}` on the Arena platform.\n\n"
        "The bot contract: one Python module using only the standard library, defining "
        "`decide(observation: dict) -> dict` (called once per turn with the JSON observation of all "
        "of your units; return the JSON action) and optionally `init(config)`. At the top level only "
        "imports, function and class definitions and constant assignments are allowed: no code "
        "runs when the module loads. No file, network, process or environment access; no exec, "
        "eval, getattr with computed names or dunder tricks. Each turn has a time budget; a bot that "
        "is too slow or raises plays no action that turn and forfeits after repeated failures.\n\n"
        f"# The game\n\n{game_brief(game)}\n\n"
        "# How to answer\n\n"
        "Prefer small, targeted edits as SEARCH/REPLACE blocks; the SEARCH text must match the "
        "current program exactly (including indentation) and occur once:\n\n"
        f"{SEARCH_MARKER}\n<lines of the current program>\n{DIVIDER_MARKER}\n<the new lines>\n"
        f"{REPLACE_MARKER}\n\n"
        "Or, for a larger change, answer with the whole new program in one ```python block. "
        "Start with one or two sentences saying what you changed and why."
    )


def _fenced(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


def _feedback_text(feedback: dict[str, Any]) -> str:
    if not feedback:
        return "(not evaluated)"
    text = json.dumps(feedback, sort_keys=True, default=str)
    if len(text) > MAX_FEEDBACK_CHARS:
        text = text[:MAX_FEEDBACK_CHARS] + " …(cut)"
    return text


def child_prompt(
    label: str,
    focus: str,
    parent_name: str,
    parent_code: str,
    parent_feedback: dict[str, Any],
    parent_fitness: float | None,
    inspirations: Sequence[tuple[str, str, float | None]],
    parent_change: tuple[str, str] | None = None,
    constants_table: str | None = None,
) -> str:
    """The child's user message: the root's focus, the parent and its feedback, the change that made
    the parent (its parent's id and the unified diff, when it has a parent), inspirations, the table
    of the named constants of recent evaluated programs.
    `label` ("generation 3, child 2") tells apart requests that are otherwise alike."""
    parts = [
        f"# Your task ({label})\n\n{focus.strip()}",
        f"{PARENT_HEADING} {parent_name} (fitness {_fitness(parent_fitness)})\n\n{_fenced(parent_code)}",
        f"## Evaluation feedback of {parent_name}\n\n{_feedback_text(parent_feedback)}",
    ]
    if parent_change is not None and parent_change[1].strip():
        grandparent_name, diff = parent_change
        if len(diff) > MAX_PARENT_CHANGE_CHARS:
            diff = diff[:MAX_PARENT_CHANGE_CHARS] + "\n…(cut)\n"
        parts.append(
            f"{PARENT_CHANGE_HEADING} {parent_name} from {grandparent_name}\n\n```diff\n{diff.rstrip()}\n```"
        )
    for name, code, fitness in inspirations:
        parts.append(f"{INSPIRATION_HEADING} {name} (fitness {_fitness(fitness)})\n\n{_fenced(code)}")
    if constants_table:
        parts.append(
            f"{CONSTANTS_TABLE_HEADING}\n\nThe run's most recent evaluated programs, oldest first: fitness, "
            f"matches played and the values of {parent_name}'s named constants (- where a program has "
            f"none). Many noisy figures together show which way a constant should move.\n\n{constants_table}"
        )
    parts.append(
        f"Answer with SEARCH/REPLACE blocks against {parent_name}, or the whole new program in one "
        "```python block."
    )
    return "\n\n".join(parts)


def retry_prompt(error: str) -> str:
    return (
        f"{RETRY_HEADING}\n\n{error}\n\nAnswer again: either SEARCH/REPLACE blocks whose SEARCH text "
        "occurs exactly once in the parent program, or (preferred now) the whole new program in one "
        "```python block."
    )


def rewrite_prompt(error: str) -> str:
    return (
        f"{RETRY_HEADING}\n\n{error}\n\nAnswer with the complete new program in one ```python block, "
        "and nothing else."
    )


def _fitness(value: float | None) -> str:
    return "not evaluated" if value is None else f"{value:.3f}"
