"""Bot registration and lifecycle as plain functions over a Session; see the package docstring for
the transaction rule. The rules that matter:

- an HTTP bot becomes active only after its endpoint answered a signed health check (the SSRF
  policy lives in shared.botclient, so the runner and the registration refuse the same addresses);
- hosted code passes the static gate before it is stored, and every upload is a new version;
- secrets are generated here, encrypted before they touch the database and handed back exactly once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from shared import ratings
from shared.botclient import BotEndpointError, EndpointRefused, HttpBotConnection
from shared.bots.errors import (
    BotNameTaken,
    BotNotFound,
    EndpointCheckFailed,
    EndpointNotAllowed,
    InvalidBotSource,
    NotBotOwner,
    SourceTooLarge,
    UnknownGame,
    WrongBotKind,
)
from shared.config import Settings
from shared.crypto import SecretDecryptionError, decrypt_secret, encrypt_secret
from shared.db.models import Bot, BotVersion, EvolutionRun, Rating, User
from shared.games.registry import UnknownGameError, get_game
from shared.protocol.signing import generate_secret
from shared.sandbox.gate import check_source as gate
from shared.states import BotKind, BotOrigin, BotStatus, HostedContract, UserRole

log = logging.getLogger("shared.bots")

NAME_CONSTRAINT = "uq_bots_game_name"


class HttpBotRegistration(NamedTuple):
    bot: Bot
    secret: str
    """The plain signing secret: returned here once, stored only encrypted."""
    verified: bool
    """True when the endpoint passed its health check now and the bot is active already."""


# -- checks ---------------------------------------------------------------------------------------


def check_game(game: str) -> None:
    """UnknownGame unless `game` is a registered game."""
    try:
        get_game(game)
    except UnknownGameError as exc:
        raise UnknownGame(str(exc.args[0]), game) from None


def check_source(settings: Settings, source: str, contract: HostedContract) -> None:
    """Size first (SourceTooLarge, the clearest message), then every problem the static gate finds."""
    limit = settings.hosted_code_max_chars
    if len(source) > limit:
        raise SourceTooLarge(len(source), limit)
    problems = gate(source, contract=contract, max_chars=limit)
    if problems:
        listed: list[dict[str, Any]] = [
            {"line": p.line, "col": p.col, "message": p.message} for p in problems
        ]
        summary = "; ".join(str(p) for p in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise InvalidBotSource(f"the bot source has {len(problems)} problem(s): {summary}{more}", listed)


async def _check_health(endpoint: str, secret: str, previous: tuple[str, ...], settings: Settings) -> None:
    connection = await HttpBotConnection.open(endpoint, secret, settings, previous_secrets=previous)
    async with connection:
        await connection.health(settings.health_timeout_s)


def check_endpoint(settings: Settings, endpoint: str, secret: str, previous: tuple[str, ...] = ()) -> None:
    """Run the signed GET /health through the runner's own client; a failure says why.

    `previous` are secrets still in their rotation grace window: signed with too, as the runner does.
    Synchronous (it runs its own short event loop), so call it from a thread, never from a running
    event loop.
    """
    try:
        asyncio.run(_check_health(endpoint, secret, previous, settings))
    except EndpointRefused as exc:
        raise EndpointNotAllowed(f"endpoint refused: {exc.message}", endpoint) from None
    except BotEndpointError as exc:
        raise EndpointCheckFailed(
            f"the bot at {endpoint} failed its signed health check (GET /health): {exc.message}", endpoint
        ) from None


# -- who may act on a bot -------------------------------------------------------------------------


def may_manage(actor: User, bot: Bot) -> bool:
    """The owner and admins may change a bot, see its endpoint and its versions' source."""
    return bot.owner_id == actor.id or actor.role == UserRole.ADMIN


def ensure_may_manage(actor: User, bot: Bot) -> None:
    if not may_manage(actor, bot):
        raise NotBotOwner(bot.id)


def publicly_listed() -> ColumnElement[bool]:
    """Bots anyone may see: all but the evolver's candidate bots, which play only the private
    evaluation matches of their run and would tell who runs which evolution (their owner sees
    them through the run)."""
    candidates = select(EvolutionRun.candidate_bot_id).where(EvolutionRun.candidate_bot_id.is_not(None))
    return Bot.id.not_in(candidates)


def get_bot(session: Session, bot_id: uuid.UUID) -> Bot:
    bot = session.get(Bot, bot_id)
    if bot is None:
        raise BotNotFound(bot_id)
    return bot


def get_owned_bot(session: Session, actor: User, bot_id: uuid.UUID) -> Bot:
    """The bot if `actor` may manage it; BotNotFound if it does not exist, NotBotOwner otherwise."""
    bot = get_bot(session, bot_id)
    ensure_may_manage(actor, bot)
    return bot


# -- registration ---------------------------------------------------------------------------------


def _ensure_name_free(session: Session, game: str, name: str, exclude: uuid.UUID | None = None) -> None:
    query = select(Bot.id).where(Bot.game == game, Bot.name == name)
    if exclude is not None:
        query = query.where(Bot.id != exclude)
    if session.scalar(query) is not None:
        raise BotNameTaken(game, name)


@contextmanager
def _claiming_name(session: Session, game: str, name: str) -> Iterator[None]:
    """The writes that give a bot its name, then the commit. A concurrent registration that took the
    name after our check loses at the unique index (on flush or commit): BotNameTaken, not a 500."""
    try:
        yield
        session.commit()
    except IntegrityError as exc:
        session.rollback()
        if NAME_CONSTRAINT in str(exc.orig):
            raise BotNameTaken(game, name) from None
        raise


def _hosted_version(
    bot: Bot, number: int, source: str, contract: HostedContract, notes: dict[str, Any]
) -> BotVersion:
    return BotVersion(
        bot_id=bot.id,
        number=number,
        source=source,
        contract=contract,
        source_sha256=hashlib.sha256(source.encode()).hexdigest(),
        notes=notes,
    )


def _make_current(session: Session, bot: Bot, version: BotVersion) -> None:
    session.add(version)
    session.flush()
    bot.current_version_id = version.id


def _insert_bot(session: Session, bot: Bot, first_version: Callable[[Bot], BotVersion]) -> None:
    """Store a new bot with its version 1 (built once the bot has an id) and a fresh rating, then
    commit; BotNameTaken when a concurrent registration took the name first."""
    with _claiming_name(session, bot.game, bot.name):
        session.add(bot)
        session.flush()
        _make_current(session, bot, first_version(bot))
        ratings.ensure_ratings(session, bot.game, [bot.id])


def register_http_bot(
    session: Session,
    settings: Settings,
    owner: User,
    *,
    name: str,
    game: str,
    endpoint: str,
    secret: str | None = None,
    origin: BotOrigin = BotOrigin.HUMAN,
    notes: dict[str, Any] | None = None,
) -> HttpBotRegistration:
    """An HTTP bot with version 1 and a fresh rating.

    With `secret` the endpoint is health-checked now and the bot starts active; without, a secret is
    generated and the bot starts inactive until `reactivate` passes the check.
    """
    check_game(game)
    _ensure_name_free(session, game, name)
    verified = secret is not None
    if secret is None:
        secret = generate_secret()
    else:
        check_endpoint(settings, endpoint, secret)
    bot = Bot(
        owner=owner,
        name=name,
        game=game,
        kind=BotKind.HTTP,
        origin=origin,
        endpoint=endpoint,
        secret_encrypted=encrypt_secret(settings, secret),
        status=BotStatus.ACTIVE if verified else BotStatus.INACTIVE,
    )
    _insert_bot(
        session,
        bot,
        lambda b: BotVersion(bot_id=b.id, number=1, notes={**(notes or {}), "endpoint": endpoint}),
    )
    log.info("registered %s http bot %s (%s) for %s", origin, bot.id, game, owner.name)
    return HttpBotRegistration(bot, secret, verified)


def register_hosted_bot(
    session: Session,
    settings: Settings,
    owner: User,
    *,
    name: str,
    game: str,
    source: str,
    contract: HostedContract = HostedContract.DECIDE,
    origin: BotOrigin = BotOrigin.HUMAN,
    notes: dict[str, Any] | None = None,
    status: BotStatus = BotStatus.ACTIVE,
    status_reason: str | None = None,
) -> Bot:
    """A hosted bot, active at once (unless `status` says otherwise: the evolver's candidate bots
    are inactive from the start, so the ladder never seats them), with `source` as version 1 and a
    fresh rating."""
    check_game(game)
    check_source(settings, source, contract)
    _ensure_name_free(session, game, name)
    bot = Bot(
        owner=owner,
        name=name,
        game=game,
        kind=BotKind.HOSTED,
        origin=origin,
        endpoint=None,
        secret_encrypted=encrypt_secret(settings, generate_secret()),
        status=status,
        status_reason=status_reason,
    )
    _insert_bot(session, bot, lambda b: _hosted_version(b, 1, source, contract, dict(notes or {})))
    log.info(
        "registered %s hosted bot %s (%s, %s contract) for %s", origin, bot.id, game, contract, owner.name
    )
    return bot


def _next_number(session: Session, bot: Bot) -> int:
    return (session.scalar(select(func.max(BotVersion.number)).where(BotVersion.bot_id == bot.id)) or 0) + 1


def add_version(
    session: Session,
    settings: Settings,
    bot: Bot,
    *,
    source: str,
    contract: HostedContract | None = None,
    notes: dict[str, Any] | None = None,
) -> BotVersion:
    """New code for a hosted bot; it becomes the current version and the rating's uncertainty resets.

    `contract` defaults to the current version's; `notes` is free-form provenance (an evolver's run
    and parent, a trainer's checkpoint)."""
    if bot.kind != BotKind.HOSTED:
        raise WrongBotKind("only hosted bots take code uploads; change an HTTP bot's endpoint with PATCH")
    current = session.get(BotVersion, bot.current_version_id) if bot.current_version_id else None
    contract = contract or (current.contract if current and current.contract else HostedContract.DECIDE)
    check_source(settings, source, contract)
    version = _hosted_version(bot, _next_number(session, bot), source, contract, dict(notes or {}))
    _make_current(session, bot, version)
    ratings.ensure_ratings(session, bot.game, [bot.id])
    row = session.get(Rating, bot.id, populate_existing=True)
    if row is not None:
        ratings.on_new_version(row)
    session.commit()
    log.info("bot %s has a new version %d", bot.id, version.number)
    return version


# -- changes --------------------------------------------------------------------------------------


def update_bot(
    session: Session, settings: Settings, bot: Bot, *, name: str | None = None, endpoint: str | None = None
) -> Bot:
    """Rename a bot and/or move an HTTP bot's endpoint (a new version that records it).

    An active bot's new endpoint must pass the health check first; nothing changes when a check fails.
    """
    new_name = name if name is not None and name != bot.name else None
    new_endpoint = endpoint if endpoint is not None and endpoint != bot.endpoint else None
    if new_name is not None:
        _ensure_name_free(session, bot.game, new_name, exclude=bot.id)
    if new_endpoint is not None:
        if bot.kind != BotKind.HTTP:
            raise WrongBotKind("hosted bots have no endpoint; upload a new version instead")
        if bot.status == BotStatus.ACTIVE:
            check_endpoint(
                settings, new_endpoint, _plain_secret(settings, bot), _grace_secrets(settings, bot)
            )
    with _claiming_name(session, bot.game, new_name or bot.name):
        if new_name is not None:
            bot.name = new_name
        if new_endpoint is not None:
            bot.endpoint = new_endpoint
            number = _next_number(session, bot)
            _make_current(
                session, bot, BotVersion(bot_id=bot.id, number=number, notes={"endpoint": new_endpoint})
            )
    return bot


def _plain_secret(settings: Settings, bot: Bot) -> str:
    return decrypt_secret(settings, bot.secret_encrypted)


def grace_ends_at(settings: Settings, bot: Bot) -> datetime | None:
    """When the previous secret stops being signed with; None when there is none."""
    if bot.previous_secret_encrypted is None or bot.secret_rotated_at is None:
        return None
    return bot.secret_rotated_at + timedelta(seconds=settings.secret_grace_s)


def grace_secrets(
    settings: Settings,
    previous_encrypted: bytes | None,
    rotated_at: datetime | None,
    *,
    now: datetime | None = None,
) -> tuple[str, ...]:
    """The secret before the last rotation while its grace window lasts, else nothing: what the
    registration's health check and the runner both sign with besides the current secret."""
    if previous_encrypted is None or rotated_at is None:
        return ()
    if rotated_at + timedelta(seconds=settings.secret_grace_s) <= (now or datetime.now(UTC)):
        return ()
    try:
        return (decrypt_secret(settings, previous_encrypted),)
    except SecretDecryptionError:
        log.warning("a previous bot secret cannot be decrypted (secret key changed?); signing without it")
        return ()


def _grace_secrets(settings: Settings, bot: Bot) -> tuple[str, ...]:
    return grace_secrets(settings, bot.previous_secret_encrypted, bot.secret_rotated_at)


def rotate_secret(session: Session, settings: Settings, bot: Bot) -> str:
    """A new secret, returned once; the current one becomes the previous one, still signed with for
    `settings.secret_grace_s` so the bot's server can be updated without failing its checks.
    Only one previous secret is kept: rotating twice ends the first one's grace at once."""
    secret = generate_secret()
    bot.previous_secret_encrypted = bot.secret_encrypted
    bot.secret_rotated_at = datetime.now(UTC)
    bot.secret_encrypted = encrypt_secret(settings, secret)
    session.commit()
    log.info("rotated the secret of bot %s", bot.id)
    return secret


def deactivate(session: Session, bot: Bot) -> Bot:
    """Off the ladder; the bot keeps its rating and history. Also clears a suspension's reason."""
    bot.status = BotStatus.INACTIVE
    bot.status_reason = None
    bot.suspended_at = None
    session.commit()
    return bot


def reactivate(session: Session, settings: Settings, bot: Bot) -> Bot:
    """Back on the ladder, also after a suspension. An HTTP bot's health check runs again first (a dead
    endpoint stays off the ladder); the count of failed health checks starts over."""
    if bot.kind == BotKind.HTTP and bot.endpoint:
        check_endpoint(settings, bot.endpoint, _plain_secret(settings, bot), _grace_secrets(settings, bot))
    bot.status = BotStatus.ACTIVE
    bot.status_reason = None
    bot.suspended_at = None
    bot.health_failures = 0
    bot.last_health_error = None
    session.commit()
    return bot
