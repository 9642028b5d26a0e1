"""The per-game leaderboard, ordered by ordinal (mu - 3 sigma) descending."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from services.gateway.leaderboard.schemas import Leaderboard, LeaderboardEntry
from shared.db.models import Bot, Rating, User
from shared.states import BotStatus


def leaderboard(session: Session, game: str, include_inactive: bool, limit: int, offset: int) -> Leaderboard:
    query = (
        select(Rating, Bot.name, Bot.kind, Bot.origin, Bot.status, User.name)
        .join(Bot, Bot.id == Rating.bot_id)
        .join(User, User.id == Bot.owner_id)
        .where(Rating.game == game)
    )
    if not include_inactive:
        query = query.where(Bot.status == BotStatus.ACTIVE)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.execute(
        query.order_by(Rating.ordinal.desc(), Rating.mu.desc(), Bot.name).limit(limit).offset(offset)
    ).all()
    entries = [
        LeaderboardEntry(
            rank=offset + index + 1,
            bot_id=rating.bot_id,
            bot_name=bot_name,
            owner_name=owner_name,
            kind=kind,
            origin=origin,
            status=status,
            ordinal=rating.ordinal,
            mu=rating.mu,
            sigma=rating.sigma,
            matches=rating.matches_played,
            wins=rating.wins,
            draws=rating.draws,
            losses=rating.losses,
        )
        for index, (rating, bot_name, kind, origin, status, owner_name) in enumerate(rows)
    ]
    return Leaderboard(game=game, total=total, entries=entries)
