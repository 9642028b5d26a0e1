"""A tiny JSON-schema checker for the keywords our schemas use (no third-party validator needed)."""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
}


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Every violation found, as 'path: problem'; empty when the value conforms."""
    found: list[str] = []
    if "oneOf" in schema:
        matches = sum(not errors(value, option, path) for option in schema["oneOf"])
        if matches != 1:
            found.append(f"{path}: matches {matches} of oneOf")
        return found
    if "type" in schema and not _is_type(value, schema["type"]):
        return [f"{path}: expected {schema['type']}, got {type(value).__name__}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{path}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{path}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        found.append(f"{path}: {value} < {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        found.append(f"{path}: {value} > {schema['maximum']}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append(f"{path}: longer than {schema['maxLength']}")
    if isinstance(value, dict):
        found.extend(_object_errors(value, schema, path))
    if isinstance(value, list):
        found.extend(_array_errors(value, schema, path))
    return found


def _object_errors(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    found: list[str] = []
    properties = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            found.append(f"{path}: missing {key}")
    for key, item in value.items():
        if key in properties:
            found.extend(errors(item, properties[key], f"{path}.{key}"))
        elif isinstance(schema.get("additionalProperties"), dict):
            found.extend(errors(item, schema["additionalProperties"], f"{path}.{key}"))
        elif schema.get("additionalProperties") is False:
            found.append(f"{path}: unexpected {key}")
    return found


def _array_errors(value: list[Any], schema: dict[str, Any], path: str) -> list[str]:
    found: list[str] = []
    if "minItems" in schema and len(value) < schema["minItems"]:
        found.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        found.append(f"{path}: more than {schema['maxItems']} items")
    if "items" in schema:
        for index, item in enumerate(value):
            found.extend(errors(item, schema["items"], f"{path}[{index}]"))
    return found
