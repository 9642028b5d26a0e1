"""Tool arguments against their schema: each broken keyword is one sentence that says where and what,
with the integer and number types narrower than Draft 2020-12's."""

from __future__ import annotations

import json

import pytest

from services.evolver.contract import TOOL_SPECS
from services.evolver.llm import validate

SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 3},
        "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}, "maxItems": 2, "minItems": 1},
        "kind": {"enum": ["a", "b"]},
        "id": {"type": "string", "pattern": "^p[0-9]*$", "minLength": 2},
        "either": {"type": ["string", "null"]},
        "box": {"type": "object", "minProperties": 1, "maxProperties": 1},
    },
    "required": ["n"],
    "additionalProperties": False,
}

TOOLS = {spec["function"]["name"]: spec["function"]["parameters"] for spec in TOOL_SPECS}


def test_conforming_arguments_pass() -> None:
    value = {"n": 1, "x": 0.5, "tags": ["ab"], "kind": "a", "id": "p12", "either": None, "box": {"k": 1}}
    assert validate(value, SCHEMA) is None
    assert validate({"n": 10**400 % 4}, SCHEMA) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([1], "arguments: expected object, got array"),
        ({}, "arguments: missing required property 'n'"),
        (
            {"n": 0, "other": 1},
            "arguments: unknown property 'other' (allowed: box, either, id, kind, n, tags, x)",
        ),
        ({"n": True}, "n: expected integer, got boolean"),
        ({"n": 1.0}, "n: expected integer, got number"),
        ({"n": 4}, "n: 4 is above the maximum 3"),
        ({"n": -1}, "n: -1 is below the minimum 0"),
        ({"n": 0, "x": 0}, "x: 0 must be above 0"),
        ({"n": 0, "x": 1}, "x: 1 must be below 1"),
        ({"n": 0, "x": float("inf")}, "x: inf is not a finite number"),
        ({"n": 0, "x": float("nan")}, "x: nan is not a finite number"),
        ({"n": 0, "tags": []}, "tags: fewer than 1 items"),
        ({"n": 0, "tags": ["a", "b", "c"]}, "tags: more than 2 items (3)"),
        ({"n": 0, "tags": ["a", "abc"]}, "tags[1]: longer than 2 characters (3)"),
        ({"n": 0, "kind": "c"}, "kind: 'c' is not one of ['a', 'b']"),
        ({"n": 0, "id": "x7"}, "id: 'x7' does not match ^p[0-9]*$"),
        ({"n": 0, "id": "p"}, "id: shorter than 2 characters"),
        ({"n": 0, "either": 3}, "either: expected string or null, got integer"),
        ({"n": 0, "box": {}}, "box: fewer than 1 properties"),
        ({"n": 0, "box": {"a": 1, "b": 2}}, "box: more than 1 properties"),
    ],
)
def test_each_broken_keyword_says_where_and_what(value: object, expected: str) -> None:
    assert validate(value, SCHEMA) == expected


def test_a_long_value_is_not_echoed_whole() -> None:
    problem = validate({"n": 0, "id": "q" * 10_000}, SCHEMA) or ""
    assert problem.startswith("id: 'qqq")
    assert len(problem) < 200


def test_the_tool_specs_as_a_model_sends_them() -> None:
    """Arguments decoded from JSON the way the client decodes them (1e999 is infinity in Python)."""
    updates = json.loads('{"updates": {"exploration_ratio": 1e999}}')
    assert (
        validate(updates, TOOLS["modify_parameters"])
        == "updates.exploration_ratio: inf is not a finite number"
    )
    assert validate({"updates": {"quick_matches": 2}}, TOOLS["modify_parameters"]) is None
    assert validate({"selected_ids": ["p1", "x"]}, TOOLS["advance_generation"]) == (
        "selected_ids[1]: 'x' does not match ^p[0-9]+$"
    )
    assert (
        validate({"prompt": "x", "parent_id": 1}, TOOLS["spawn_child"])
        == "parent_id: expected string, got integer"
    )
