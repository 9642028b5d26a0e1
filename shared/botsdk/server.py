"""The bot side of protocol v1: a small HTTP/1.1 server on asyncio. Standard library only, because
it also runs inside the hosted-bot sandbox.

The server never crashes on bad input: malformed requests get 400 (or the 4xx/5xx http.server gave
them), unsigned, stale or replayed ones 401, and an exception in the author's code becomes a 500
with a short message (the runner then plays the game's default action for that turn).

Signatures must be v2 (bound to the method and path); `accept_v1=True` also accepts the deprecated
v1. Every accepted message id is remembered for the freshness window, so a request is served once.

One event loop serves every connection and runs the author's `decide` itself: a turn costs no thread
hand-off. While one `decide` holds the loop longer than RELIEF_AFTER_S, new connections are served
on threads of their own (`_Relief`), so a health check is answered while a turn thinks, as it was
on the thread-per-connection server this one replaced (shared.botsdk.threaded).
"""

from __future__ import annotations

import asyncio
import email.parser
import email.utils
import http.client
import json
import os
import re
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, cast

from shared.botsdk.replay import DEFAULT_MAX_RATE, ReplayCache, ReplayCacheFull
from shared.protocol import signing

PROTOCOL_VERSION = 1
MAX_BODY_BYTES = 1_000_000
KEEPALIVE_IDLE_S = 60.0
"""A connection that sends nothing for this long is closed."""
MAX_LINE = 65536
"""Longest request line, in bytes (longer: 414); http.server's limit."""
MAX_HEADER_LINE = 65536
"""Longest request header line, in bytes (longer: 431); the same limit http.client applies."""
MAX_HEADERS = 100
"""Most header lines in a request, the blank one that ends them included (more: 431); also
http.client's."""

DecideFn = Callable[[Any], Any]
InitFn = Callable[[dict[str, Any]], Any]
ReloadFn = Callable[[], tuple[DecideFn, InitFn | None]]
"""Loads the author's code afresh: (decide, init), for a server that gives each match a fresh
module (the hosted runner, whose sandbox may serve several matches in a row)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """A turn request that passed every check (`BotApp.check`), for the author's code."""

    request: dict[str, Any]


class BotApp:
    """Protocol logic without the transport: verify, parse, call the author's code, shape answers.

    `handle` answers a request; a server that keeps the author's code off its I/O thread calls its
    two halves, `check` and `play`, itself. Calls to `init` and `decide` are serialised by a lock,
    so authors can keep plain module state whatever thread calls them. `accept_v1` accepts the
    deprecated v1 signatures (not bound to method and path) for bots behind a runner that does not
    send v2 yet. With `reload`, the first turn of every match after the first replaces `decide`
    and `init` by fresh ones (and calls that `init`): module state never carries over from one
    match to the next.
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
        reload: ReloadFn | None = None,
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
        self._reload = reload
        self._match_id: Any = None
        """The match the author's code last played (with `reload`)."""
        self._lock = threading.Lock()

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any]:
        """(status, JSON payload) answering one request."""
        checked = self.check(method, path, headers, body)
        return self.play(checked) if isinstance(checked, Turn) else checked

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        """`handle` with the payload as the compact JSON body that goes out (an action is
        serialised once: the check that it is JSON is its encoding)."""
        checked = self.check(method, path, headers, body)
        if isinstance(checked, Turn):
            status, _, data = self._play(checked)
            return status, data
        return checked[0], _json(checked[1])

    def check(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any] | Turn:
        """Everything before the author's code: the answer itself when that is all there is (an
        error, a health check), else the turn for `play`."""
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
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return 400, {"error": "body is not JSON"}
        if not isinstance(request, dict) or "observation" not in request:
            return 400, {"error": "body must be an object with an 'observation'"}
        if request.get("protocol") != PROTOCOL_VERSION:
            return 400, {"error": f"unsupported protocol {request.get('protocol')!r}"}
        return Turn(request)

    def play(self, turn: Turn) -> tuple[int, Any]:
        """The author's code on a checked turn: (200, {"action": ...}), or 500 when it raised or
        answered something that is not JSON."""
        status, payload, _ = self._play(turn)
        return status, payload

    def _play(self, turn: Turn) -> tuple[int, Any, bytes]:
        request = turn.request
        with self._lock:
            try:
                if self._reload is not None and request.get("match_id") != self._match_id:
                    if self._match_id is not None:  # a later match: the author's module afresh
                        self._decide, self._init = self._reload()
                        self._initialised = self._init is None
                    self._match_id = request.get("match_id")
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
                encoded = json.dumps(action, separators=(",", ":"))  # refuses what is not JSON
            except Exception as exc:  # the author's code may raise anything
                error = {"error": short_error(exc)}
                return 500, error, _json(error)
        return 200, {"action": action}, b'{"action":' + encoded.encode() + b"}"


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 300 else text[:297] + "..."


# --- HTTP/1.1 ---------------------------------------------------------------------------------------
# What a connection reads and how it answers follow http.server (the SDK's previous server, kept in
# shared.botsdk.threaded as the benchmark baseline) case by case: the same limits, the same status
# for each malformed request, keep-alive and "Connection" as it had them. Error answers are JSON
# ({"error": ...}) like every other answer, and always a whole HTTP answer.

_SIMPLE_HEADERS = re.compile(r"(?:[\x21-\x39\x3b-\x7e]+:[^\r\n]*\r?\n)*")
"""Header lines the email parser would read as just `name: value` (no folding, no stray CR)."""
_HEADER = re.compile(r"([\x21-\x39\x3b-\x7e]+):[ \t]*([^\r\n]*)\r?\n")
_METHODS = frozenset({"GET", "POST", "PUT", "DELETE"})
"""Methods the server reads a request for; any other is answered 501, as http.server did."""
_PHRASES = {status.value: status.phrase for status in HTTPStatus}
_BACKLOG = 128
SERVER_NAME = "arena-botsdk/1"


class _BadRequest(Exception):
    """A request the connection answers with an error and then closes."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Request:
    __slots__ = ("close", "command", "first", "headers", "length", "path", "requestline", "version")

    def __init__(self, requestline: str, command: str, path: str, version: str, close: bool) -> None:
        self.requestline = requestline
        self.command = command
        self.path = path
        self.version = version
        self.close = close
        """Whether the connection closes after this request's answer."""
        self.headers: dict[str, str] = {}
        """Lower-cased names; a repeated header keeps its last value (what BotApp verifies)."""
        self.first: dict[str, str] = {}
        """Lower-cased names; a repeated header keeps its first value (what framing reads)."""
        self.length = 0


def _request_line(raw: bytes) -> _Request | None:
    """The request line as http.server read it; None for a blank line (the connection just closes).
    Raises _BadRequest."""
    requestline = str(raw, "iso-8859-1").rstrip("\r\n")
    words = requestline.split()
    if not words:
        return None
    version = "HTTP/0.9"
    close = True
    if len(words) >= 3:
        version = words[-1]
        if version == "HTTP/1.1":
            close = False
        elif version != "HTTP/1.0":
            number = _version_number(version)
            if number >= (2, 0):
                raise _BadRequest(505, f"Invalid HTTP version ({version.split('/', 1)[1]})")
            close = number < (1, 1)
    if not 2 <= len(words) <= 3:
        raise _BadRequest(400, f"Bad request syntax ({requestline!r})")
    command, path = words[:2]
    if len(words) == 2:
        close = True
        if command != "GET":
            raise _BadRequest(400, f"Bad HTTP/0.9 request type ({command!r})")
    if path.startswith("//"):  # as http.server (gh-87389): never an absolute URI without scheme
        path = "/" + path.lstrip("/")
    return _Request(requestline, command, path, version, close)


def _version_number(version: str) -> tuple[int, int]:
    """RFC 2145's reading of `HTTP/x.y`; raises _BadRequest as http.server answered it."""
    try:
        if not version.startswith("HTTP/"):
            raise ValueError
        parts = version.split("/", 1)[1].split(".")
        if len(parts) != 2 or any(not p.isdigit() or len(p) > 10 for p in parts):
            raise ValueError
        return int(parts[0]), int(parts[1])
    except ValueError:
        raise _BadRequest(400, f"Bad request version ({version!r})") from None


def _read_headers(request: _Request, text: str, blank: int) -> None:
    """A head's header lines (`text`, their blank line from `blank` on) into `request.headers` and
    `.first`; anything but plain `name: value` lines is read by the email parser, as http.server
    read every head."""
    block = text[:blank]
    if _SIMPLE_HEADERS.fullmatch(block):
        pairs = [(name.lower(), value) for name, value in _HEADER.findall(block)]
    else:
        message = email.parser.Parser(_class=http.client.HTTPMessage).parsestr(text)
        pairs = [(name.lower(), str(value)) for name, value in message.items()]
    request.headers = dict(pairs)  # a repeated name keeps its last value
    request.first = dict(reversed(pairs))  # and here its first


class _Session:
    """The protocol on one connection, apart from how bytes come and go: `feed` it what arrives
    and it answers, in order, every request that is complete (the author's code runs inline),
    through `write`; `close` is called when the connection must end. `eof()` at the end of the
    stream answers what came, as http.server did, then closes.

    A head is read as http.server's readline calls read it: the request line, judged as soon as it
    is there, then header lines up to a blank one. The usual head (CRLF lines, arrived whole) is
    cut with one search; any other is read line by line, resuming where the last bytes left off.
    """

    def __init__(self, app: BotApp, write: Callable[[bytes], None], close: Callable[[], None]) -> None:
        self._app = app
        self._write = write
        self._close = close
        self._buffer = bytearray()
        self._eof = False
        self._scan = 0
        """Where the search for the next line end goes on."""
        self._head: _Request | None = None
        """The request whose request line is read, while its headers are."""
        self._headers_at = 0
        self._line_at = 0
        self._lines = 0
        self._request: _Request | None = None
        """A request whose head is read and whose body is still arriving."""
        self.closed = False
        self.paused = False
        """Set while the peer reads none of our answers (write buffer full): requests wait."""

    def feed(self, data: bytes) -> None:
        self._buffer += data
        self.serve()

    def eof(self) -> None:
        self._eof = True
        self.serve()

    def serve(self) -> None:
        """Answer every request the buffer holds in full."""
        while not (self.closed or self.paused):
            request = self._request
            if request is None:
                try:
                    request = self._read_head()
                except _BadRequest as exc:
                    self._fail(exc.status, str(exc))
                    return
                if request is None:
                    return
            if len(self._buffer) < request.length and not self._eof:
                self._request = request
                return
            body = bytes(self._buffer[: request.length])  # at the end of the stream: what came
            del self._buffer[: request.length]
            self._request = None
            self._answer(request, body)

    def _next_line(self, start: int, limit: int) -> int | None:
        """The end of the line from `start` as readline(limit + 1) cuts it (after its newline, after
        limit + 1 bytes, or at the end of the stream); None while more bytes may come."""
        buffer = self._buffer
        stop = start + limit + 1
        newline = buffer.find(b"\n", max(start, self._scan), stop)
        if newline >= 0:
            self._scan = newline + 1
            return newline + 1
        self._scan = min(len(buffer), stop)
        return self._scan if len(buffer) >= stop or self._eof else None

    def _read_head(self) -> _Request | None:
        """The next request's head once it is all there (None until then, and for a blank request
        line, which closes the connection). Raises _BadRequest."""
        buffer = self._buffer
        if self._head is None:
            end = self._next_line(0, MAX_LINE)
            if end is None:
                return None
            if end > MAX_LINE:
                raise _BadRequest(414, "Request-URI Too Long")
            request = _request_line(bytes(buffer[:end])) if end else None
            if request is None:
                self.close()
                return None
            self._head, self._headers_at, self._line_at, self._lines = request, end, end, 0
            if buffer[end - 2 : end] == b"\r\n":  # the usual head: CRLF lines, all here
                blank = buffer.find(b"\r\n\r\n", end - 2, end + MAX_HEADER_LINE) + 2
                if blank >= 2:
                    lines = buffer.count(b"\n", end, blank + 2)
                    if lines <= MAX_HEADERS and lines == buffer.count(b"\r\n", end, blank + 2):
                        return self._headers(blank, blank + 2)
        while True:
            start = self._line_at
            end = self._next_line(start, MAX_HEADER_LINE)
            if end is None:
                return None
            if end - start > MAX_HEADER_LINE:
                raise _BadRequest(431, "Line too long")
            self._lines += 1
            if self._lines > MAX_HEADERS:
                raise _BadRequest(431, "Too many headers")
            self._line_at = end
            if end - start <= 2 and bytes(buffer[start:end]) in (b"\r\n", b"\n", b""):
                return self._headers(start, end)

    def _headers(self, blank: int, end: int) -> _Request:
        """The head read: its header lines end where the blank line starts, at `blank`."""
        request, buffer = self._head, self._buffer
        assert request is not None
        text = buffer[self._headers_at : end].decode("iso-8859-1")
        del buffer[:end]
        self._head, self._scan = None, 0
        _read_headers(request, text, blank - self._headers_at)
        connection = request.first.get("connection", "").lower()
        if connection == "close":
            request.close = True
        elif connection == "keep-alive":
            request.close = False
        if request.first.get("expect", "").lower() == "100-continue" and request.version >= "HTTP/1.1":
            self._write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if request.command not in _METHODS:
            raise _BadRequest(501, f"Unsupported method ({request.command!r})")
        request.length = _body_length(request)
        return request

    def _answer(self, request: _Request, body: bytes) -> None:
        try:
            status, data = self._app.answer(request.command, request.path, request.headers, body)
        except Exception as exc:  # never let one request take the server down
            status, data = 500, _json({"error": short_error(exc)})
        _log(request.requestline, status)
        if request.version == "HTTP/0.9":  # no status line, no headers
            self._write(data)
        else:
            self._write(_head(status, len(data), request.close) + data)
        if request.close:
            self.close()

    def _fail(self, status: int, message: str) -> None:
        """Answer a request that cannot be served, then close."""
        data = _json({"error": message})
        _log(message, status)
        self._write(_head(status, len(data), True) + data)
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._close()


def _body_length(request: _Request) -> int:
    if request.first.get("transfer-encoding", "").lower() == "chunked":
        raise _BadRequest(411, "chunked bodies are not supported; send Content-Length")
    try:
        length = int(request.first.get("content-length", "0") or "0")
    except ValueError:
        length = -1
    if length < 0:
        raise _BadRequest(400, "bad Content-Length")
    if length > MAX_BODY_BYTES:
        raise _BadRequest(413, "body too large")
    return length


def _json(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def _head(status: int, length: int, close: bool) -> bytes:
    return (
        f"HTTP/1.1 {status} {_PHRASES.get(status, '')}\r\n"
        f"Server: {SERVER_NAME}\r\n"
        f"Date: {_http_date()}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {length}\r\n" + ("Connection: close\r\n\r\n" if close else "\r\n")
    ).encode("latin-1")


_date_cache: tuple[int, str] = (0, "")


def _http_date() -> str:
    """The Date header's value, formatted once a second."""
    global _date_cache
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache = (now, email.utils.formatdate(now, usegmt=True))
    return _date_cache[1]


def _log(what: str, status: int) -> None:
    if os.environ.get("ARENA_BOTSDK_VERBOSE"):
        sys.stderr.write(f'botsdk: "{what}" {status} -\n')


class _Connection(asyncio.Protocol):
    """A client connection on the event loop: bytes into its `_Session`, answers out in one write
    each, closed after KEEPALIVE_IDLE_S without a byte from the client (http.server's socket
    timeout: between requests, inside a slow one, or while the client reads none of its answers)."""

    def __init__(self, server: BotServer) -> None:
        self._server = server
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._session = _Session(server.app, self._write, self._close)
        self._heard_at = 0.0
        self._idle_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        self._server.connections.add(self)
        self._heard_at = self._loop.time()
        self._idle_timer = self._loop.call_later(KEEPALIVE_IDLE_S, self._check_idle)

    def data_received(self, data: bytes) -> None:
        server = self._server
        server.busy_since = self._heard_at = self._loop.time()
        try:
            self._session.feed(data)
        finally:
            server.busy_since = None
            self._heard_at = self._loop.time()  # idle from the last answer, not from the request

    def eof_received(self) -> bool:
        self._session.eof()
        return True  # the session closes once it has answered

    def connection_lost(self, _exc: Exception | None) -> None:
        self._session.closed = True
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._server.connections.discard(self)

    def pause_writing(self) -> None:
        self._session.paused = True
        if self._transport is not None:
            self._transport.pause_reading()

    def resume_writing(self) -> None:
        self._session.paused = False
        if self._transport is not None and not self._session.closed:
            self._transport.resume_reading()
            self._session.serve()

    def _check_idle(self) -> None:
        if self._session.closed:
            return
        quiet = self._loop.time() - self._heard_at
        if quiet >= KEEPALIVE_IDLE_S:
            self.abort()
        else:
            self._idle_timer = self._loop.call_later(KEEPALIVE_IDLE_S - quiet, self._check_idle)

    def _write(self, data: bytes) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(data)

    def _close(self) -> None:
        """Close once what was written has been sent."""
        if self._transport is not None:
            self._transport.close()

    def abort(self) -> None:
        self._session.closed = True
        if self._transport is not None:
            self._transport.abort()


RELIEF_AFTER_S = 0.05
"""How long the event loop may be held by one request (the author's code, in practice) before new
connections are served on threads of their own meanwhile."""


class _Relief:
    """Keeps new connections served while the event loop is held by a long `decide`.

    The loop runs the author's code inline (no thread handoff per turn). A thread that looks every
    RELIEF_AFTER_S and finds the loop held longer than that accepts new connections itself and
    serves each on a thread of its own, with the same `_Session`, until the loop is free again: a
    health check is answered while a turn thinks, and a turn waits for the author's lock, as they
    did on the thread-per-connection server.
    """

    def __init__(self, server: BotServer) -> None:
        self._server = server
        self._stopped = threading.Event()
        threading.Thread(target=self._watch, name="botsdk-relief", daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()

    def _watch(self) -> None:
        server = self._server
        incoming = select.poll()
        incoming.register(server.socket, select.POLLIN)
        while not self._stopped.wait(RELIEF_AFTER_S):
            since = server.busy_since
            if since is None or time.monotonic() - since < RELIEF_AFTER_S:
                continue
            while server.busy_since == since and not self._stopped.is_set():
                try:
                    if not incoming.poll(RELIEF_AFTER_S * 1000):
                        continue
                    client, _ = server.socket.accept()
                except BlockingIOError:  # the loop took it
                    continue
                except OSError:  # the listening socket is closed: shutting down
                    return
                try:
                    threading.Thread(target=self._serve, args=(client,), daemon=True).start()
                except RuntimeError:  # no thread to be had (the sandbox's task limit): drop it
                    client.close()

    def _serve(self, client: socket.socket) -> None:
        """A connection on a thread of its own, blocking, as the thread-per-connection server did."""
        try:
            client.setblocking(True)
            client.settimeout(KEEPALIVE_IDLE_S)
            if client.family != socket.AF_UNIX:
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            session = _Session(self._server.app, client.sendall, lambda: None)
            while not session.closed:
                data = client.recv(65536)
                if not data:
                    session.eof()
                    break
                session.feed(data)
        except OSError:
            pass
        finally:
            client.close()


class BotServer:
    """The bot protocol served on one listening socket by an asyncio event loop on the thread that
    calls `serve_forever`, with socketserver's methods: `serve_forever()`, `shutdown()` (from
    another thread; waits until serving stopped) and `server_close()`."""

    def __init__(self, app: BotApp, sock: socket.socket) -> None:
        self.app = app
        self.socket = sock
        self.server_address: Any = sock.getsockname()
        self.connections: set[_Connection] = set()
        self.busy_since: float | None = None
        """When the event loop began handling the data it handles now (loop.time(): monotonic)."""
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._shut_down = False
        self._stopped = threading.Event()

    def serve_forever(self, poll_interval: float = 0.5, *, serving: Callable[[], Any] | None = None) -> None:  # noqa: ARG002 (socketserver's signature; callers pass it by keyword)
        """Serve until `shutdown()` (or, on the main thread, Ctrl-C: KeyboardInterrupt). The event
        loop wakes on events; `poll_interval` is accepted for socketserver's signature only.
        `serving()` is called once connections are being accepted and every thread of the server
        runs (the hosted runner's readiness signal: the sandbox's task count is then final)."""
        self._stopped.clear()
        try:
            with asyncio.Runner() as runner:
                runner.run(self._serve(serving))
        finally:
            with self._lock:
                self._loop = self._stop = None
            self._stopped.set()

    async def _serve(self, serving: Callable[[], Any] | None) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._shut_down:
                return
            self._loop, self._stop = loop, asyncio.Event()
            stop = self._stop

        def factory() -> _Connection:
            return _Connection(self)

        if self.socket.family == socket.AF_UNIX:
            server = await loop.create_unix_server(factory, sock=self.socket, backlog=_BACKLOG)
        else:
            server = await loop.create_server(factory, sock=self.socket, backlog=_BACKLOG)
        relief = _Relief(self)
        try:
            if serving is not None:
                serving()
            await stop.wait()
        finally:
            relief.stop()
            server.close()
            for connection in list(self.connections):
                connection.abort()

    def shutdown(self) -> None:
        """Stop serving: no new connections, open ones closed. Returns once serving stopped."""
        with self._lock:
            self._shut_down = True
            loop, stop = self._loop, self._stop
        if loop is None or stop is None:
            return
        loop.call_soon_threadsafe(stop.set)
        self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()


def _listening(family: int, address: str | tuple[str, int]) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if family != socket.AF_UNIX:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


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
    reload: ReloadFn | None = None,
) -> BotServer:
    """Build (and bind) a server without serving yet; `serve_forever()` or a thread runs it.
    `listen_fd` serves on an inherited, already listening Unix socket (the hosted-bot sandbox);
    `reload` gives each match fresh author's code (BotApp)."""
    if [port, unix_socket, listen_fd].count(None) != 2:
        raise ValueError("give exactly one of port=, unix_socket= or listen_fd=")
    app = BotApp(decide, secret=secret, init=init, accept_v1=accept_v1, reload=reload)
    if listen_fd is not None:
        return BotServer(app, socket.socket(fileno=listen_fd))
    if unix_socket is not None:
        if os.path.exists(unix_socket):
            os.unlink(unix_socket)
        return BotServer(app, _listening(socket.AF_UNIX, unix_socket))
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return BotServer(app, _listening(family, (host, port or 0)))


def serve(
    decide: DecideFn,
    *,
    secret: str,
    host: str = "127.0.0.1",
    port: int | None = None,
    unix_socket: str | None = None,
    init: InitFn | None = None,
    ready: Callable[[BotServer], Any] | None = None,
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
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
