"""Config changes asked while a run trains, as plain dicts (`ConfigChange.changes()`).

The run row keeps the changes asked and not yet committed in a checkpoint (`pending_changes`),
merged in the order they came, and a counter bumped by every change (`changes_version`). The worker
applies at each iteration boundary what it has not applied yet, and when its chunk commits it
clears what it applied: everything if no change came meanwhile, else only the parts that are still
what it applied (a newer value for the same field survives).
"""

from __future__ import annotations

from typing import Any

NESTED = ("rewards",)
"""Fields whose changes merge key by key (a change of one reward weight keeps the others)."""


def merge(pending: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """`pending` with `change` on top."""
    merged = dict(pending)
    for key, value in change.items():
        if key in NESTED and isinstance(value, dict):
            merged[key] = {**dict(pending.get(key) or {}), **value}
        else:
            merged[key] = value
    return merged


def not_applied(pending: dict[str, Any], applied: dict[str, Any]) -> dict[str, Any]:
    """The part of `pending` that `applied` does not hold (with the same value)."""
    rest: dict[str, Any] = {}
    for key, value in pending.items():
        if key in NESTED and isinstance(value, dict):
            done = applied.get(key) or {}
            nested = {k: v for k, v in value.items() if k not in done or done[k] != v}
            if nested:
                rest[key] = nested
        elif key not in applied or applied[key] != value:
            rest[key] = value
    return rest
