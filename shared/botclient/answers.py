"""Decoding a bot's answer body: strict, bounded JSON that cannot hurt the runner.

Everything the decoder refuses raises `AnswerError` with a short reason that the bot's owner sees;
nothing else escapes. Bounds are checked before or while parsing: the nesting depth before (so the
parser never recurses deeply), numbers while (so no huge int or non-finite float ever exists).

Most answers are a few hundred bytes that no bound comes near, and scans of the raw bytes (strings
included, so they can only err towards the full path) show it: at most MAX_DEPTH brackets in all
cannot nest deeper; no run of more than MAX_INT_DIGITS digits means no integer is too long; and
no digit followed by an exponent (`1e999`) means no number can overflow to infinity (without one, a
number has at most MAX_INT_DIGITS digits before its point). Such a body is parsed without the
string-stripping depth count and without the per-number checks (a Python call for every number),
by the same parser otherwise: it is accepted or refused exactly as on the full path, with the same
reason (tests/botclient/test_answers.py compares both over a corpus).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted; game actions need 4 or 5 levels."""
MAX_INT_DIGITS = 20
"""Longest integer accepted (64-bit values fit); Python would spend quadratic time on longer ones."""

_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NUMBER_SHAPE = bytes.maketrans(b"123456789E", b"000000000e")
"""Every digit as 0 and the exponent as e, so that plain substring searches find digit runs."""
_LONG_INT = b"0" * (MAX_INT_DIGITS + 1)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENING = frozenset(b"[{")


class AnswerError(ValueError):
    """A bot's answer that we refuse to read; the message says why."""


def nesting_depth(data: bytes, limit: int) -> int:
    """How deep arrays and objects nest in JSON text, counted up to `limit` + 1 (then it stops).

    Strings are removed first, so brackets inside them do not count; a text that does not even have
    `limit` opening brackets is answered without a loop.
    """
    brackets = _STRINGS.sub(b"", data).translate(None, _NOT_BRACKETS)
    if brackets.count(b"[") + brackets.count(b"{") <= limit:
        return 0
    depth = deepest = 0
    for byte in brackets:
        if byte in _OPENING:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> float:
    raise AnswerError(f"answer is not valid JSON: {name} is not a JSON number")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise AnswerError(f"answer has a number with too many digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise AnswerError(f"answer has a number that is not a finite number: {text[:20]}")
    return value


# Made once: json.loads with these arguments would build a decoder (and its scanner) per call.
_STRICT = json.JSONDecoder(parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float)
_SHORT_INTS = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
"""For text without a long digit run: the C parser makes the integers itself."""
_SHORT_NUMBERS = json.JSONDecoder(parse_constant=_refuse_constant)
"""For text without a long digit run or an exponent: the C parser makes every number itself."""


def decode_answer(data: bytes) -> Any:
    """The JSON value of a bot's answer body; raises AnswerError for anything we will not read."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AnswerError("answer is not UTF-8 text") from None
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:  # the fast path (see the module docstring)
        shape = data.translate(_NUMBER_SHAPE)
        if _LONG_INT not in shape:
            return _decode(_SHORT_INTS if b"0e" in shape else _SHORT_NUMBERS, text)
    if nesting_depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise AnswerError(f"answer is nested deeper than {MAX_DEPTH} levels")
    return _decode(_STRICT, text)


def _decode(decoder: json.JSONDecoder, text: str) -> Any:
    try:
        if text.startswith("\ufeff"):  # refused as json.loads refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return decoder.decode(text)
    except AnswerError:
        raise
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        detail = str(exc).split(":")[0] if isinstance(exc, ValueError) else type(exc).__name__
        raise AnswerError(f"answer is not valid JSON ({detail[:80]})") from None
