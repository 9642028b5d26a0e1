"""Opening a connection to every bot of a match, HTTP or hosted, and closing them all afterwards.

A bot we cannot reach is not an exception: it gets a stand-in that fails every turn (so it plays
default actions and forfeits) and a note that ends up in its participant's error samples. Only when
no bot at all is reachable does the match fail, because then there is no contest to rate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

from services.match_runner.runner import TurnClient, UnreachableBot
from services.match_runner.store import Seat
from shared.botclient import BotEndpointError, HttpBotConnection
from shared.config import Settings
from shared.crypto import SecretDecryptionError, decrypt_secret

log = logging.getLogger(__name__)


@dataclass
class OpenSeat:
    client: TurnClient
    reachable: bool
    problem: str | None = None
    closers: list[Any] = field(default_factory=list)


async def _open_http(seat: Seat, secret: str, settings: Settings) -> OpenSeat:
    if not seat.endpoint:
        return OpenSeat(UnreachableBot("bot has no endpoint"), False, "bot has no endpoint")
    try:
        connection = await HttpBotConnection.open(seat.endpoint, secret, settings)
    except BotEndpointError as exc:
        return OpenSeat(UnreachableBot(exc.message), False, exc.message)
    return await _checked(connection, settings, [connection.aclose])


async def _open_hosted(seat: Seat, secret: str, game: str, settings: Settings) -> OpenSeat:
    from shared.sandbox import SandboxError, start_bot

    if not seat.source:
        return OpenSeat(UnreachableBot("hosted bot has no code"), False, "hosted bot has no code")
    try:
        sandbox = await asyncio.to_thread(
            start_bot,
            seat.source,
            secret=secret,
            contract=seat.contract or "decide",
            game=game,
            backend=settings.sandbox_backend,
            dev_mode=settings.dev_mode,
        )
    except SandboxError as exc:
        log.error("cannot start a sandbox for bot %s: %s", seat.bot_id, exc)
        problem = f"sandbox: {exc}"
        return OpenSeat(UnreachableBot(problem), False, problem)
    closers: list[Any] = [lambda: asyncio.to_thread(sandbox.close)]
    if sandbox.start_error:
        problem = sandbox.start_error[:500]
        return OpenSeat(UnreachableBot(problem), False, problem, closers)
    connection = HttpBotConnection.over_unix_socket(sandbox.socket_path, secret, settings)
    return await _checked(connection, settings, [connection.aclose, *closers])


async def _checked(connection: HttpBotConnection, settings: Settings, closers: list[Any]) -> OpenSeat:
    """A signed health check before the first turn; a failing bot still plays (it may recover)."""
    try:
        await connection.health(settings.health_timeout_s)
    except BotEndpointError as exc:
        return OpenSeat(connection, False, exc.message, closers)
    return OpenSeat(connection, True, None, closers)


async def open_seat(seat: Seat, game: str, settings: Settings) -> OpenSeat:
    try:
        secret = decrypt_secret(settings, seat.secret_encrypted)
    except SecretDecryptionError as exc:
        return OpenSeat(UnreachableBot(str(exc)), False, str(exc))
    try:
        if seat.kind == "hosted":
            return await _open_hosted(seat, secret, game, settings)
        return await _open_http(seat, secret, settings)
    except Exception as exc:  # an unexpected fault of one bot must not stop the match for the others
        log.exception("cannot open bot %s", seat.bot_id)
        problem = f"cannot open the bot: {type(exc).__name__}"
        return OpenSeat(UnreachableBot(problem), False, problem)


async def open_seats(seats: list[Seat], game: str, settings: Settings) -> list[OpenSeat]:
    """Open every seat in parallel (health checks and sandbox starts overlap)."""
    return list(await asyncio.gather(*(open_seat(seat, game, settings) for seat in seats)))


async def close_seats(opened: list[OpenSeat]) -> None:
    """Close connections and tear down sandboxes, whatever state they are in."""
    for seat in opened:
        for close in seat.closers:
            with contextlib.suppress(Exception):
                await close()
