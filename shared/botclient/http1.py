"""HTTP/1.1 for bot turns: keep-alive connections read by httptools (llhttp, the C parser uvicorn
uses) straight from an asyncio protocol, with no stream layer in between.

A bot's answer is parsed as the bytes arrive (`data_received`), so a turn costs one write, the
reads the answer needs and one wake-up of the waiting coroutine. What a bot may do wrong is decided
while parsing: a redirect is refused at its status line, a declared or actual body over the cap
stops the read, a head over `MAX_HEAD_BYTES` stops it too; every failure is an `ExchangeError`
whose message is the turn's error text. A connection is reused only when it is known to be clean
(the last answer read in full, keep-alive allowed, nothing heard from the bot since); any other
connection, including one interrupted by a timeout, is closed and never used again.

Where the connection goes is a `Dialer`'s business: `TcpDialer` (the address the SSRF policy
checked, TLS for https with the endpoint's host name) or `UnixDialer` (a hosted bot's socket).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable
from functools import cache
from typing import Protocol, cast

import httptools
import httpx

from shared.botclient.ssrf import ResolvedEndpoint

MAX_HEAD_BYTES = 100 * 1024
"""Largest answer head (status line and headers) read: the bound the previous client had (h11's
receive buffer as httpcore sizes it); no bot protocol answer needs more than a few hundred bytes."""
KEEPALIVE_EXPIRY_S = 5.0
"""An idle connection older than this is closed rather than reused (as httpcore's pool did): bot
servers drop idle connections after a few seconds, and a request sent as they do fails."""
MAX_IDLE_CONNECTIONS = 20
"""Idle connections kept per bot; one is the usual (one request per bot at a time)."""
MAX_ERROR_TEXT = 200


class ExchangeError(Exception):
    """A request that got no usable answer; the message is the error text the turn records."""


def shorten(text: str) -> str:
    """One line of at most MAX_ERROR_TEXT characters."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 3] + "..."


def os_error_text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class ClosedUnanswered(ExchangeError):
    """The bot closed the connection before a single byte of answer: on a kept-alive connection,
    most likely as the request went out (it closed an idle connection), so it is worth one retry."""


class _Stop(Exception):
    """Raised inside a parser callback to stop llhttp once the answer has been judged."""


class Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one request at a time, its answer parsed as it arrives."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._parser = httptools.HttpResponseParser(self)
        # Two leniencies keep what h11 accepted: a bare LF as a line end, and Content-Length beside
        # Transfer-Encoding: chunked (chunked wins; the declared length still counts for the cap).
        self._parser.set_dangerous_leniencies(lenient_optional_cr_before_lf=True, lenient_chunked_length=True)
        self._transport: asyncio.Transport | None = None
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self._max_bytes = 0
        self._received = 0
        """Bytes received since the request went out."""
        self._reset_answer()
        self.reusable = False
        """True only between answers on a connection that is known to be clean."""
        self.idle_since = 0.0

    def _reset_answer(self) -> None:
        self._status = 0
        self._head_bytes = 0
        self._headers_done = False
        self._declared: int | None = None
        self._chunked = False
        self._transfer_encoding: bytes | None = None
        self._body: list[bytes] = []
        self._size = 0

    # --- asyncio.Protocol ------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # asyncio's or uvloop's (which does not subclass asyncio.Transport): write and abort.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            # The bot speaks out of turn (or after a complete answer): its state is unknown.
            self.close()
            return
        self._received += len(data)
        if not self._headers_done:
            room = MAX_HEAD_BYTES - self._head_bytes
            self._head_bytes += len(data)
            if len(data) > room:  # only the bytes within the bound may complete the head
                if not self._feed(data[:room]):
                    return
                if not self._headers_done:
                    self._fail(f"broken HTTP answer: head is larger than {MAX_HEAD_BYTES} bytes")
                    return
                data = data[room:]
        self._feed(data)

    def _feed(self, data: bytes) -> bool:
        try:
            self._parser.feed_data(data)
        except (httptools.HttpParserError, httptools.HttpParserUpgrade) as exc:
            # After _Stop (the answer is judged, or a second one began) the waiter is done already;
            # anything else is an answer llhttp refuses.
            self._fail(shorten(f"broken HTTP answer: {exc}" if str(exc) else "broken HTTP answer"))
            return False
        return True

    def eof_received(self) -> bool:
        self._peer_closed(None)
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        self._peer_closed(exc)

    # --- httptools callbacks ---------------------------------------------------------------------

    def on_message_begin(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            self.close()  # a second answer to one request
            raise _Stop

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._headers_done:
            return  # chunked trailers: read and ignored
        lowered = name.lower()
        if lowered == b"content-length":  # digits only, below 2**64: llhttp has checked
            self._declared = int(value.strip().lstrip(b"0") or b"0")
        elif lowered == b"transfer-encoding":  # several headers are one list
            value = value.strip().lower()
            previous = self._transfer_encoding
            self._transfer_encoding = value if previous is None else previous + b", " + value

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        self._status = status
        self._headers_done = True
        if 100 <= status < 200 and status != 101:
            return  # interim answer (100 Continue...): the real one follows
        if 300 <= status < 400:
            self._fail(f"HTTP {status} redirect (redirects are not followed)")
            raise _Stop
        if self._transfer_encoding is not None:
            if self._transfer_encoding != b"chunked":
                self._fail("broken HTTP answer: Only Transfer-Encoding: chunked is supported")
                raise _Stop
            self._chunked = True
        if self._declared is not None and self._declared > self._max_bytes:
            self._fail(f"answer is larger than {self._max_bytes} bytes")
            raise _Stop
        if status == 101:
            self._fail("broken HTTP answer: HTTP 101 (switching protocols is not supported)")
            raise _Stop

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size > self._max_bytes:
            self._fail(f"answer is larger than {self._max_bytes} bytes")
            raise _Stop
        self._body.append(body)

    def on_message_complete(self) -> None:
        if self._status < 200:  # the interim answer is over; wait for the real one
            head_bytes = self._head_bytes  # the bound covers every head of the answer
            self._reset_answer()
            self._head_bytes = head_bytes
            return
        # Reused only as h11 did: HTTP/1.1 without "Connection: close" (never HTTP/1.0 keep-alive).
        self.reusable = self._parser.should_keep_alive() and self._parser.get_http_version() == "1.1"
        self._finish()

    # --- the exchange ----------------------------------------------------------------------------

    def _finish(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
            waiter.set_result((self._status, body))

    def _fail(self, message: str, error: type[ExchangeError] = ExchangeError) -> None:
        self.reusable = False
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(error(message))

    def _peer_closed(self, exc: Exception | None) -> None:
        self.reusable = False
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        unanswered = ClosedUnanswered if self._received == 0 else ExchangeError
        if exc is not None:
            self._fail(shorten(f"ReadError: {os_error_text(exc)}"), unanswered)
        elif not self._headers_done or self._status < 200:
            self._fail("broken HTTP answer: Server disconnected without sending a response.", unanswered)
        elif self._chunked:
            self._fail(
                "broken HTTP answer: peer closed connection without sending complete message body "
                "(incomplete chunked read)"
            )
        elif self._declared is not None:
            self._fail(
                "broken HTTP answer: peer closed connection without sending complete message body "
                f"(received {self._size} bytes, expected {self._declared})"
            )
        else:
            self._finish()  # no length and not chunked: the body ends where the connection does

    async def request(self, data: bytes, max_bytes: int) -> tuple[int, bytes]:
        """Send one request (head and body in one write) and wait for its whole answer."""
        assert self._transport is not None
        self.reusable = False  # until the answer is read in full
        self._received = 0
        self._reset_answer()
        self._max_bytes = max_bytes
        waiter: asyncio.Future[tuple[int, bytes]] = self._loop.create_future()
        self._waiter = waiter
        self._transport.write(data)
        try:
            answer = await waiter
        finally:
            self._waiter = None
        self.idle_since = self._loop.time()
        return answer

    def close(self) -> None:
        """Drop the connection at once (no TLS goodbye): it is in no state to be reused."""
        self.reusable = False
        if self._transport is not None:
            self._transport.abort()


def _connect_error(exc: BaseException) -> ExchangeError:
    return ExchangeError(shorten(f"cannot connect: {os_error_text(exc)}"))


class Dialer(Protocol):
    """Opens a connection to one bot."""

    async def connect(self, factory: Callable[[], Connection]) -> Connection: ...


async def _connected_socket(sock: socket.socket, address: tuple[str, int] | str) -> socket.socket:
    try:
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, address)
    except OSError as exc:
        sock.close()
        raise _connect_error(exc) from None
    except BaseException:
        sock.close()
        raise
    return sock


@cache
def default_ssl_context() -> ssl.SSLContext:
    """The CA bundle and TLS settings the runner always used (httpx's), loaded once: loading costs
    milliseconds. Only HTTP/1.1 is offered (ALPN), as httpcore offered it."""
    context = httpx.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


class TcpDialer:
    """TCP to one checked address, never re-resolved; TLS when `ssl_context` is given, checking the
    certificate against `server_hostname` (which is also the SNI name)."""

    def __init__(
        self,
        address: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
    ) -> None:
        self._address = (address, port)
        self._family = socket.AF_INET6 if ":" in address else socket.AF_INET
        self._ssl = ssl_context
        self._server_hostname = server_hostname if ssl_context is not None else None

    @classmethod
    def for_endpoint(cls, endpoint: ResolvedEndpoint, ssl_context: ssl.SSLContext | None = None) -> TcpDialer:
        """To the endpoint's checked address; https gets TLS for the endpoint's host name (for an IP
        literal, the address), with `ssl_context` or the default trust."""
        if endpoint.url.scheme != "https":
            return cls(endpoint.address, endpoint.port)
        name = endpoint.address if endpoint.is_ip_literal else endpoint.host
        return cls(
            endpoint.address,
            endpoint.port,
            ssl_context=ssl_context or default_ssl_context(),
            server_hostname=name,
        )

    async def connect(self, factory: Callable[[], Connection]) -> Connection:
        sock = socket.socket(self._family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            sock.close()
            raise _connect_error(exc) from None
        await _connected_socket(sock, self._address)
        try:
            _, protocol = await asyncio.get_running_loop().create_connection(
                factory, sock=sock, ssl=self._ssl, server_hostname=self._server_hostname
            )
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise _connect_error(exc) from None
        except BaseException:
            sock.close()
            raise
        return protocol


class UnixDialer:
    """A hosted bot's Unix socket (plain HTTP: the socket is private to the runner and the sandbox)."""

    def __init__(self, path: str) -> None:
        self._path = path

    async def connect(self, factory: Callable[[], Connection]) -> Connection:
        sock = await _connected_socket(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), self._path)
        try:
            _, protocol = await asyncio.get_running_loop().create_unix_connection(factory, sock=sock)
        except OSError as exc:
            sock.close()
            raise _connect_error(exc) from None
        except BaseException:
            sock.close()
            raise
        return protocol


class Http1Transport:
    """Requests to one bot over keep-alive connections that a `Dialer` opens.

    Connections are reused one request at a time; concurrent requests each get their own.
    """

    def __init__(self, dialer: Dialer) -> None:
        self._dialer = dialer
        self._idle: list[Connection] = []
        self._busy: set[Connection] = set()
        self._closed = False

    async def exchange(
        self,
        method: str,
        _url: httpx.URL,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        max_bytes: int,
    ) -> tuple[int, bytes]:
        """One request to `target` (the dialer decides where it goes, not `url`). Raises
        ExchangeError for anything but a complete answer, a 3xx included."""
        head = b"".join(
            [b"%s %s HTTP/1.1\r\n" % (method.encode(), target)] + [b"%s: %s\r\n" % h for h in headers]
        )
        if head.count(b"\n") != len(headers) + 1 or head.count(b"\r") != len(headers) + 1 or b"\0" in head:
            raise ExchangeError("LocalProtocolError: illegal header value")  # no header injection
        request = head + b"\r\n" + body
        connection = self._idle_connection()
        if connection is not None:
            try:
                return await self._request(connection, request, max_bytes)
            except ClosedUnanswered:
                pass  # closed by the bot while idle, just before or as the request went out
        return await self._request(await self._dialer.connect(Connection), request, max_bytes)

    async def _request(self, connection: Connection, request: bytes, max_bytes: int) -> tuple[int, bytes]:
        self._busy.add(connection)
        try:
            status, data = await connection.request(request, max_bytes)
        except BaseException:
            connection.close()  # an unknown state (timeout, error mid-answer): never reused
            raise
        finally:
            self._busy.discard(connection)
        if connection.reusable and not self._closed and len(self._idle) < MAX_IDLE_CONNECTIONS:
            self._idle.append(connection)
        else:
            connection.close()
        return status, data

    def _idle_connection(self) -> Connection | None:
        now = asyncio.get_running_loop().time()
        while self._idle:
            connection = self._idle.pop()
            if connection.reusable and now - connection.idle_since < KEEPALIVE_EXPIRY_S:
                return connection
            connection.close()
        return None

    async def aclose(self) -> None:
        self._closed = True
        for connection in (*self._idle, *self._busy):
            connection.close()
        self._idle.clear()
        self._busy.clear()
