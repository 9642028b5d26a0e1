"""The bot side of protocol v1: a small threaded HTTP/1.1 server. Standard library only, because
it also runs inside the hosted-bot sandbox.

The server never crashes on bad input: malformed requests get 400, unsigned, stale or replayed ones
401, and an exception in the author's code becomes a 500 with a short message (the runner then plays
the game's default action for that turn).

Signatures must be v2 (bound to the method and path); `accept_v1=True` also accepts the deprecated
v1. Every accepted message id is remembered for the freshness window, so a request is served once.
"""

from __future__ import annotations

import email.parser
import json
import os
import re
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from shared.botsdk.replay import DEFAULT_MAX_RATE, ReplayCache, ReplayCacheFull
from shared.protocol import signing

PROTOCOL_VERSION = 1
MAX_BODY_BYTES = 1_000_000
KEEPALIVE_IDLE_S = 60.0
MAX_HEADER_LINE = 65536
"""Longest request header line, in bytes; the same limit http.client applies on the standard path."""
MAX_HEADERS = 100
"""Most header lines in a request; also the same as http.client's."""

_SIMPLE_HEADER = re.compile(r"([\x21-\x39\x3b-\x7e]+):([^\r\n]*)\r?\n")
"""A header line the email parser would read as just `name: value` (no folding, no stray CR)."""

DecideFn = Callable[[Any], Any]
InitFn = Callable[[dict[str, Any]], Any]


class BotApp:
    """Protocol logic without the transport: verify, parse, call the author's code, shape answers.

    Calls to `init` and `decide` are serialised by a lock, so authors can keep plain module state
    even though connections are served on several threads. `accept_v1` accepts the deprecated v1
    signatures (not bound to method and path) for bots behind a runner that does not send v2 yet.
    """

    def __init__(
        self,
        decide: DecideFn,
        *,
        secret: str,
        init: InitFn | None = None,
        tolerance_s: int = signing.DEFAULT_TOLERANCE_S,
        accept_v1: bool = False,
        replay_max_rate: float = DEFAULT_MAX_RATE,
    ) -> None:
        signing.Signer(secret)  # validates the secret now rather than on the first request
        self._decide = decide
        self._init = init
        self._secret = secret
        self._tolerance_s = tolerance_s
        self._accept_v1 = accept_v1
        # An id stays remembered while its timestamp could still pass: until timestamp + window.
        # Sized by the request rate it must sustain over the window (shared/botsdk/replay.py).
        self._seen = ReplayCache(window_s=tolerance_s, max_rate=replay_max_rate)
        self._initialised = init is None
        self._lock = threading.Lock()

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        route = path.split("?", 1)[0]
        if route not in ("/health", "/turn"):
            return 404, {"error": "not found"}
        expected = "GET" if route == "/health" else "POST"
        if method != expected:
            return 405, {"error": f"{route} expects {expected}"}
        now = time.time()  # one clock reading for both checks, so no id expires in between
        try:
            verified = signing.verify(
                self._secret,
                headers,
                body,
                method=method,
                path=path,
                accept_v1=self._accept_v1,
                tolerance_s=self._tolerance_s,
                now=now,
            )
        except signing.SignatureError as exc:
            return 401, {"error": f"bad signature: {exc}"}
        try:
            if not self._seen.first_use(verified.msg_id, verified.timestamp, now=now):
                return 401, {"error": "replayed request: this webhook-id was already used"}
        except ReplayCacheFull as exc:
            return 503, {"error": f"too many requests to check for replays: {exc}"}
        if route == "/health":
            return 200, {"status": "ok"}
        return self._turn(body)

    def _turn(self, body: bytes) -> tuple[int, Any]:
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return 400, {"error": "body is not JSON"}
        if not isinstance(request, dict) or "observation" not in request:
            return 400, {"error": "body must be an object with an 'observation'"}
        if request.get("protocol") != PROTOCOL_VERSION:
            return 400, {"error": f"unsupported protocol {request.get('protocol')!r}"}
        with self._lock:
            try:
                if not self._initialised and self._init is not None:
                    self._init(
                        {
                            "game": request.get("game"),
                            "player": request.get("player"),
                            "match_id": request.get("match_id"),
                        }
                    )
                    self._initialised = True
                action = self._decide(request["observation"])
                json.dumps(action)
            except Exception as exc:  # the author's code may raise anything
                return 500, {"error": _short_error(exc)}
        return 200, {"action": action}


def _short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:297] + "..."


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
            status, payload = 500, {"error": _short_error(exc)}
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


class UnixBotServer(_QuietErrors, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False

    def server_bind(self) -> None:
        path = str(self.server_address)
        if os.path.exists(path):
            os.unlink(path)
        super().server_bind()


def make_server(
    decide: DecideFn,
    *,
    secret: str,
    host: str = "127.0.0.1",
    port: int | None = None,
    unix_socket: str | None = None,
    init: InitFn | None = None,
    accept_v1: bool = False,
    listen_fd: int | None = None,
) -> socketserver.BaseServer:
    """Build (and bind) a server without serving yet; `serve_forever()` or a thread runs it.
    `listen_fd` serves on an inherited, already listening Unix socket (the hosted-bot sandbox)."""
    if [port, unix_socket, listen_fd].count(None) != 2:
        raise ValueError("give exactly one of port=, unix_socket= or listen_fd=")
    app = BotApp(decide, secret=secret, init=init, accept_v1=accept_v1)
    handler = type("BotHandler", (_Handler,), {"app": app})
    if listen_fd is not None:
        server = UnixBotServer("", handler, bind_and_activate=False)
        server.socket.close()
        server.socket = socket.socket(fileno=listen_fd)
        return server
    if unix_socket is not None:
        return UnixBotServer(unix_socket, handler)
    return TCPBotServer((host, port or 0), handler)


def serve(
    decide: DecideFn,
    *,
    secret: str,
    host: str = "127.0.0.1",
    port: int | None = None,
    unix_socket: str | None = None,
    init: InitFn | None = None,
    ready: Callable[[socketserver.BaseServer], Any] | None = None,
    accept_v1: bool = False,
) -> None:
    """Serve the bot protocol until interrupted. `ready(server)` runs once the socket is bound."""
    server = make_server(
        decide,
        secret=secret,
        host=host,
        port=port,
        unix_socket=unix_socket,
        init=init,
        accept_v1=accept_v1,
    )
    if ready is not None:
        ready(server)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
