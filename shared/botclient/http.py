"""The runner's side of bot protocol v1: signed requests to one bot, over TCP or a Unix socket.

One `HttpBotConnection` per bot per match keeps its connection alive between turns. Whatever the
bot does (hangs, answers 500, redirects, sends garbage or a huge body, closes the connection), a
turn ends within its timeout with a `TurnReply` that says what went wrong; nothing raises.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import select
import socket
import ssl
import time
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import httpcore
import httpx

from shared.botclient.answers import AnswerError, decode_answer
from shared.botclient.errors import BotEndpointError
from shared.botclient.ssrf import PinnedTransport, resolve_endpoint, resolver_for
from shared.config import Settings
from shared.protocol.signing import Signer

PROTOCOL_VERSION = 1
USER_AGENT = "arena-runner/1"
UNIX_SOCKET_BASE_URL = "http://hosted-bot"
BASE_HEADERS = {"user-agent": USER_AGENT, "accept": "application/json", "accept-encoding": "identity"}
MAX_ERROR_TEXT = 200


@dataclass(frozen=True, slots=True)
class TurnReply:
    """One bot's answer for one turn; `action` is None whenever `error` is set or it timed out."""

    action: Any
    latency_ms: float
    error: str | None = None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


class _BadAnswer(Exception):
    """A bot answered, but not with something we accept."""


@cache
def _ssl_context() -> ssl.SSLContext:
    """Loading the CA bundle costs milliseconds, so every connection shares one context."""
    return httpx.create_ssl_context()


def _os_error_text(exc: OSError) -> str:
    return str(exc) or type(exc).__name__


class _SocketStream(httpcore.AsyncNetworkStream):
    """A plain (no TLS) socket driven by the event loop directly.

    httpcore writes a request as several pieces (headers, body, end of message); they are held
    here and leave in one send when httpcore starts reading the answer, so the bot gets one packet
    and one wake-up per turn instead of two. Every send and wake-up costs CPU on both sides.
    """

    _FLUSH_AT = 64 * 1024

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self._pending: list[bytes] = []
        self._pending_size = 0

    async def _flush(self) -> None:
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending = []
        self._pending_size = 0
        try:
            await self._loop.sock_sendall(self._sock, data)
        except OSError as exc:
            raise httpcore.WriteError(_os_error_text(exc)) from exc

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._pending:
            await self._flush()
        try:
            return await self._loop.sock_recv(self._sock, max_bytes)
        except OSError as exc:
            raise httpcore.ReadError(_os_error_text(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._pending.append(bytes(buffer))
            self._pending_size += len(buffer)
            if self._pending_size >= self._FLUSH_AT:
                await self._flush()

    async def aclose(self) -> None:
        self._pending = []
        self._sock.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.UnsupportedProtocol("TLS is not available on this transport")

    def get_extra_info(self, info: str) -> Any:
        sock = self._sock
        if info == "is_readable":
            # What httpcore asks before reusing a keep-alive connection: has the bot sent
            # something (or closed)? Same check as httpcore's own, without anyio's overhead.
            if sock.fileno() < 0:
                return True
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        if info == "socket":
            return sock
        if info == "client_addr":
            return sock.getsockname()
        if info == "server_addr":
            return sock.getpeername()
        return None


async def _connected(sock: socket.socket, address: Any) -> _SocketStream:
    try:
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, address)
    except OSError as exc:
        sock.close()
        raise httpcore.ConnectError(_os_error_text(exc)) from exc
    except BaseException:
        sock.close()
        raise
    return _SocketStream(sock)


class _SocketBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network layer for plain HTTP over TCP or a Unix socket, on asyncio directly.

    The default backend goes through anyio (cancel scopes, typed attributes) on every read and
    write, which is a large part of a turn's CPU. Only used where no TLS is needed.
    """

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
            address: Any = (host, port)
        except ValueError:  # a name: resolve it without blocking the loop
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                raise httpcore.ConnectError(_os_error_text(exc)) from exc
            family, _, _, _, address = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if local_address:
                sock.bind((local_address, 0))
            for option in socket_options or ():
                sock.setsockopt(*option)
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(_os_error_text(exc)) from exc
        return await _connected(sock, address)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            for option in socket_options or ():
                sock.setsockopt(*option)
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(_os_error_text(exc)) from exc
        return await _connected(sock, path)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


_HTTPX_ERRORS: dict[type[Exception], type[httpx.HTTPError]] = {
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
    httpcore.ProtocolError: httpx.ProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
}
"""httpcore's errors as the httpx ones callers expect (the same pairs httpx's own transport uses)."""


def _httpx_error(exc: Exception) -> httpx.HTTPError | None:
    for cls in type(exc).__mro__:
        mapped = _HTTPX_ERRORS.get(cls)
        if mapped is not None:
            return mapped(str(exc))
    return None


class _ResponseStream(httpx.AsyncByteStream):
    """An httpcore response body read through httpx, its errors turned into httpx's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._stream:
                yield chunk
        except Exception as exc:
            mapped = _httpx_error(exc)
            if mapped is None:
                raise
            raise mapped from exc

    async def aclose(self) -> None:
        await self._stream.aclose()


class SocketTransport(httpx.AsyncBaseTransport):
    """An httpx transport for plain HTTP (TCP or a Unix socket): httpcore's keep-alive connection
    pool on `_SocketBackend`, which httpx's own `AsyncHTTPTransport` has no option for."""

    def __init__(self, uds: str | None = None) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            uds=uds,
            retries=0,
            network_backend=_SocketBackend(),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            response = await self._pool.handle_async_request(core_request)
        except Exception as exc:
            mapped = _httpx_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def _transport(*, tls: bool, uds: str | None = None) -> httpx.AsyncBaseTransport:
    """`SocketTransport` for plain HTTP; httpx's own transport where TLS is needed."""
    if not tls:
        return SocketTransport(uds)
    return httpx.AsyncHTTPTransport(verify=_ssl_context(), retries=0, trust_env=False, uds=uds)


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 3] + "..."


def _describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.ConnectError):
        return _shorten(f"cannot connect: {exc}" if str(exc) else "cannot connect")
    if isinstance(exc, httpx.RemoteProtocolError):
        return _shorten(f"broken HTTP answer: {exc}" if str(exc) else "connection closed without an answer")
    if isinstance(exc, httpx.HTTPError):
        return _shorten(f"{type(exc).__name__}: {exc}")
    return _shorten(f"{type(exc).__name__}: {exc}")


class HttpBotConnection:
    """A keep-alive client for one bot: signs every request, never follows redirects, caps bodies.

    The transport is the only thing that differs between an HTTP bot (TCP to the address checked by
    the SSRF policy) and a hosted bot (the sandbox's Unix socket).
    """

    def __init__(
        self,
        base_url: str | httpx.URL,
        secret: str,
        transport: httpx.AsyncBaseTransport,
        *,
        max_response_bytes: int,
        previous_secrets: tuple[str, ...] = (),
    ) -> None:
        try:
            self._signer = Signer(secret, *previous_secrets)  # previous: a rotation's grace window
        except ValueError as exc:
            raise BotEndpointError(f"bot secret is unusable: {exc}") from None
        base = str(base_url).rstrip("/")
        self._turn_url = httpx.URL(base + "/turn")  # parsed once, not on every turn
        self._health_url = httpx.URL(base + "/health")
        self._max_bytes = max_response_bytes
        self._base_headers = [(b"host", self._turn_url.netloc)] + [
            (name.encode(), value.encode()) for name, value in BASE_HEADERS.items()
        ]
        # The client owns the transport and its keep-alive pool (closed in aclose()); turns go to
        # the transport directly, see _exchange().
        self._client = httpx.AsyncClient(
            transport=transport,
            follow_redirects=False,
            timeout=None,  # each call is bounded by asyncio.timeout, covering the whole exchange
            trust_env=False,
        )
        self._transport = transport

    @classmethod
    async def open(
        cls, endpoint: str, secret: str, settings: Settings, previous_secrets: tuple[str, ...] = ()
    ) -> HttpBotConnection:
        """Connect to an HTTP bot's endpoint; raises EndpointRefused if the SSRF policy says no."""
        resolved = await resolve_endpoint(
            endpoint,
            dev_mode=settings.dev_mode,
            resolver=resolver_for(settings),
            timeout_s=settings.health_timeout_s,
            networks=settings.bot_networks,
        )
        inner = _transport(tls=resolved.url.scheme == "https")
        return cls(
            resolved.url,
            secret,
            PinnedTransport(resolved, inner),
            max_response_bytes=settings.max_response_bytes,
            previous_secrets=previous_secrets,
        )

    @classmethod
    def over_unix_socket(
        cls, socket_path: str, secret: str, settings: Settings, previous_secrets: tuple[str, ...] = ()
    ) -> HttpBotConnection:
        """Connect to a hosted bot: the same protocol, carried over the sandbox's Unix socket."""
        transport = _transport(tls=False, uds=socket_path)
        return cls(
            UNIX_SOCKET_BASE_URL,
            secret,
            transport,
            max_response_bytes=settings.max_response_bytes,
            previous_secrets=previous_secrets,
        )

    async def __aenter__(self) -> HttpBotConnection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _exchange(self, method: str, url: httpx.URL, msg_id: str, body: bytes) -> tuple[int, bytes]:
        """One signed request, read up to the size cap.

        The request goes straight to the client's transport (its keep-alive connection pool): the
        client's cookie, auth and redirect layers are all things a bot must not get (cookies shared
        between turns, followed redirects) and cost about a third of the CPU of a turn.
        """
        signed = self._signer.headers(msg_id, body, method=method, path=url.raw_path.decode("ascii"))
        headers = self._base_headers + [(name.encode(), value.encode()) for name, value in signed.items()]
        if body:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        # Headers as bytes and the body as a ready stream: httpx has nothing left to encode.
        request = httpx.Request(method, url, headers=headers, stream=httpx.ByteStream(body))
        response = await self._transport.handle_async_request(request)
        stream: Any = response.stream
        try:
            status = response.status_code
            if 300 <= status < 400:
                raise _BadAnswer(f"HTTP {status} redirect (redirects are not followed)")
            declared = response.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > self._max_bytes:
                raise _BadAnswer(f"answer is larger than {self._max_bytes} bytes")
            data = b""
            async for chunk in stream:
                data += chunk
                if len(data) > self._max_bytes:
                    raise _BadAnswer(f"answer is larger than {self._max_bytes} bytes")
        finally:
            await stream.aclose()
        return status, data

    @staticmethod
    def _error_from_body(status: int, data: bytes) -> str:
        """The bot's own error text, when it sent one; the store makes it safe to keep (NUL...)."""
        detail = ""
        try:
            parsed = decode_answer(data)
            if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
                detail = ": " + parsed["error"]
        except AnswerError:
            pass
        return _shorten(f"HTTP {status}{detail}")

    async def turn(
        self,
        *,
        match_id: str,
        game: str,
        player: int,
        turn: int,
        timeout_ms: int,
        observation: Any,
    ) -> TurnReply:
        """Ask the bot for its action; never raises, always returns within `timeout_ms`."""
        payload = {
            "protocol": PROTOCOL_VERSION,
            "match_id": match_id,
            "game": game,
            "player": player,
            "turn": turn,
            "timeout_ms": timeout_ms,
            "observation": observation,
        }
        body = json.dumps(payload, separators=(",", ":")).encode()
        msg_id = f"{match_id}-{turn}-{player}-{uuid.uuid4().hex[:16]}"  # never reused, even on retries
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                status, data = await self._exchange("POST", self._turn_url, msg_id, body)
        except TimeoutError:
            return TurnReply(
                None, (time.perf_counter() - started) * 1000, f"no answer within {timeout_ms} ms", True
            )
        except _BadAnswer as exc:
            return TurnReply(None, (time.perf_counter() - started) * 1000, str(exc))
        except (httpx.HTTPError, OSError, ssl.SSLError) as exc:
            return TurnReply(None, (time.perf_counter() - started) * 1000, _describe(exc))
        latency_ms = (time.perf_counter() - started) * 1000
        if status != 200:
            return TurnReply(None, latency_ms, self._error_from_body(status, data))
        try:
            answer = decode_answer(data)
        except AnswerError as exc:
            return TurnReply(None, latency_ms, str(exc))
        if not isinstance(answer, dict) or "action" not in answer:
            return TurnReply(None, latency_ms, 'answer is not a JSON object with an "action"')
        return TurnReply(answer["action"], latency_ms)

    async def health(self, timeout_s: float) -> None:
        """Signed `GET /health`; raises BotEndpointError unless the bot answers 200 {"status": "ok"}."""
        msg_id = f"health-{uuid.uuid4().hex}"
        try:
            async with asyncio.timeout(timeout_s):
                status, data = await self._exchange("GET", self._health_url, msg_id, b"")
        except TimeoutError:
            raise BotEndpointError(f"health check: no answer within {timeout_s:g} s") from None
        except _BadAnswer as exc:
            raise BotEndpointError(f"health check: {exc}") from None
        except (httpx.HTTPError, OSError, ssl.SSLError) as exc:
            raise BotEndpointError(f"health check: {_describe(exc)}") from None
        if status != 200:
            raise BotEndpointError(f"health check: {self._error_from_body(status, data)}")
        try:
            answer = decode_answer(data)
        except AnswerError as exc:
            raise BotEndpointError(f"health check: {exc}") from None
        if not isinstance(answer, dict) or answer.get("status") != "ok":
            raise BotEndpointError('health check: answer is not {"status": "ok"}')


async def check_health(endpoint: str, secret: str, settings: Settings) -> None:
    """Registration-time check of an HTTP bot: policy, reachability and signature handling.

    Raises EndpointRefused when the endpoint is not allowed and BotEndpointError when the bot does
    not answer its signed health check correctly.
    """
    connection = await HttpBotConnection.open(endpoint, secret, settings)
    async with connection:
        await connection.health(settings.health_timeout_s)
