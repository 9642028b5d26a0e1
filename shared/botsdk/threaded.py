"""The SDK's previous server: `http.server` with a thread per connection, kept only as the baseline
that `scripts/bench_internals.py` (c) measures the asyncio server (shared.botsdk.server) against and
that tests/sandbox/test_botsdk_server.py compares it with, request by request. The same BotApp
behind it, so the same answers; not part of the hosted-bot sandbox.
"""

from __future__ import annotations

import email.parser
import json
import os
import re
import socket
import socketserver
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from shared.botsdk.server import (
    KEEPALIVE_IDLE_S,
    MAX_BODY_BYTES,
    MAX_HEADER_LINE,
    MAX_HEADERS,
    BotApp,
    DecideFn,
    InitFn,
    short_error,
)

_SIMPLE_HEADER = re.compile(r"([\x21-\x39\x3b-\x7e]+):([^\r\n]*)\r?\n")
"""A header line the email parser would read as just `name: value` (no folding, no stray CR)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "arena-botsdk/1"
    sys_version = ""
    timeout = KEEPALIVE_IDLE_S
    app: BotApp
    raw_requestline: bytes  # set by handle_one_request before parse_request runs
    _first_values: dict[str, str] | None = None

    def parse_request(self) -> bool:
        """The standard parsing, minus the email parser for plain header blocks.

        http.server hands every header block to the `email` package, which costs a large share of
        a small request's CPU. Requests with an ordinary HTTP/1.x request line and simple
        `Name: value` header lines are parsed here into the same HTTPMessage with the same
        limits; anything else goes through the standard path unchanged.
        """
        self._first_values = None
        requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = requestline.split()
        if len(words) != 3 or words[2] not in ("HTTP/1.1", "HTTP/1.0") or words[1].startswith("//"):
            return bool(super().parse_request())
        command, path, version = words
        self.requestline = requestline
        self.command, self.path, self.request_version = command, path, version
        self.close_connection = not (version == "HTTP/1.1" and self.protocol_version >= "HTTP/1.1")
        lines: list[bytes] = []
        while True:  # the standard path's limits and messages
            line = self.rfile.readline(MAX_HEADER_LINE + 1)
            if len(line) > MAX_HEADER_LINE:
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Line too long", "header line")
                return False
            lines.append(line)
            if len(lines) > MAX_HEADERS:
                self.send_error(
                    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                    "Too many headers",
                    f"got more than {MAX_HEADERS} headers",
                )
                return False
            if line in (b"\r\n", b"\n", b""):
                break
        message = self.MessageClass()
        first: dict[str, str] = {}  # lower-cased name -> first value, what message.get() gives
        for line in lines[:-1]:  # the last one is the blank line (or the end of the stream)
            match = _SIMPLE_HEADER.fullmatch(line.decode("iso-8859-1"))
            if match is None:
                text = b"".join(lines).decode("iso-8859-1")
                message = email.parser.Parser(_class=self.MessageClass).parsestr(text)
                break
            name, value = match[1], match[2].lstrip(" \t")
            message.set_raw(name, value)
            first.setdefault(name.lower(), value)
        else:
            self._first_values = first
        self.headers = message
        conntype = self._header("Connection").lower()
        if conntype == "close":
            self.close_connection = True
        elif conntype == "keep-alive" and self.protocol_version >= "HTTP/1.1":
            self.close_connection = False
        expect = self._header("Expect").lower()
        if expect == "100-continue" and self.protocol_version >= "HTTP/1.1" and version >= "HTTP/1.1":
            return bool(self.handle_expect_100())
        return True

    def _header(self, name: str, default: str = "") -> str:
        """`self.headers.get(name, default)`, from the dict the fast path built when it did."""
        first = self._first_values
        if first is None:
            return str(self.headers.get(name, default))
        return first.get(name.lower(), default)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        try:
            body = self._read_body()
            if body is None:
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload = self.app.handle(self.command, self.path, headers, body)
        except Exception as exc:  # never let one request take the server down
            status, payload = 500, {"error": short_error(exc)}
        self._send(status, payload)

    def _read_body(self) -> bytes | None:
        if self._header("Transfer-Encoding").lower() == "chunked":
            self._send(411, {"error": "chunked bodies are not supported; send Content-Length"})
            self.close_connection = True
            return None
        raw = self._header("Content-Length", "0") or "0"
        try:
            length = int(raw)
        except ValueError:
            length = -1
        if length < 0:
            self._send(400, {"error": "bad Content-Length"})
            self.close_connection = True
            return None
        if length > MAX_BODY_BYTES:
            self._send(413, {"error": "body too large"})
            self.close_connection = True
            return None
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, payload: Any) -> None:
        """The answer as send_response and send_header would write it, built here so that status
        line, headers and body leave in one write: one packet and one wake-up for the runner."""
        data = json.dumps(payload, separators=(",", ":")).encode()
        self.log_request(status)
        if self.request_version == "HTTP/0.9":  # no status line, no headers
            answer = data
        else:
            phrase = self.responses[status][0] if status in self.responses else ""
            head = (
                f"{self.protocol_version} {status} {phrase}\r\n"
                f"Server: {self.version_string()}\r\n"
                f"Date: {self.date_time_string()}\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n"
            )
            answer = head.encode("latin-1") + data
        try:
            self.wfile.write(answer)
        except OSError:
            self.close_connection = True

    def setup(self) -> None:
        if isinstance(self.server, TCPBotServer):
            # Error pages from http.server (send_error) are several writes: without this, Nagle's
            # algorithm and delayed ACKs add tens of milliseconds to some answers over TCP.
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()

    def address_string(self) -> str:
        return str(self.client_address[0]) if self.client_address else "unix"

    def log_message(self, format: str, *args: Any) -> None:
        if os.environ.get("ARENA_BOTSDK_VERBOSE"):
            sys.stderr.write("botsdk: " + (format % args) + "\n")


class _QuietErrors:
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A broken connection is the client's problem; keep the log readable."""
        if os.environ.get("ARENA_BOTSDK_VERBOSE"):
            super().handle_error(request, client_address)  # type: ignore[misc]


class TCPBotServer(_QuietErrors, socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True


def make_threaded_server(
    decide: DecideFn,
    *,
    secret: str,
    host: str = "127.0.0.1",
    port: int = 0,
    init: InitFn | None = None,
    accept_v1: bool = False,
) -> TCPBotServer:
    """The previous server on a TCP port, bound; `serve_forever()` runs it."""
    app = BotApp(decide, secret=secret, init=init, accept_v1=accept_v1)
    return TCPBotServer((host, port), type("BotHandler", (_Handler,), {"app": app}))
