"""Opening every player of a local match as a TurnClient, and closing them all afterwards.

Hosted and HTTP bots are opened with the platform's own pieces, as the match runner's seats do:
the sandbox (shared.sandbox.start_bot, frozen between turns), the signed protocol-v1 client with
its SSRF policy (shared.botclient.HttpBotConnection) and the signed health check before the first
turn. Unlike the platform, a bot that cannot be started or reached stops the local match before it
begins: its author wants the reason, not a forfeit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from shared.botclient import BotEndpointError, HttpBotConnection
from shared.botclient.inprocess import InProcessBot
from shared.config import Settings
from shared.play.bot_specs import BotKindArg, BotSpec
from shared.play.errors import PlayError
from shared.protocol.signing import generate_secret

Closer = Callable[[], Awaitable[Any]]


@dataclass
class OpenedBots:
    clients: list[Any] = field(default_factory=list)
    closers: list[Closer] = field(default_factory=list)

    async def close(self) -> None:
        for close in reversed(self.closers):
            with contextlib.suppress(Exception):
                await close()


def last_line(text: str) -> str:
    """The line of a bot's output that says the most: the last one that is not a traceback marker."""
    lines = [line.strip() for line in text.splitlines() if line.strip().strip("^~ ")]
    return lines[-1] if lines else "no output"


async def _health(spec: BotSpec, connection: Any, settings: Settings) -> None:
    try:
        await connection.health(settings.health_timeout_s)
    except BotEndpointError as exc:
        raise PlayError(f"bot {spec.label!r}: {exc.message}") from None


async def _open_http(spec: BotSpec, settings: Settings, opened: OpenedBots) -> None:
    assert spec.endpoint is not None
    assert spec.secret is not None
    try:
        connection = await HttpBotConnection.open(spec.endpoint, spec.secret, settings)
    except BotEndpointError as exc:
        raise PlayError(f"bot {spec.label!r}: {exc.message}") from None
    opened.closers.append(connection.aclose)
    await _health(spec, connection, settings)
    opened.clients.append(connection)


async def _open_hosted(spec: BotSpec, game: str, settings: Settings, opened: OpenedBots) -> None:
    from shared.sandbox import SandboxError, start_bot
    from shared.sandbox.turns import FrozenBetweenTurns
    from shared.sandbox.uids import SandboxUids

    assert spec.source is not None
    secret = generate_secret()
    try:
        sandbox = await asyncio.to_thread(
            start_bot,
            spec.source,
            secret=secret,
            contract=spec.contract,
            game=game,
            backend=settings.sandbox_backend,
            dev_mode=settings.dev_mode,
            uids=SandboxUids.from_settings(settings),
        )
    except SandboxError as exc:
        raise PlayError(f"bot {spec.label!r}: cannot start the sandbox: {exc}") from None
    opened.closers.append(lambda: asyncio.to_thread(sandbox.close))
    if sandbox.start_error:
        raise PlayError(f"bot {spec.label!r}: the bot did not start: {last_line(sandbox.log_tail())}")
    http = HttpBotConnection.over_unix_socket(sandbox.socket_path, secret, settings)
    connection = FrozenBetweenTurns(http, sandbox)
    opened.closers.append(connection.aclose)
    await _health(spec, connection, settings)
    opened.clients.append(connection)


async def open_bots(specs: list[BotSpec], game: str, settings: Settings) -> OpenedBots:
    """A client per spec, in seat order; on any failure everything opened so far is closed."""
    opened = OpenedBots()
    try:
        for spec in specs:
            if spec.kind is BotKindArg.BUILTIN:
                assert spec.decide is not None
                opened.clients.append(InProcessBot(spec.decide))
            elif spec.kind is BotKindArg.HTTP:
                await _open_http(spec, settings, opened)
            else:
                await _open_hosted(spec, game, settings, opened)
    except BaseException:
        await opened.close()
        raise
    return opened
