"""A misbehaving OpenAI-compatible server on loopback, scripted per request.

Each POST takes the next behaviour from the script (after the script: a plain good answer), so a
test says exactly what the server does on each attempt and counts what reached it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from services.evolver.llm import LlmRequest, LlmRole

Behaviour = Callable[["_Handler"], None]

TEST_PRICE = {"test-model": (1.0, 2.0)}
"""$1 per million prompt tokens, $2 per million completion tokens."""


def completion(
    content: str | None = "hello",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    usage: tuple[int, int] | None = (100, 20),
    finish_reason: str = "stop",
    model: str = "test-model",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return body


def tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def send_raw(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Behaviour:
    def behave(handler: _Handler) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)

    return behave


def send_json(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Behaviour:
    return send_raw(json.dumps(payload).encode(), status, headers)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Behaviour:
    return send_json({"error": {"message": message, "type": "test", "code": None}}, status, headers)


def hang(seconds: float) -> Behaviour:
    """Say nothing for `seconds` (released early when the server closes), then answer."""

    def behave(handler: _Handler) -> None:
        handler.server.release.wait(seconds)  # type: ignore[attr-defined]
        with contextlib.suppress(OSError):
            send_json(completion())(handler)

    return behave


def trickle(seconds: float, interval: float = 0.05) -> Behaviour:
    """Answer with headers at once, then one byte per interval: never idle long enough for a read
    timeout, but never done in time."""

    def behave(handler: _Handler) -> None:
        body = json.dumps(completion()).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        deadline = time.monotonic() + seconds
        try:
            for index in range(len(body)):
                if time.monotonic() > deadline or handler.server.release.is_set():  # type: ignore[attr-defined]
                    break
                handler.wfile.write(body[index : index + 1])
                handler.wfile.flush()
                time.sleep(interval)
        except OSError:
            pass
        handler.close_connection = True

    return behave


def _cut(handler: _Handler) -> None:
    handler.close_connection = True
    try:
        handler.wfile.flush()
        handler.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def drop_mid_body() -> Behaviour:
    """Promise a body, send part of it, hang up."""

    def behave(handler: _Handler) -> None:
        body = json.dumps(completion("x" * 500)).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[:40])
        _cut(handler)

    return behave


def drop_before_answer() -> Behaviour:
    def behave(handler: _Handler) -> None:
        _cut(handler)

    return behave


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        fake: FakeLlmServer = self.server.fake  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        behaviour = fake.record(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        behaviour(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up on a hanging or trickling answer is the point of those tests."""


class FakeLlmServer:
    def __init__(self) -> None:
        self._server = _QuietServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self._server.release = threading.Event()  # type: ignore[attr-defined]
        self._script: list[Behaviour] = []
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._script = list(behaviours)

    def record(self, path: str, headers: dict[str, str], body: Any) -> Behaviour:
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body})
            return self._script.pop(0) if self._script else send_json(completion())

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def close(self) -> None:
        self._server.release.set()  # type: ignore[attr-defined]
        self._server.shutdown()
        self._server.server_close()


def make_request(
    *, tools: list[dict[str, Any]] | None = None, max_tokens: int = 100, timeout_s: float = 5.0, **extra: Any
) -> LlmRequest:
    return LlmRequest(
        key="root:0:1",
        role=LlmRole.ROOT if tools else LlmRole.CHILD,
        model=extra.pop("model", "test-model"),
        messages=extra.pop("messages", [{"role": "user", "content": "hello"}]),
        tools=tools,
        max_tokens=max_tokens,
        timeout_s=timeout_s,
        **extra,
    )
