"""Opening a connection to every bot of a match, HTTP or hosted, and closing them all afterwards.

A bot we cannot reach is not an exception: it gets a stand-in that fails every turn (so it plays
default actions and forfeits) and a note that ends up in its participant's error samples. Such a
match is played but not rated (see play.py); only when no bot at all is reachable does the match
fail, because then there is no contest at all.

Every problem has two texts: `problem`, the detail for the bot's owner (it may name the endpoint
or quote the bot's answer), and `category`, the only thing any public view may show.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from services.match_runner.store import Seat
from shared.botclient import BotEndpointError, HttpBotConnection
from shared.bots import grace_secrets
from shared.config import Settings
from shared.crypto import SecretDecryptionError, decrypt_secret
from shared.play.turns import TurnClient, UnreachableBot
from shared.states import BotKind, HostedContract

if TYPE_CHECKING:
    from shared.sandbox.turns import FrozenBetweenTurns

log = logging.getLogger(__name__)


class SeatProblem(StrEnum):
    """What went wrong before the first turn, in words safe for everyone to read."""

    UNREACHABLE = "unreachable"
    HEALTH_CHECK_FAILED = "health check failed"
    START_FAILED = "failed to start"
    PLATFORM = "platform error"
    """Our fault (no sandbox, a crash opening the bot): never counted against the bot."""
    SECRET_KEY = "platform error: the bot's secret cannot be decrypted"
    """The operator's fault: the secret key changed since the secret was stored (or the row is
    corrupt). The match is not played at all (play.py): every such match would be a forfeit."""

    @property
    def bot_fault(self) -> bool:
        return self not in (SeatProblem.PLATFORM, SeatProblem.SECRET_KEY)


@dataclass
class OpenSeat:
    client: TurnClient
    reachable: bool
    problem: str | None = None
    """The detail, for the bot's owner only."""
    closers: list[Any] = field(default_factory=list)
    category: SeatProblem | None = None
    """The public category of `problem`; None when the seat is fine."""


def _unreachable(problem: str, category: SeatProblem, closers: list[Any] | None = None) -> OpenSeat:
    return OpenSeat(UnreachableBot(problem), False, problem, closers or [], category)


async def _open_http(seat: Seat, secret: str, settings: Settings) -> OpenSeat:
    if not seat.endpoint:
        return _unreachable("bot has no endpoint", SeatProblem.UNREACHABLE)
    previous = grace_secrets(settings, seat.previous_secret_encrypted, seat.secret_rotated_at)
    try:
        connection = await HttpBotConnection.open(seat.endpoint, secret, settings, previous_secrets=previous)
    except BotEndpointError as exc:
        return _unreachable(exc.message, SeatProblem.UNREACHABLE)
    return await _checked(connection, settings, [connection.aclose])


async def _open_hosted(seat: Seat, secret: str, game: str, settings: Settings) -> OpenSeat:
    from shared.sandbox import SandboxError
    from shared.sandbox.reuse import keeper
    from shared.sandbox.turns import FrozenBetweenTurns

    if not seat.source:
        return _unreachable("hosted bot has no code", SeatProblem.START_FAILED)
    sandboxes = keeper()  # a sandbox this worker kept from the bot's last match, or a new one
    try:
        sandbox = await sandboxes.acquire(
            seat.source,
            secret=secret,
            contract=seat.contract or HostedContract.DECIDE,
            game=game,
            settings=settings,
        )
    except SandboxError as exc:
        log.error("cannot start a sandbox for bot %s: %s", seat.bot_id, exc)
        return _unreachable(f"sandbox: {exc}", SeatProblem.PLATFORM)
    if sandbox.start_error:

        async def discard() -> None:
            await sandboxes.release(sandbox, clean=False, settings=settings)

        return _unreachable(sandbox.start_error[:500], SeatProblem.START_FAILED, [discard])
    http = HttpBotConnection.over_unix_socket(sandbox.socket_path, secret, settings)
    connection = FrozenBetweenTurns(http, sandbox)  # the sandbox runs only while a request is in flight

    async def release() -> None:  # kept for the bot's next match only if it played this one cleanly
        await sandboxes.release(sandbox, clean=connection.clean, settings=settings)

    return await _checked(connection, settings, [connection.aclose, release])


async def _checked(
    connection: HttpBotConnection | FrozenBetweenTurns, settings: Settings, closers: list[Any]
) -> OpenSeat:
    """A signed health check before the first turn; a failing bot still plays (it may recover), but
    the match is not rated (see play.py)."""
    try:
        await connection.health(settings.health_timeout_s)
    except BotEndpointError as exc:
        return OpenSeat(connection, False, exc.message, closers, SeatProblem.HEALTH_CHECK_FAILED)
    return OpenSeat(connection, True, None, closers)


async def open_seat(seat: Seat, game: str, settings: Settings) -> OpenSeat:
    try:
        secret = decrypt_secret(settings, seat.secret_encrypted)
    except SecretDecryptionError:
        problem = (
            f"cannot decrypt bot {seat.bot_name!r}'s secret (bot {seat.bot_id}): the secret key changed "
            "(ARENA_SECRET_KEY) since the secret was stored, or the row is corrupt; run the platform "
            "with the key it was stored with"
        )
        log.error("%s", problem)
        return _unreachable(problem, SeatProblem.SECRET_KEY)
    try:
        if seat.kind == BotKind.HOSTED:
            return await _open_hosted(seat, secret, game, settings)
        return await _open_http(seat, secret, settings)
    except Exception as exc:  # an unexpected fault of one bot must not stop the match for the others
        log.exception("cannot open bot %s", seat.bot_id)
        return _unreachable(f"cannot open the bot: {type(exc).__name__}", SeatProblem.PLATFORM)


async def open_seats(seats: list[Seat], game: str, settings: Settings) -> list[OpenSeat]:
    """Open every seat in parallel (health checks and sandbox starts overlap)."""
    return list(await asyncio.gather(*(open_seat(seat, game, settings) for seat in seats)))


async def close_seats(opened: list[OpenSeat]) -> None:
    """Close connections and tear down sandboxes, whatever state they are in."""
    for seat in opened:
        for close in seat.closers:
            with contextlib.suppress(Exception):
                await close()
