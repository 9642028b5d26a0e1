"""The previous turn path, on httpx/httpcore/h11: kept as the baseline that
`scripts/bench_internals.py` (e) measures the current one against and that
tests/botclient/test_differential.py compares it with, answer by answer.

It is also what `HttpBotConnection` uses when a caller hands it an httpx transport of its own (a
test trusting its own certificate authority, say); `HttpBotConnection.open` and
`over_unix_socket` never do. `SocketTransport` is httpcore's keep-alive pool on a plain asyncio
socket backend; `HttpxTransport` reads an answer through any httpx transport with the rules the
runner has always applied (no redirects, the size cap, identity encoding).
"""

from __future__ import annotations

import asyncio
import ipaddress
import select
import socket
import ssl
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpcore
import httpx

from shared.botclient.http1 import ExchangeError, default_ssl_context, os_error_text, shorten
from shared.botclient.ssrf import PinnedTransport, ResolvedEndpoint


class _SocketStream(httpcore.AsyncNetworkStream):
    """A plain (no TLS) socket driven by the event loop directly.

    httpcore writes a request as several pieces (headers, body, end of message); they are held
    here and leave in one send when httpcore starts reading the answer, so the bot gets one packet
    and one wake-up per turn instead of two.
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
            raise httpcore.WriteError(os_error_text(exc)) from exc

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ARG002 (httpcore passes it by keyword)
        if self._pending:
            await self._flush()
        try:
            return await self._loop.sock_recv(self._sock, max_bytes)
        except OSError as exc:
            raise httpcore.ReadError(os_error_text(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ARG002 (httpcore passes it by keyword)
        if buffer:
            self._pending.append(bytes(buffer))
            self._pending_size += len(buffer)
            if self._pending_size >= self._FLUSH_AT:
                await self._flush()

    async def aclose(self) -> None:
        self._pending = []
        self._sock.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,  # noqa: ARG002 (httpcore passes it by keyword)
        server_hostname: str | None = None,  # noqa: ARG002 (httpcore passes it by keyword)
        timeout: float | None = None,  # noqa: ARG002 (httpcore passes it by keyword)
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
        raise httpcore.ConnectError(os_error_text(exc)) from exc
    except BaseException:
        sock.close()
        raise
    return _SocketStream(sock)


class _SocketBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network layer for plain HTTP over TCP or a Unix socket, on asyncio directly
    (the default backend goes through anyio on every read and write)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ARG002 (httpcore passes it by keyword)
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
                raise httpcore.ConnectError(os_error_text(exc)) from exc
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
            raise httpcore.ConnectError(os_error_text(exc)) from exc
        return await _connected(sock, address)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ARG002 (httpcore passes it by keyword)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            for option in socket_options or ():
                sock.setsockopt(*option)
        except OSError as exc:
            sock.close()
            raise httpcore.ConnectError(os_error_text(exc)) from exc
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


def httpx_transport(*, tls: bool, uds: str | None = None) -> httpx.AsyncBaseTransport:
    """`SocketTransport` for plain HTTP; httpx's own transport where TLS is needed."""
    if not tls:
        return SocketTransport(uds)
    return httpx.AsyncHTTPTransport(verify=default_ssl_context(), retries=0, trust_env=False, uds=uds)


def pinned_httpx_transport(endpoint: ResolvedEndpoint) -> httpx.AsyncBaseTransport:
    """What `HttpBotConnection.open` used for an HTTP bot: pinned to the checked address."""
    return PinnedTransport(endpoint, httpx_transport(tls=endpoint.url.scheme == "https"))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.ConnectError):
        return shorten(f"cannot connect: {exc}" if str(exc) else "cannot connect")
    if isinstance(exc, httpx.RemoteProtocolError):
        return shorten(f"broken HTTP answer: {exc}" if str(exc) else "connection closed without an answer")
    return shorten(f"{type(exc).__name__}: {exc}")


class HttpxTransport:
    """Requests through an httpx transport, read with the runner's rules; errors as ExchangeError.

    The request goes straight to the transport (its keep-alive pool): an httpx client's cookie,
    auth and redirect layers are things a bot must not get.
    """

    def __init__(self, transport: httpx.AsyncBaseTransport) -> None:
        self._transport = transport

    async def exchange(
        self,
        method: str,
        url: httpx.URL,
        _target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        max_bytes: int,
    ) -> tuple[int, bytes]:
        # Headers as bytes and the body as a ready stream: httpx has nothing left to encode.
        request = httpx.Request(method, url, headers=headers, stream=httpx.ByteStream(body))
        try:
            response = await self._transport.handle_async_request(request)
            stream: Any = response.stream
            try:
                status = response.status_code
                if 300 <= status < 400:
                    raise ExchangeError(f"HTTP {status} redirect (redirects are not followed)")
                declared = response.headers.get("content-length")
                if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                    raise ExchangeError(f"answer is larger than {max_bytes} bytes")
                data = b""
                async for chunk in stream:
                    data += chunk
                    if len(data) > max_bytes:
                        raise ExchangeError(f"answer is larger than {max_bytes} bytes")
            finally:
                await stream.aclose()
        except TimeoutError:
            raise
        except (httpx.HTTPError, OSError, ssl.SSLError) as exc:
            raise ExchangeError(_describe(exc)) from None
        return status, data

    async def aclose(self) -> None:
        await self._transport.aclose()
