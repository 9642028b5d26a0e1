"""What the root LLM, the child LLMs and the engine agree on: the root's tools, the shape of every
tool result, and the markers of a child's prompt.

Everything that speaks to a model (the engine, the built-in root and child behind the local
OpenAI-compatible server) reads these names from here, so a model that follows this contract works
whichever side implements it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ToolName(StrEnum):
    """The root's tools (the seed's functions, plus a sandboxed `python`)."""

    SPAWN_CHILD = "spawn_child"
    EVALUATE_PROGRAM = "evaluate_program"
    PERFORMANCE_ANALYSIS = "performance_analysis"
    HISTORICAL_TRENDS = "historical_trends"
    ADVANCE_GENERATION = "advance_generation"
    MODIFY_PARAMETERS = "modify_parameters"
    TERMINATE = "terminate"
    PYTHON = "python"


PROGRAM_ID_PATTERN = r"^p[0-9]+$"
"""Programs are named to models as "p<seq>", their number within the run ("p0" is the first seed)."""

MUTABLE_PARAMETERS: dict[str, dict[str, Any]] = {
    "exploration_ratio": {"type": "number", "minimum": 0.0, "maximum": 1.0},
    "quick_matches": {"type": "integer", "minimum": 0, "maximum": 12},
    "tournament_matches": {"type": "integer", "minimum": 0, "maximum": 30},
    "child_temperature": {"type": "number", "minimum": 0.0, "maximum": 2.0},
    "migration_interval": {"type": "integer", "minimum": 1, "maximum": 50},
}
"""What `modify_parameters` may change, with bounds; anything else is refused with a message."""

PARAMETER_UPDATES: dict[str, Any] = {
    "type": "object",
    "properties": MUTABLE_PARAMETERS,
    "additionalProperties": False,
    "minProperties": 1,
}
"""The schema of `modify_parameters`' `updates`, which the engine checks again before it changes anything."""


def _tool(
    name: ToolName, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": str(name),
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_PROGRAM_ID = {"type": "string", "pattern": PROGRAM_ID_PATTERN}

TOOL_SPECS: list[dict[str, Any]] = [
    _tool(
        ToolName.SPAWN_CHILD,
        "Ask a child LLM for a new program. You write the focus of the change; the system adds the "
        "parent's code, inspiration programs, the parent's evaluation feedback and the answer format. "
        "Without parent_id the program database samples a parent (exploitation or exploration). "
        "The new program passes the static gate before anything runs it. Limited per generation.",
        {
            "prompt": {"type": "string", "minLength": 1, "maxLength": 8000},
            "parent_id": _PROGRAM_ID,
            "inspiration_ids": {"type": "array", "items": _PROGRAM_ID, "maxItems": 3},
        },
        ["prompt"],
    ),
    _tool(
        ToolName.EVALUATE_PROGRAM,
        "Run the evaluation cascade on a program (smoke run, quick matches against built-in bots, "
        "a tournament against the live fleet) and return its fitness, metrics per opponent and "
        "feedback. A program already evaluated returns its stored result at no cost.",
        {"program_id": _PROGRAM_ID},
        ["program_id"],
    ),
    _tool(
        ToolName.PERFORMANCE_ANALYSIS,
        "Statistics of a generation (default: the current one): fitness per island, best and median, "
        "top programs, MAP-Elites grid occupancy, failures.",
        {"generation": {"type": "integer", "minimum": 0}},
        [],
    ),
    _tool(
        ToolName.HISTORICAL_TRENDS,
        "Best and median fitness per generation, improvement rate, generations without improvement.",
        {},
        [],
    ),
    _tool(
        ToolName.ADVANCE_GENERATION,
        "Close the current generation and start the next one; the selected programs (any number) "
        "are the parents the next generation draws from. Unevaluated programs are evaluated first.",
        {
            "selected_ids": {"type": "array", "items": _PROGRAM_ID, "minItems": 1, "maxItems": 64},
            "reasoning": {"type": "string", "maxLength": 4000},
        },
        ["selected_ids"],
    ),
    _tool(
        ToolName.MODIFY_PARAMETERS,
        "Change evolution parameters from the next step on. Allowed keys and bounds: "
        + ", ".join(
            f"{key} ({spec['minimum']}..{spec['maximum']})" for key, spec in MUTABLE_PARAMETERS.items()
        )
        + ".",
        {
            "updates": PARAMETER_UPDATES,
            "reasoning": {"type": "string", "maxLength": 4000},
        },
        ["updates"],
    ),
    _tool(
        ToolName.TERMINATE,
        "End the evolution run, with your reason and the program you consider best.",
        {"reason": {"type": "string", "minLength": 1, "maxLength": 4000}, "best_program_id": _PROGRAM_ID},
        ["reason"],
    ),
    _tool(
        ToolName.PYTHON,
        "Run Python analysis code in a sandbox (no network, no files, 5 s) over a read-only snapshot "
        "of the program database: `programs` (list of dicts: id, generation, island, parent_id, "
        "status, fitness, metrics, descriptors) and `generations` (list of dicts). Returns what it "
        "prints (at most 8000 characters).",
        {"code": {"type": "string", "minLength": 1, "maxLength": 20000}},
        ["code"],
    ),
]

# ---------------------------------------------------------------- tool results
# Every tool result the root sees is one JSON object:
#   {"ok": true, "result": {...}, "run": RUN_BLOCK}   or   {"ok": false, "error": "...", "run": RUN_BLOCK}
# RUN_BLOCK tells the root where the run stands after the call:
#   {"generation": int, "max_generations": int,
#    "children_this_generation": int, "max_children_per_generation": int,
#    "unevaluated": ["p12", ...],            programs of this generation that passed the gate but
#                                            have not been evaluated yet
#    "top": [{"id": "p7", "fitness": 0.61}, ...],   best evaluated programs of this generation
#                                            (at most 8), best first; the seeds count as generation 0
#    "best": {"id": "p7", "fitness": 0.61} | null,  best of the whole run
#    "generations_without_improvement": int,
#    "parameters": {<MUTABLE_PARAMETERS keys>: value},
#    "spent_usd": float, "budget_usd": float | null, "tokens": int, "token_budget": int | null}
RESULT_KEYS = ("ok", "result", "error", "run")
RUN_BLOCK_KEYS = (
    "generation",
    "max_generations",
    "children_this_generation",
    "max_children_per_generation",
    "unevaluated",
    "top",
    "best",
    "generations_without_improvement",
    "parameters",
    "spent_usd",
    "budget_usd",
    "tokens",
    "token_budget",
)

# ---------------------------------------------------------------- a child's prompt
# The engine builds the child's user message from the root's focus text and these sections, each a
# heading line followed by a fenced ```python block. The built-in child reads them back.
PARENT_HEADING = "## Parent program"
"""Followed by " <id>" and the parent's code in a ```python fence."""
INSPIRATION_HEADING = "## Inspiration program"
"""Followed by " <id>" and its code in a ```python fence; zero or more."""
PARENT_CHANGE_HEADING = "## The change that made the parent"
"""Followed by " <id> from <its parent's id>" and a unified diff in a ```diff fence; present when the
parent has a parent: what the lineage tried last, which a model can continue or undo."""
CONSTANTS_TABLE_HEADING = "## Named constants of evaluated programs"
"""Followed by a table (services/evolver/search/surrogate.render_table) of the run's recent evaluated
programs: fitness, matches played and the values of the parent's named constants; present when the
run's search.constants_table is above zero. The built-in child fits its surrogate on it."""
RETRY_HEADING = "## Your previous answer could not be applied"
"""Present when the child is asked again after a diff that did not apply; the built-in child then
answers with a full rewrite."""
SEARCH_MARKER = "<<<<<<< SEARCH"
DIVIDER_MARKER = "======="
REPLACE_MARKER = ">>>>>>> REPLACE"
