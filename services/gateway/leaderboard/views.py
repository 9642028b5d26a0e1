"""Leaderboard API: public, one board per game."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from services.gateway.bots.service import validate_game
from services.gateway.deps import DbSession
from services.gateway.leaderboard import service
from services.gateway.leaderboard.schemas import Leaderboard
from services.gateway.pagination import Pagination

router = APIRouter(prefix="/leaderboard", tags=["leaderboard"])


@router.get("/{game}", response_model=Leaderboard)
def leaderboard(
    game: Annotated[str, Path(max_length=32)],
    session: DbSession,
    page: Pagination,
    include_inactive: Annotated[bool, Query(description="also list deactivated bots")] = False,
) -> Leaderboard:
    """Bots ranked by mu - 3 sigma (a bot must prove itself over several matches to rank high)."""
    validate_game(game, 404)
    return service.leaderboard(session, game, include_inactive, page.limit, page.offset)
