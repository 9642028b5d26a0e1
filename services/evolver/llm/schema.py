"""A small JSON Schema validator for the subset the root's tool specs use (contract.TOOL_SPECS).

A model's tool arguments are checked before the engine acts on them, so a malformed call becomes a
message back to the model instead of an error deep in the engine. Keywords outside the subset
(description, title, ...) are ignored.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _type_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _matches_type(value: object, expected: str) -> bool:
    actual = _type_of(value)
    if expected == "number":
        return actual in ("integer", "number")
    return actual == expected


def _where(path: str) -> str:
    return path or "arguments"


def validate(value: Any, schema: dict[str, Any], path: str = "") -> str | None:
    """The first way `value` breaks `schema`, as a sentence naming where; None when it conforms."""
    expected = schema.get("type")
    if expected is not None:
        allowed = [expected] if isinstance(expected, str) else list(expected)
        if not any(_matches_type(value, kind) for kind in allowed if kind in _TYPES):
            return f"{_where(path)}: expected {' or '.join(allowed)}, got {_type_of(value)}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{_where(path)}: {value} is not a finite number"
    if "enum" in schema and value not in schema["enum"]:
        return f"{_where(path)}: {value!r} is not one of {schema['enum']!r}"

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{_where(path)}: {value} is below the minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{_where(path)}: {value} is above the maximum {schema['maximum']}"
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            return f"{_where(path)}: {value} must be above {schema['exclusiveMinimum']}"
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            return f"{_where(path)}: {value} must be below {schema['exclusiveMaximum']}"

    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            return f"{_where(path)}: shorter than {schema['minLength']} characters"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{_where(path)}: longer than {schema['maxLength']} characters ({len(value)})"
        if "pattern" in schema and not _compiled(schema["pattern"]).search(value):
            return f"{_where(path)}: {value[:80]!r} does not match {schema['pattern']}"

    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            return f"{_where(path)}: fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{_where(path)}: more than {schema['maxItems']} items ({len(value)})"
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                problem = validate(item, items, f"{path}[{index}]")
                if problem:
                    return problem

    if isinstance(value, dict):
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            return f"{_where(path)}: fewer than {schema['minProperties']} properties"
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            return f"{_where(path)}: more than {schema['maxProperties']} properties"
        for name in schema.get("required", ()):
            if name not in value:
                return f"{_where(path)}: missing required property {name!r}"
        properties: dict[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            child_path = f"{path}.{name}" if path else name
            if name in properties:
                problem = validate(item, properties[name], child_path)
            elif extra is False:
                allowed_names = ", ".join(sorted(properties)) or "none"
                problem = f"{_where(path)}: unknown property {name!r} (allowed: {allowed_names})"
            elif isinstance(extra, dict):
                problem = validate(item, extra, child_path)
            else:
                problem = None
            if problem:
                return problem
    return None
