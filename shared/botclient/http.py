"""The runner's side of bot protocol v1: signed requests to one bot, over TCP or a Unix socket.

One `HttpBotConnection` per bot per match keeps its connection alive between turns. Whatever the
bot does (hangs, answers 500, redirects, sends garbage or a huge body, closes the connection), a
turn ends within its timeout with a `TurnReply` that says what went wrong; nothing raises.

The bytes travel through `shared.botclient.http1` (httptools on an asyncio protocol); the previous
httpx path (`shared.botclient.httpx_client`) is still used when a caller passes an httpx transport,
and by `open` and `over_unix_socket` when `Settings.bot_client` asks for it (the benchmarks'
baseline).

Message ids are `<match>-<turn>-<player>-<connection><n>`: 16 random hex digits drawn once per
connection, then a count of its requests. A bot's replay cache needs an id never used before with
its secret inside the freshness window; the count makes ids unique on one connection, the random
part across connections, processes and retried matches (a retry opens new connections).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import ssl
import time
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from shared.botclient.answers import AnswerError, decode_answer
from shared.botclient.errors import BotEndpointError
from shared.botclient.http1 import (
    MAX_ERROR_TEXT,
    ExchangeError,
    Http1Transport,
    TcpDialer,
    UnixDialer,
    shorten,
)
from shared.botclient.httpx_client import HttpxTransport, SocketTransport, pinned_httpx_transport
from shared.botclient.ssrf import resolve_endpoint, resolver_for
from shared.config import Settings
from shared.protocol.signing import Signer

__all__ = ["MAX_ERROR_TEXT", "BotTransport", "HttpBotConnection", "TurnReply", "check_health"]

PROTOCOL_VERSION = 1
USER_AGENT = "arena-runner/1"
UNIX_SOCKET_BASE_URL = "http://hosted-bot"
BASE_HEADERS = {"user-agent": USER_AGENT, "accept": "application/json", "accept-encoding": "identity"}


@dataclass(frozen=True, slots=True)
class TurnReply:
    """One bot's answer for one turn; `action` is None whenever `error` is set or it timed out."""

    action: Any
    latency_ms: float
    error: str | None = None
    timed_out: bool = False
    body: bytes | None = None
    """The answer body `action` was decoded from, when there is one: the replay sizes the action by
    it (shared.games.replay) instead of serialising the action once more."""

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


class BotTransport(Protocol):
    """Carries one request to a bot and reads its whole answer (`Http1Transport`, `HttpxTransport`).

    `exchange` returns (status, body) or raises ExchangeError, whose message is the turn's error;
    it refuses 3xx answers and bodies over `max_bytes`.
    """

    async def exchange(
        self,
        method: str,
        url: httpx.URL,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        max_bytes: int,
    ) -> tuple[int, bytes]: ...

    async def aclose(self) -> None: ...


class HttpBotConnection:
    """A keep-alive client for one bot: signs every request, never follows redirects, caps bodies.

    The transport is the only thing that differs between an HTTP bot (TCP, or TLS for https, to the
    address checked by the SSRF policy) and a hosted bot (the sandbox's Unix socket). An httpx
    transport is accepted too and read through `HttpxTransport`. `legacy_v1` adds the deprecated v1
    signature entries (see shared.protocol.signing).
    """

    def __init__(
        self,
        base_url: str | httpx.URL,
        secret: str,
        transport: BotTransport | httpx.AsyncBaseTransport,
        *,
        max_response_bytes: int,
        previous_secrets: tuple[str, ...] = (),
        legacy_v1: bool = True,
    ) -> None:
        try:
            # previous: a rotation's grace window
            self._signer = Signer(secret, *previous_secrets, legacy_v1=legacy_v1)
        except ValueError as exc:
            raise BotEndpointError(f"bot secret is unusable: {exc}") from None
        self._id_prefix = secrets.token_hex(8)
        self._sent = itertools.count()
        base = str(base_url).rstrip("/")
        # Parsed once, not on every turn.
        self._turn_url = httpx.URL(base + "/turn")
        self._health_url = httpx.URL(base + "/health")
        self._turn_target = self._turn_url.raw_path
        self._health_target = self._health_url.raw_path
        self._max_bytes = max_response_bytes
        self._base_headers = [(b"host", self._turn_url.netloc)] + [
            (name.encode(), value.encode()) for name, value in BASE_HEADERS.items()
        ]
        if isinstance(transport, httpx.AsyncBaseTransport):
            transport = HttpxTransport(transport)
        self._transport: BotTransport = transport

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
        transport: BotTransport | httpx.AsyncBaseTransport = (
            pinned_httpx_transport(resolved)
            if settings.bot_client == "httpx"
            else Http1Transport(TcpDialer.for_endpoint(resolved))
        )
        return cls(
            resolved.url,
            secret,
            transport,
            max_response_bytes=settings.max_response_bytes,
            previous_secrets=previous_secrets,
            legacy_v1=settings.sign_legacy_v1,
        )

    @classmethod
    def over_unix_socket(
        cls, socket_path: str, secret: str, settings: Settings, previous_secrets: tuple[str, ...] = ()
    ) -> HttpBotConnection:
        """Connect to a hosted bot: the same protocol, carried over the sandbox's Unix socket. Signed
        with v2 only: hosted bots run the SDK, which never accepts v1."""
        transport: BotTransport | httpx.AsyncBaseTransport = (
            SocketTransport(uds=socket_path)
            if settings.bot_client == "httpx"
            else Http1Transport(UnixDialer(socket_path))
        )
        return cls(
            UNIX_SOCKET_BASE_URL,
            secret,
            transport,
            max_response_bytes=settings.max_response_bytes,
            previous_secrets=previous_secrets,
            legacy_v1=False,
        )

    async def __aenter__(self) -> HttpBotConnection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def _exchange(
        self, method: str, url: httpx.URL, target: bytes, msg_id: str, body: bytes
    ) -> tuple[int, bytes]:
        """One signed request, read up to the size cap."""
        signed = self._signer.headers(msg_id, body, method=method, path=target.decode("ascii"))
        headers = self._base_headers + [(name.encode(), value.encode()) for name, value in signed.items()]
        if body:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        return await self._transport.exchange(method, url, target, headers, body, self._max_bytes)

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
        return shorten(f"HTTP {status}{detail}")

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
        msg_id = f"{match_id}-{turn}-{player}-{self._id_prefix}{next(self._sent):x}"  # see the module doc
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                status, data = await self._exchange("POST", self._turn_url, self._turn_target, msg_id, body)
        except TimeoutError:
            return TurnReply(
                None, (time.perf_counter() - started) * 1000, f"no answer within {timeout_ms} ms", True
            )
        except ExchangeError as exc:
            return TurnReply(None, (time.perf_counter() - started) * 1000, str(exc))
        except (OSError, ssl.SSLError) as exc:  # not expected: the transports raise ExchangeError
            return TurnReply(
                None, (time.perf_counter() - started) * 1000, shorten(f"{type(exc).__name__}: {exc}")
            )
        latency_ms = (time.perf_counter() - started) * 1000
        if status != 200:
            return TurnReply(None, latency_ms, self._error_from_body(status, data))
        try:
            answer = decode_answer(data)
        except AnswerError as exc:
            return TurnReply(None, latency_ms, str(exc))
        if not isinstance(answer, dict) or "action" not in answer:
            return TurnReply(None, latency_ms, 'answer is not a JSON object with an "action"')
        return TurnReply(answer["action"], latency_ms, body=data)

    async def health(self, timeout_s: float) -> None:
        """Signed `GET /health`; raises BotEndpointError unless the bot answers 200 {"status": "ok"}."""
        msg_id = f"health-{self._id_prefix}{next(self._sent):x}"
        try:
            async with asyncio.timeout(timeout_s):
                status, data = await self._exchange("GET", self._health_url, self._health_target, msg_id, b"")
        except TimeoutError:
            raise BotEndpointError(f"health check: no answer within {timeout_s:g} s") from None
        except ExchangeError as exc:
            raise BotEndpointError(f"health check: {exc}") from None
        except (OSError, ssl.SSLError) as exc:
            raise BotEndpointError(shorten(f"health check: {type(exc).__name__}: {exc}")) from None
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
