"""Bots API: register HTTP and hosted bots, manage them, upload versions, list the fleet."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, status

from services.gateway.bots import service
from services.gateway.bots.schemas import (
    BotCreated,
    BotOut,
    BotUpdate,
    HostedBotCreate,
    HttpBotCreate,
    PublicBot,
    SecretRotated,
    VersionCreate,
    VersionDetail,
    VersionOut,
)
from services.gateway.bounds import VersionNumber
from services.gateway.deps import CurrentUser, DbSession, SettingsDep, is_admin
from services.gateway.openapi import (
    BOT_NAME_TAKEN,
    BOT_QUOTA,
    ENDPOINT_CHECK,
    HOSTED_SOURCE,
    INVALID_PARAMS,
    JSON_BODY,
    KEY_REQUIRED,
    OWNED_BOT,
    UNKNOWN_GAME,
    UPLOAD_QUOTA,
    error,
    not_found,
    responses,
)
from services.gateway.pagination import Page, Pagination
from shared import bots, quotas
from shared.states import BotStatus

router = APIRouter(prefix="/bots", tags=["bots"])

GameFilter = Annotated[str | None, Query(max_length=32, description="only bots of this game")]
StatusFilter = Annotated[BotStatus | None, Query(description="only bots in this status")]
NameFilter = Annotated[
    str | None,
    Query(max_length=64, description="only the bot of this name (names are unique within a game)"),
]


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=BotCreated,
    summary="Register an HTTP bot",
    responses=responses(KEY_REQUIRED, JSON_BODY, BOT_NAME_TAKEN, UNKNOWN_GAME, ENDPOINT_CHECK, BOT_QUOTA),
)
def register_http_bot(
    body: HttpBotCreate, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> BotCreated:
    """Register a bot that runs behind an HTTP endpoint. The secret is returned once, here."""
    quotas.check_new_bot(session, settings, user)
    bot, secret, verified = bots.register_http_bot(
        session, settings, user, name=body.name, game=body.game, endpoint=body.endpoint, secret=body.secret
    )
    next_step = None
    if not verified:
        next_step = (
            f"configure your bot with this secret, then POST /api/v1/bots/{bot.id}/reactivate: "
            "the signed health check runs then and the bot joins the ladder"
        )
    view = service.bot_views(session, [bot], settings)[0]
    return BotCreated(**view.model_dump(), secret=secret, next_step=next_step)


@router.post(
    "/hosted",
    status_code=status.HTTP_201_CREATED,
    response_model=BotOut,
    summary="Register a hosted bot",
    responses=responses(KEY_REQUIRED, JSON_BODY, BOT_NAME_TAKEN, UNKNOWN_GAME, HOSTED_SOURCE, BOT_QUOTA),
)
def register_hosted_bot(
    body: HostedBotCreate, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> BotOut:
    """Upload a Python bot that the platform runs in a sandbox. Problems come back with line numbers."""
    quotas.check_new_bot(session, settings, user)
    bot = bots.register_hosted_bot(
        session, settings, user, name=body.name, game=body.game, source=body.source, contract=body.contract
    )
    return service.bot_views(session, [bot], settings)[0]


@router.get(
    "",
    response_model=Page[BotOut],
    summary="List my bots",
    responses=responses(KEY_REQUIRED, INVALID_PARAMS),
)
def list_bots(
    user: CurrentUser,
    session: DbSession,
    settings: SettingsDep,
    page: Pagination,
    game: GameFilter = None,
    status: StatusFilter = None,
    name: NameFilter = None,
) -> Page[BotOut]:
    """Your bots (every bot for an admin)."""
    owner = None if is_admin(user) else user
    rows, total = service.list_bots(session, owner, game, status, page.limit, page.offset, name)
    views = service.bot_views(session, rows, settings)
    return Page(items=views, total=total, limit=page.limit, offset=page.offset)


@router.get("/public", response_model=Page[PublicBot], summary="List all bots", responses=INVALID_PARAMS)
def public_bots(
    session: DbSession,
    page: Pagination,
    game: GameFilter = None,
    status: StatusFilter = None,
    name: NameFilter = None,
) -> Page[PublicBot]:
    """Every bot on the platform, without endpoints or secrets. No key needed."""
    rows, total = service.list_bots(session, None, game, status, page.limit, page.offset, name)
    return Page(items=service.public_views(session, rows), total=total, limit=page.limit, offset=page.offset)


@router.get(
    "/{bot_id}",
    response_model=BotOut,
    summary="Show one of my bots",
    responses=responses(KEY_REQUIRED, OWNED_BOT, INVALID_PARAMS),
)
def get_bot(bot_id: uuid.UUID, user: CurrentUser, session: DbSession, settings: SettingsDep) -> BotOut:
    """One of your bots, with its health: a suspended bot's reason and time are here."""
    return service.bot_views(session, [bots.get_owned_bot(session, user, bot_id)], settings)[0]


@router.patch(
    "/{bot_id}",
    response_model=BotOut,
    summary="Rename a bot or move its endpoint",
    responses=responses(
        KEY_REQUIRED,
        OWNED_BOT,
        JSON_BODY,
        BOT_NAME_TAKEN,
        {409: error("A new endpoint was given for a hosted bot (upload a version instead).")},
        ENDPOINT_CHECK,
    ),
)
def update_bot(
    bot_id: uuid.UUID, body: BotUpdate, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> BotOut:
    """Rename a bot or move its endpoint; a new endpoint must pass the health check first."""
    bot = bots.get_owned_bot(session, user, bot_id)
    bots.update_bot(session, settings, bot, name=body.name, endpoint=body.endpoint)
    return service.bot_views(session, [bot], settings)[0]


@router.post(
    "/{bot_id}/rotate-secret",
    response_model=SecretRotated,
    summary="Rotate a bot's signing secret",
    responses=responses(KEY_REQUIRED, OWNED_BOT, INVALID_PARAMS),
)
def rotate_secret(
    bot_id: uuid.UUID, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> SecretRotated:
    """Replace the signing secret; the new one is returned once. The runner signs with both the new
    and the old secret for ARENA_SECRET_GRACE_S (24 h by default), so update the bot's server within
    that window; rotating again ends the old secret's window at once."""
    bot = bots.get_owned_bot(session, user, bot_id)
    return SecretRotated(bot_id=bot.id, secret=bots.rotate_secret(session, settings, bot))


@router.post(
    "/{bot_id}/deactivate",
    response_model=BotOut,
    summary="Take a bot off the ladder",
    responses=responses(KEY_REQUIRED, OWNED_BOT, INVALID_PARAMS),
)
def deactivate(bot_id: uuid.UUID, user: CurrentUser, session: DbSession, settings: SettingsDep) -> BotOut:
    """Take the bot off the ladder; it keeps its rating and history."""
    bot = bots.deactivate(session, bots.get_owned_bot(session, user, bot_id))
    return service.bot_views(session, [bot], settings)[0]


@router.post(
    "/{bot_id}/reactivate",
    response_model=BotOut,
    summary="Put a bot back on the ladder",
    responses=responses(KEY_REQUIRED, OWNED_BOT, INVALID_PARAMS, ENDPOINT_CHECK),
)
def reactivate(bot_id: uuid.UUID, user: CurrentUser, session: DbSession, settings: SettingsDep) -> BotOut:
    """Put the bot back on the ladder, also after a suspension (HTTP bots must pass the health check
    again); resets the count of failed health checks."""
    bot = bots.reactivate(session, settings, bots.get_owned_bot(session, user, bot_id))
    return service.bot_views(session, [bot], settings)[0]


@router.post(
    "/{bot_id}/versions",
    status_code=status.HTTP_201_CREATED,
    response_model=VersionOut,
    summary="Upload a new version of a hosted bot",
    responses=responses(
        KEY_REQUIRED,
        OWNED_BOT,
        JSON_BODY,
        {409: error("The bot is an HTTP bot: change its endpoint with PATCH instead.")},
        HOSTED_SOURCE,
        UPLOAD_QUOTA,
    ),
)
def upload_version(
    bot_id: uuid.UUID, body: VersionCreate, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> VersionOut:
    """Upload new code for a hosted bot. It becomes the current version; older ones are kept."""
    bot = bots.get_owned_bot(session, user, bot_id)
    quotas.check_new_version(session, settings, user)
    version = bots.add_version(
        session, settings, bot, source=body.source, contract=body.contract, notes=body.notes
    )
    return VersionOut(**service.version_view(bot, version).model_dump(exclude={"source"}))


@router.get(
    "/{bot_id}/versions",
    response_model=list[VersionOut],
    summary="List a bot's versions",
    responses=responses(KEY_REQUIRED, OWNED_BOT, INVALID_PARAMS),
)
def list_versions(bot_id: uuid.UUID, user: CurrentUser, session: DbSession) -> list[VersionOut]:
    """Every version of the bot, oldest first, without sources (owner or admin only)."""
    bot = bots.get_owned_bot(session, user, bot_id)
    return [VersionOut(**v.model_dump(exclude={"source"})) for v in service.versions(session, bot)]


@router.get(
    "/{bot_id}/versions/{number}",
    response_model=VersionDetail,
    summary="Show a bot version with its source",
    responses=responses(
        KEY_REQUIRED, OWNED_BOT, not_found("The bot has no version with this number."), INVALID_PARAMS
    ),
)
def get_version(
    bot_id: uuid.UUID, number: VersionNumber, user: CurrentUser, session: DbSession
) -> VersionDetail:
    """One version with its source (owner or admin only)."""
    bot = bots.get_owned_bot(session, user, bot_id)
    return service.version_view(bot, service.get_version(session, bot, number), with_source=True)
