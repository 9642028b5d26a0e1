"""Making values that bots control safe to store and to serve as JSON.

PostgreSQL refuses NUL in `text` and `\\u0000` in JSONB, and lone UTF-16 surrogates in both;
JSONB and strict JSON parsers refuse NaN and Infinity. A bot controls its error texts, its
actions and (through them) parts of replays, so anything that reaches the database or a JSON
answer goes through `storable()` first: one place that knows every way a value can be refused.
"""

from __future__ import annotations

import math
from typing import Any

NUL_REPLACEMENT = "\ufffd"
MAX_SAFE_INT = 2**63 - 1
"""Larger integers become None: JSONB would take them, but few readers can."""


def safe_text(text: str, max_chars: int | None = None) -> str:
    """The text with NUL and lone surrogates replaced by U+FFFD, cut to `max_chars` characters."""
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(0, max_chars - 3)] + "..."
    if not text.isascii():
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text.replace("\x00", NUL_REPLACEMENT)


def safe_number(value: float) -> float | None:
    """A finite float, or None for NaN and infinities."""
    return value if math.isfinite(value) else None


def storable(
    value: Any, *, max_chars: int | None = None, max_items: int | None = None, max_depth: int = 64
) -> Any:
    """A copy of `value` that PostgreSQL (text and JSONB) and strict JSON parsers accept.

    Strings (dict keys included) lose NUL and lone surrogates and are cut to `max_chars`; NaN and
    infinities become None; containers keep at most `max_items` entries and `max_depth` levels
    (deeper values become None); anything that is not JSON becomes its text.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return safe_text(value, max_chars)
    if isinstance(value, int):
        return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else None
    if isinstance(value, float):
        return safe_number(value)
    if max_depth <= 0:
        return None

    def inner(item: Any) -> Any:
        return storable(item, max_chars=max_chars, max_items=max_items, max_depth=max_depth - 1)

    if isinstance(value, dict):
        items = list(value.items())[:max_items] if max_items is not None else value.items()
        return {
            safe_text(key if isinstance(key, str) else str(key), max_chars): inner(item)
            for key, item in items
        }
    if isinstance(value, list | tuple):
        kept = value[:max_items] if max_items is not None else value
        return [inner(item) for item in kept]
    return safe_text(str(value), max_chars)
