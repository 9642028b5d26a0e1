"""Tool arguments checked against their tool's JSON Schema (contract.TOOL_SPECS) by `jsonschema`.

A model's tool arguments are checked before the engine acts on them, so a malformed call becomes a
message back to the model instead of an error deep in the engine; the message names the argument
and what is wrong with it, since the model has to correct it from that alone.

The schemas are read as Draft 2020-12, with two types narrower than the draft's, because the engine
uses the values as Python numbers: an integer is never a float (the draft counts 2.0), and a number
is finite (Python's json reads 1e999 as infinity).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError, best_match  # type: ignore[import-untyped]


def _is_integer(_checker: object, value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(checker: object, value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return _is_integer(checker, value)


_Validator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    ),
)


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    names = {float: "number", str: "string", list: "array", dict: "object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _where(path: Iterable[str | int]) -> str:
    """`updates.exploration_ratio`, `selected_ids[2]`; `arguments` for the whole object."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text or "arguments"


def _wrong_type(error: ValidationError) -> str:
    value = error.instance
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number"
    expected = error.validator_value
    allowed = [expected] if isinstance(expected, str) else list(expected)
    return f"expected {' or '.join(allowed)}, got {_type_name(value)}"


def _unknown_properties(error: ValidationError) -> str:
    known = error.schema.get("properties", {})
    unknown = [name for name in error.instance if name not in known]
    return f"unknown property {unknown[0]!r} (allowed: {', '.join(sorted(known)) or 'none'})"


def _missing(error: ValidationError) -> str:
    missing = [name for name in error.validator_value if name not in error.instance]
    return f"missing required property {missing[0]!r}"


_SAY: dict[str, Callable[[ValidationError], str]] = {
    "type": _wrong_type,
    "enum": lambda e: f"{e.instance!r} is not one of {e.validator_value!r}",
    "const": lambda e: f"{e.instance!r} is not {e.validator_value!r}",
    "minimum": lambda e: f"{e.instance} is below the minimum {e.validator_value}",
    "maximum": lambda e: f"{e.instance} is above the maximum {e.validator_value}",
    "exclusiveMinimum": lambda e: f"{e.instance} must be above {e.validator_value}",
    "exclusiveMaximum": lambda e: f"{e.instance} must be below {e.validator_value}",
    "minLength": lambda e: f"shorter than {e.validator_value} characters",
    "maxLength": lambda e: f"longer than {e.validator_value} characters ({len(e.instance)})",
    "pattern": lambda e: f"{e.instance[:80]!r} does not match {e.validator_value}",
    "minItems": lambda e: f"fewer than {e.validator_value} items",
    "maxItems": lambda e: f"more than {e.validator_value} items ({len(e.instance)})",
    "minProperties": lambda e: f"fewer than {e.validator_value} properties",
    "maxProperties": lambda e: f"more than {e.validator_value} properties",
    "required": _missing,
    "additionalProperties": _unknown_properties,
}
"""What the model reads for each keyword: short, without echoing a long value back (the library's
own messages repeat the whole value and do not say where it is)."""


def validate(value: Any, schema: dict[str, Any]) -> str | None:
    """The way `value` breaks `schema` that matters most (the library's best match), as one sentence
    that starts with where; None when it conforms."""
    error = best_match(_Validator(schema).iter_errors(value))
    if error is None:
        return None
    say = _SAY.get(error.validator)
    return f"{_where(error.absolute_path)}: {say(error) if say else error.message}"
