"""Bot registration and lifecycle. The rules that matter:

- an HTTP bot becomes active only after its endpoint answered a signed health check (the SSRF
  policy lives in shared.botclient, so the runner and the gateway refuse the same addresses);
- hosted code passes the static gate before it is stored, and every upload is a new version;
- secrets are generated here, encrypted before they touch the database and returned exactly once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from services.gateway.bots.schemas import BotOut, PublicBot, RatingOut, VersionDetail, VersionOut
from services.gateway.deps import is_admin
from services.gateway.errors import ApiError, not_found
from shared import ratings
from shared.botclient import BotEndpointError, EndpointRefused, HttpBotConnection
from shared.config import Settings
from shared.crypto import SecretDecryptionError, decrypt_secret, encrypt_secret
from shared.db.models import Bot, BotVersion, Rating, User
from shared.games.registry import UnknownGameError, get_game
from shared.protocol.signing import generate_secret
from shared.sandbox.gate import check_source as gate
from shared.states import BotKind, BotOrigin, BotStatus, HostedContract

log = logging.getLogger("services.gateway.bots")


# -- collaborators --------------------------------------------------------------------------------


async def _check_health(endpoint: str, secret: str, previous: tuple[str, ...], settings: Settings) -> None:
    connection = await HttpBotConnection.open(endpoint, secret, settings, previous_secrets=previous)
    async with connection:
        await connection.health(settings.health_timeout_s)


def check_endpoint(settings: Settings, endpoint: str, secret: str, previous: tuple[str, ...] = ()) -> None:
    """Run the signed GET /health through the runner's client; failures become a 422 that says why.

    `previous` are secrets still in their rotation grace window: signed with too, as the runner does.
    Views run in a worker thread (the database is synchronous), so the async check gets its own
    short-lived event loop here.
    """
    try:
        asyncio.run(_check_health(endpoint, secret, previous, settings))
    except EndpointRefused as exc:
        raise ApiError(422, f"endpoint refused: {exc.message}") from None
    except BotEndpointError as exc:
        raise ApiError(
            422, f"the bot at {endpoint} failed its signed health check (GET /health): {exc.message}"
        ) from None


def check_source(settings: Settings, source: str, contract: str) -> None:
    """Size first (413, the clearest message), then every problem the static gate finds (422)."""
    limit = settings.hosted_code_max_chars
    if len(source) > limit:
        raise ApiError(
            413,
            f"the source is {len(source)} characters long; "
            f"the limit is {limit} (ARENA_HOSTED_CODE_MAX_CHARS)",
        )
    problems = gate(source, contract=contract, max_chars=limit)
    if problems:
        listed = [{"line": p.line, "col": p.col, "message": p.message} for p in problems]
        summary = "; ".join(str(p) for p in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise ApiError(422, f"the bot source has {len(problems)} problem(s): {summary}{more}", listed)


def initial_rating(session: Session, bot: Bot) -> None:
    ratings.ensure_ratings(session, bot.game, [bot.id])


def rating_on_new_version(session: Session, bot: Bot) -> None:
    ratings.ensure_ratings(session, bot.game, [bot.id])
    row = session.get(Rating, bot.id, populate_existing=True)
    if row is not None:
        ratings.on_new_version(row)


# -- lookups --------------------------------------------------------------------------------------


def validate_game(game: str, status_code: int = 422) -> None:
    try:
        get_game(game)
    except UnknownGameError as exc:
        raise ApiError(status_code, str(exc.args[0])) from None


def get_bot(session: Session, bot_id: uuid.UUID) -> Bot:
    bot = session.get(Bot, bot_id)
    if bot is None:
        raise not_found(f"bot {bot_id}")
    return bot


def get_owned_bot(session: Session, user: User, bot_id: uuid.UUID) -> Bot:
    """The bot if the caller owns it (or is an admin); 403 otherwise, 404 if it does not exist."""
    bot = get_bot(session, bot_id)
    if bot.owner_id != user.id and not is_admin(user):
        raise ApiError(403, f"bot {bot_id} belongs to another user")
    return bot


def _ensure_name_free(session: Session, game: str, name: str, exclude: uuid.UUID | None = None) -> None:
    query = select(Bot.id).where(Bot.game == game, Bot.name == name)
    if exclude is not None:
        query = query.where(Bot.id != exclude)
    if session.scalar(query) is not None:
        raise ApiError(409, f"name already taken: a {game} bot named {name!r} already exists")


def _commit(session: Session, game: str, name: str) -> None:
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise ApiError(409, f"name already taken: a {game} bot named {name!r} already exists") from None


# -- registration ---------------------------------------------------------------------------------


def register_http_bot(
    session: Session, settings: Settings, owner: User, name: str, game: str, endpoint: str, secret: str | None
) -> tuple[Bot, str, bool]:
    """Returns the bot, its plain secret and whether it is active (health-checked) already."""
    validate_game(game)
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
        origin=BotOrigin.HUMAN,
        endpoint=endpoint,
        secret_encrypted=encrypt_secret(settings, secret),
        status=BotStatus.ACTIVE if verified else BotStatus.INACTIVE,
    )
    session.add(bot)
    session.flush()
    version = BotVersion(bot_id=bot.id, number=1, notes={"endpoint": endpoint})
    session.add(version)
    session.flush()
    bot.current_version_id = version.id
    initial_rating(session, bot)
    _commit(session, game, name)
    log.info("registered http bot %s (%s) for %s", bot.id, game, owner.name)
    return bot, secret, verified


def register_hosted_bot(
    session: Session, settings: Settings, owner: User, name: str, game: str, source: str, contract: str
) -> Bot:
    validate_game(game)
    check_source(settings, source, contract)
    _ensure_name_free(session, game, name)
    bot = Bot(
        owner=owner,
        name=name,
        game=game,
        kind=BotKind.HOSTED,
        origin=BotOrigin.HUMAN,
        endpoint=None,
        secret_encrypted=encrypt_secret(settings, generate_secret()),
        status=BotStatus.ACTIVE,
    )
    session.add(bot)
    session.flush()
    version = _new_version(bot, 1, source, contract, {})
    session.add(version)
    session.flush()
    bot.current_version_id = version.id
    initial_rating(session, bot)
    _commit(session, game, name)
    log.info("registered hosted bot %s (%s, %s contract) for %s", bot.id, game, contract, owner.name)
    return bot


def _new_version(bot: Bot, number: int, source: str, contract: str, notes: dict[str, Any]) -> BotVersion:
    return BotVersion(
        bot_id=bot.id,
        number=number,
        source=source,
        contract=contract,
        source_sha256=hashlib.sha256(source.encode()).hexdigest(),
        notes=notes,
    )


def _next_number(session: Session, bot: Bot) -> int:
    return (session.scalar(select(func.max(BotVersion.number)).where(BotVersion.bot_id == bot.id)) or 0) + 1


def upload_version(
    session: Session, settings: Settings, bot: Bot, source: str, contract: str | None, notes: dict[str, Any]
) -> BotVersion:
    if bot.kind != BotKind.HOSTED:
        raise ApiError(409, "only hosted bots take code uploads; change an HTTP bot's endpoint with PATCH")
    current = session.get(BotVersion, bot.current_version_id) if bot.current_version_id else None
    contract = contract or (current.contract if current and current.contract else HostedContract.DECIDE)
    check_source(settings, source, contract)
    version = _new_version(bot, _next_number(session, bot), source, contract, notes)
    session.add(version)
    session.flush()
    bot.current_version_id = version.id
    rating_on_new_version(session, bot)
    session.commit()
    return version


# -- changes --------------------------------------------------------------------------------------


def update_bot(session: Session, settings: Settings, bot: Bot, name: str | None, endpoint: str | None) -> Bot:
    if name is not None and name != bot.name:
        _ensure_name_free(session, bot.game, name, exclude=bot.id)
        bot.name = name
    if endpoint is not None and endpoint != bot.endpoint:
        if bot.kind != BotKind.HTTP:
            raise ApiError(409, "hosted bots have no endpoint; upload a new version instead")
        if bot.status == BotStatus.ACTIVE:
            check_endpoint(settings, endpoint, _plain_secret(settings, bot), _grace_secrets(settings, bot))
        bot.endpoint = endpoint
        version = BotVersion(bot_id=bot.id, number=_next_number(session, bot), notes={"endpoint": endpoint})
        session.add(version)
        session.flush()
        bot.current_version_id = version.id
    _commit(session, bot.game, bot.name)
    return bot


def _plain_secret(settings: Settings, bot: Bot) -> str:
    return decrypt_secret(settings, bot.secret_encrypted)


def grace_ends_at(settings: Settings, bot: Bot) -> datetime | None:
    """When the previous secret stops being signed with; None when there is none."""
    if bot.previous_secret_encrypted is None or bot.secret_rotated_at is None:
        return None
    return bot.secret_rotated_at + timedelta(seconds=settings.secret_grace_s)


def _grace_secrets(settings: Settings, bot: Bot) -> tuple[str, ...]:
    ends = grace_ends_at(settings, bot)
    if ends is None or ends <= datetime.now(UTC):
        return ()
    try:
        return (decrypt_secret(settings, bot.previous_secret_encrypted or b""),)
    except SecretDecryptionError:
        return ()


def rotate_secret(session: Session, settings: Settings, bot: Bot) -> str:
    """A new secret; the current one becomes the previous one, still signed with for
    `settings.secret_grace_s` so the bot's server can be updated without failing its checks.
    Only one previous secret is kept: rotating twice ends the first one's grace at once."""
    secret = generate_secret()
    bot.previous_secret_encrypted = bot.secret_encrypted
    bot.secret_rotated_at = datetime.now(UTC)
    bot.secret_encrypted = encrypt_secret(settings, secret)
    session.commit()
    log.info("rotated the secret of bot %s", bot.id)
    return secret


def set_active(session: Session, settings: Settings, bot: Bot, active: bool) -> Bot:
    """Reactivating an HTTP bot re-runs its health check: a dead endpoint stays off the ladder.

    Reactivation also lifts a suspension and resets the health-failure counter.
    """
    if active and bot.kind == BotKind.HTTP and bot.endpoint:
        check_endpoint(settings, bot.endpoint, _plain_secret(settings, bot), _grace_secrets(settings, bot))
    bot.status = BotStatus.ACTIVE if active else BotStatus.INACTIVE
    bot.status_reason = None
    bot.suspended_at = None
    if active:
        bot.health_failures = 0
        bot.last_health_error = None
    session.commit()
    return bot


# -- listings -------------------------------------------------------------------------------------


def list_bots(
    session: Session, owner: User | None, game: str | None, status: str | None, limit: int, offset: int
) -> tuple[list[Bot], int]:
    query = select(Bot)
    if owner is not None:
        query = query.where(Bot.owner_id == owner.id)
    if game:
        query = query.where(Bot.game == game)
    if status:
        query = query.where(Bot.status == status)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(Bot.game, Bot.name).limit(limit).offset(offset)).all()
    return list(rows), total


def _version_numbers(session: Session, bots: list[Bot]) -> dict[uuid.UUID, int]:
    ids = [b.current_version_id for b in bots if b.current_version_id]
    if not ids:
        return {}
    return dict(session.execute(select(BotVersion.id, BotVersion.number).where(BotVersion.id.in_(ids))).all())


def _ratings(session: Session, bots: list[Bot]) -> dict[uuid.UUID, Rating]:
    if not bots:
        return {}
    rows = session.scalars(select(Rating).where(Rating.bot_id.in_([b.id for b in bots])))
    return {r.bot_id: r for r in rows}


def bot_views(session: Session, bots: list[Bot], settings: Settings | None = None) -> list[BotOut]:
    numbers, ratings = _version_numbers(session, bots), _ratings(session, bots)
    owners = _owner_names(session, bots)
    return [
        BotOut(
            id=b.id,
            name=b.name,
            game=b.game,
            kind=b.kind,
            origin=b.origin,
            status=b.status,
            endpoint=b.endpoint,
            owner_id=b.owner_id,
            owner_name=owners.get(b.owner_id, "?"),
            current_version=numbers.get(b.current_version_id) if b.current_version_id else None,
            rating=RatingOut.model_validate(ratings[b.id]) if b.id in ratings else None,
            created_at=b.created_at,
            updated_at=b.updated_at,
            last_match_at=b.last_match_at,
            status_reason=b.status_reason,
            suspended_at=b.suspended_at,
            health_failures=b.health_failures or 0,
            last_health_check_at=b.last_health_check_at,
            last_health_error=b.last_health_error,
            previous_secret_valid_until=grace_ends_at(settings, b) if settings else None,
        )
        for b in bots
    ]


def public_views(session: Session, bots: list[Bot]) -> list[PublicBot]:
    return [
        PublicBot(**view.model_dump(include=set(PublicBot.model_fields))) for view in bot_views(session, bots)
    ]


def _owner_names(session: Session, bots: list[Bot]) -> dict[uuid.UUID, str]:
    ids = {b.owner_id for b in bots}
    if not ids:
        return {}
    return dict(session.execute(select(User.id, User.name).where(User.id.in_(ids))).all())


def versions(session: Session, bot: Bot) -> list[VersionOut]:
    rows = session.scalars(select(BotVersion).where(BotVersion.bot_id == bot.id).order_by(BotVersion.number))
    return [version_view(bot, v) for v in rows]


def version_view(bot: Bot, version: BotVersion, with_source: bool = False) -> VersionDetail:
    return VersionDetail(
        id=version.id,
        number=version.number,
        contract=version.contract,
        source_sha256=version.source_sha256,
        source_chars=len(version.source) if version.source is not None else None,
        notes=version.notes or {},
        created_at=version.created_at,
        current=version.id == bot.current_version_id,
        source=version.source if with_source else None,
    )


def get_version(session: Session, bot: Bot, number: int) -> BotVersion:
    version = session.scalar(
        select(BotVersion).where(BotVersion.bot_id == bot.id, BotVersion.number == number)
    )
    if version is None:
        raise not_found(f"version {number} of bot {bot.id}")
    return version
