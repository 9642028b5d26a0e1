"""One gate for the inputs that no database or JSON consumer can take, whatever the endpoint.

PostgreSQL text and JSONB refuse NUL characters, lone UTF-16 surrogates cannot be encoded to UTF-8,
and JSONB (like every strict JSON reader) refuses NaN and Infinity. Python's `json` module accepts
all of these, so without this gate each of them reached the database and answered 500. Here they
are refused before any endpoint runs, with a 4xx that names where the bad value is:

- a NUL (raw or `%00`) in the URL path or query string: 400;
- in a JSON body: NaN, Infinity, numbers that overflow to infinity, integers too long to convert,
  NUL or lone surrogates in any string or object key, nesting too deep to walk: 422.

Bodies that are not JSON at all are left to FastAPI, which answers its own 422.
"""

from __future__ import annotations

import json
import math
from email.message import Message as EmailMessage
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway.body_limit import reply_json

MAX_DEPTH = 64
"""Deepest nesting a request body may have; no Arena input comes close."""


class UnsafeInput(ValueError):
    """A value no endpoint can store; `loc` is where it is, as in a validation error."""

    def __init__(self, loc: tuple[str | int, ...], msg: str, kind: str) -> None:
        super().__init__(msg)
        self.loc = loc
        self.msg = msg
        self.kind = kind


def _refuse_constant(name: str) -> Any:
    raise UnsafeInput(("body",), f"{name} is not allowed: JSON numbers must be finite", "finite_number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UnsafeInput(("body",), f"{text} is too large: JSON numbers must be finite", "finite_number")
    return value


def _string_problem(text: str) -> str | None:
    if "\x00" in text:
        return "NUL characters (\\u0000) are not allowed in strings"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "lone UTF-16 surrogates (\\ud800-\\udfff) are not allowed in strings"
    return None


def check_strings(value: Any) -> None:
    """Walk a parsed JSON value (iteratively, so depth cannot exhaust the stack) for bad strings."""
    pending: list[tuple[tuple[str | int, ...], Any]] = [(("body",), value)]
    while pending:
        loc, item = pending.pop()
        if len(loc) > MAX_DEPTH + 1:
            raise UnsafeInput(loc[:3], f"the body is nested deeper than {MAX_DEPTH} levels", "too_deep")
        if isinstance(item, str):
            problem = _string_problem(item)
            if problem:
                raise UnsafeInput(loc, problem, "string_unsafe")
        elif isinstance(item, dict):
            for key, child in item.items():
                problem = _string_problem(key)
                if problem:
                    raise UnsafeInput(loc, f"an object key: {problem}", "string_unsafe")
                pending.append(((*loc, key), child))
        elif isinstance(item, list):
            pending.extend(((*loc, index), child) for index, child in enumerate(item))


def parse_strict_json(body: bytes) -> Any:
    """`json.loads` that refuses what JSONB and UTF-8 refuse; raises UnsafeInput for those, and
    json.JSONDecodeError / UnicodeDecodeError for text that is not JSON at all."""
    try:
        value = json.loads(body, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise UnsafeInput(
            ("body",), f"the body is nested deeper than {MAX_DEPTH} levels", "too_deep"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except UnsafeInput:
        raise
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise UnsafeInput(("body",), f"a number cannot be read: {exc}", "number_invalid") from None
    check_strings(value)
    return value


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return True  # FastAPI reads a body without a content type as JSON
    message = EmailMessage()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def _url_has_nul(scope: Scope) -> bool:
    """A NUL in the path or query, raw or percent-encoded. Decoding makes a NUL only out of the
    text `%00`, so looking for that text (with or without stray `%` before it) is exact."""
    raw_path = scope.get("raw_path") or b""
    query = scope.get("query_string") or b""
    return "\x00" in scope.get("path", "") or any(
        b"\x00" in part or b"%00" in part for part in (raw_path, query)
    )


class InputGuardMiddleware:
    """Refuses NUL in URLs and unsafe JSON bodies before routing (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _url_has_nul(scope):
            await reply_json(
                send, 400, {"detail": "NUL characters (%00) are not allowed in the URL path or query"}
            )
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if not _is_json(headers.get(b"content-type", b"").decode("latin-1") or None):
            await self.app(scope, receive, send)
            return
        body, more = await _read_body(receive)
        if body:
            try:
                parse_strict_json(body)
            except UnsafeInput as exc:
                loc = ".".join(str(part) for part in exc.loc)
                problem = {"loc": loc, "msg": exc.msg, "type": exc.kind}
                await reply_json(
                    send, 422, {"detail": f"invalid request: {loc}: {exc.msg}", "errors": [problem]}
                )
                return
            except ValueError:
                pass  # not JSON at all: FastAPI answers that with its own 422
        await self.app(scope, _replay(body, more, receive), send)


async def _read_body(receive: Receive) -> tuple[bytes, list[Message]]:
    """The whole body; messages other than body chunks (a disconnect) are kept to pass on."""
    chunks: list[bytes] = []
    other: list[Message] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            other.append(message)
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks), other


def _replay(body: bytes, other: list[Message], receive: Receive) -> Receive:
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *other]

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
