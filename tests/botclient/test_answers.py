"""Answer decoding: the fast path for answers that no bound comes near accepts and refuses exactly
what the full strict path does, with the same values and the same reasons, over a corpus of
ordinary, odd and hostile bodies and thousands of generated ones."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from shared.botclient.answers import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    AnswerError,
    decode_answer,
    nesting_depth,
)


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


def strict_reference(data: bytes) -> Any:
    """The decoder as it was before the fast path, kept here as the reference."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AnswerError("answer is not UTF-8 text") from None
    if nesting_depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise AnswerError(f"answer is nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(
            text, parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float
        )
    except AnswerError:
        raise
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        detail = str(exc).split(":")[0] if isinstance(exc, ValueError) else type(exc).__name__
        raise AnswerError(f"answer is not valid JSON ({detail[:80]})") from None


def outcome(decode: Any, data: bytes) -> tuple[str, str]:
    """("ok", the value with its types) or ("refused", the reason)."""
    try:
        value = decode(data)
    except AnswerError as exc:
        return "refused", str(exc)
    return "ok", repr(value)  # repr tells 1 from 1.0 and keeps key order


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


CORPUS: list[bytes] = [
    b'{"action": {"pods": [{"x": 8000, "y": 4500, "thrust": 100}, {"x": 1, "y": 2, "thrust": "BOOST"}]}}',
    b'{"action":{"pods":[{"x":8000,"y":4500,"thrust":"SHIELD","message":"hi"}]}}',
    b'{"action": {"units": {"p0u0": {"move": [4.515546464391639, 14.79373574322771], "turn": 1.38}}}}',
    b'{"action": {"units": {}, "memory": {"seen": {"e1": [1e3, 2.5E-3, -0.0]}}}}',
    b'{"action": null}',
    b'{"status": "ok"}',
    b'{"error": "crash \\u0000 here"}',
    b"",
    b" ",
    b"null",
    b"42",
    b"-0",
    b"1.5",
    b'"text"',
    b"[]",
    b"{}",
    b'{"action": 1}  ',
    b'\n\t{"action": 1}\r\n',
    # depth: at, just past and far past the bound, with brackets in strings counted or not
    nested(MAX_DEPTH).encode(),
    nested(MAX_DEPTH + 1).encode(),
    nested(500).encode(),
    ("[" * 40).encode(),
    ('{"a":' * MAX_DEPTH + "1" + "}" * MAX_DEPTH).encode(),
    ('{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)).encode(),
    json.dumps({"action": "[" * 100}).encode(),
    json.dumps({"action": ["[{" * 20, {"k": "]}" * 20}]}).encode(),
    nested(MAX_DEPTH, json.dumps("[[[[")).encode(),
    # integers: at and past the digit bound, negative, in strings, beside floats
    b'{"action": 12345678901234567890}',
    b'{"action": 123456789012345678901}',
    b'{"action": -12345678901234567890}',
    b'{"action": -123456789012345678901}',
    b'{"action": "123456789012345678901234567890"}',
    b'{"action": 1234567890123456789012345.5}',
    b'{"action": 0.123456789012345678901234567}',
    ('{"action": ' + "9" * 5000 + "}").encode(),
    # floats: finite, overflowing, underflowing; exponents in strings and keys
    b'{"action": 1e308}',
    b'{"action": 1e309}',
    b'{"action": -1E999}',
    b'{"action": 1.7976931348623157e+308}',
    b'{"action": 1e-400}',
    b'{"action": 5e-324}',
    b'{"action": 99999999999999999999.5}',
    b'{"action": {"1e999": "1e999", "note": "see 2e5"}}',
    b'{"action": [1e5, 1E5, 1e+5, 1e-5, 0.5]}',
    # constants that are not JSON
    b'{"action": NaN}',
    b'{"action": Infinity}',
    b'{"action": -Infinity}',
    b'{"action": [1, NaN]}',
    b'{"action": "NaN Infinity"}',
    # text encodings and escapes
    b"\xef\xbb\xbf" + b'{"action": 1}',
    b'{"action": "\xff\xfe"}',
    b'{"action": "caf\xc3\xa9 \\u00e9 \\ud83d\\ude00"}',
    b'{"action": "lone \\ud800 surrogate"}',
    b'{"action": "\x01 raw control"}',
    b'{"action": "\\/ \\" \\\\ \\n"}',
    # not JSON at all, or broken
    b"not json",
    b"{'action': 1}",
    b'{"action": 1,}',
    b'{"action": [1, 2,]}',
    b'{"action": 01}',
    b'{"action": 1}{"action": 2}',
    b'{"action": ',
    b'{"action": "unterminated',
    b'{"action": tru}',
    b'{"action": .5}',
    b'{"action": 1.}',
    b'{"action": +1}',
    b'{"action": 0x10}',
    b"<html>502 Bad Gateway</html>",
    b'{"action": {"pods": [' + b'{"x": 1},' * 2000 + b'{"x": 1}]}}',
]


def generated(count: int, seed: int) -> list[bytes]:
    """Random JSON values, formatted in random ways, then some of them damaged."""
    rng = random.Random(seed)
    numbers = [
        "0", "-0", "7", "-7", "1.5", "-2.25", "1e5", "1E-7", "2e+3", "1e308", "1e309", "-1e999",
        "12345678901234567890", "123456789012345678901", "0.1234567890123456789012", "5e-324",
        "99999999999999999999", "100000000000000000000", "3.14159",
    ]  # fmt: skip
    atoms = [*numbers, "true", "false", "null", '"x"', '"e5"', '"1e999"', '"\\u00e9"', '"[{"', '"\\ud800"']
    damage = ["NaN", "Infinity", "-Infinity", "[", "]", "{", "}", ",", ":", '"', "\\", "\xff", "1e"]

    def value(depth: int) -> str:
        roll = rng.random()
        if depth > 40 or roll < 0.45:
            return rng.choice(atoms)
        if roll < 0.75:
            items = [value(depth + 1) for _ in range(rng.randint(0, 4))]
            return "[" + rng.choice([",", ", "]).join(items) + "]"
        pairs = [f'"k{rng.randint(0, 9)}":{value(depth + 1)}' for _ in range(rng.randint(0, 4))]
        return "{" + rng.choice([",", ", \n"]).join(pairs) + "}"

    bodies = []
    for _ in range(count):
        text = '{"action": ' + value(rng.choice([0, 0, 0, 20, 28, 31, 33])) + "}"
        if rng.random() < 0.3:
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(damage) + text[at:]
        if rng.random() < 0.05:
            text = text[: rng.randint(0, len(text))]
        bodies.append(text.encode("utf-8", "surrogatepass"))
    return bodies


@pytest.mark.parametrize("body", CORPUS, ids=range(len(CORPUS)))
def test_the_fast_path_decides_as_the_strict_path_on_the_corpus(body: bytes) -> None:
    assert outcome(decode_answer, body) == outcome(strict_reference, body)


@pytest.mark.slow
def test_the_fast_path_decides_as_the_strict_path_on_generated_answers() -> None:
    bodies = generated(4000, seed=20_251_128)
    results = [(outcome(decode_answer, body), outcome(strict_reference, body)) for body in bodies]
    for body, (fast, strict) in zip(bodies, results, strict=True):
        assert fast == strict, body
    kinds = {strict[0] for _, strict in results}
    reasons = {strict[1].split(" (")[0] for _, strict in results if strict[0] == "refused"}
    assert kinds == {"ok", "refused"}
    # the generator reaches every bound the fast path must leave to the strict one
    for reason in ("nested deeper", "too many digits", "not a finite number", "NaN is not", "not valid JSON"):
        assert any(reason in r for r in reasons), reason


def test_ordinary_answers_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The full path's depth count does not run for a game's answer (and still does for deep ones)."""
    from shared.botclient import answers

    counted: list[bytes] = []
    original = answers.nesting_depth

    def counting(data: bytes, limit: int) -> int:
        counted.append(data)
        return original(data, limit)

    monkeypatch.setattr(answers, "nesting_depth", counting)
    assert decode_answer(CORPUS[0])["action"]["pods"][1]["thrust"] == "BOOST"
    assert decode_answer(CORPUS[2])["action"]["units"]["p0u0"]["turn"] == 1.38
    assert counted == []
    with pytest.raises(AnswerError, match="nested deeper"):
        decode_answer(nested(MAX_DEPTH + 1).encode())
    assert len(counted) == 1
