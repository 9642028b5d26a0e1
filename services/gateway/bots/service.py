"""The gateway's read side of bots: listings and the API's views of bots and versions.

Everything that changes a bot (registration, versions, activation, secrets, renames) and the
ownership check live in shared.bots, so workers and the API share them.
"""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.gateway.bots.schemas import BotOut, PublicBot, RatingOut, VersionDetail, VersionOut
from services.gateway.errors import not_found
from shared.bots import grace_ends_at, publicly_listed
from shared.config import Settings
from shared.db.models import Bot, BotVersion, Rating, User

# -- listings -------------------------------------------------------------------------------------


def list_bots(
    session: Session,
    owner: User | None,
    game: str | None,
    status: str | None,
    limit: int,
    offset: int,
    name: str | None = None,
) -> tuple[list[Bot], int]:
    query = select(Bot).where(Bot.owner_id == owner.id if owner is not None else publicly_listed())
    if game:
        query = query.where(Bot.game == game)
    if name:
        query = query.where(Bot.name == name)
    if status:
        query = query.where(Bot.status == status)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(Bot.game, Bot.name).limit(limit).offset(offset)).all()
    return list(rows), total


def _version_numbers(session: Session, bots: list[Bot]) -> dict[uuid.UUID, int]:
    ids = [b.current_version_id for b in bots if b.current_version_id]
    if not ids:
        return {}
    query = select(BotVersion.id, BotVersion.number).where(BotVersion.id.in_(ids))
    return dict(session.execute(query).tuples().all())


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
    return dict(session.execute(select(User.id, User.name).where(User.id.in_(ids))).tuples().all())


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
