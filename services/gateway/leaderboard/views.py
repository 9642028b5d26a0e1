"""Leaderboard API: public, one board per game."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from services.gateway.deps import DbSession
from services.gateway.errors import ApiError
from services.gateway.leaderboard import service
from services.gateway.leaderboard.schemas import Leaderboard
from services.gateway.openapi import INVALID_PARAMS, not_found, responses
from services.gateway.pagination import Pagination
from shared.bots import UnknownGame, check_game

router = APIRouter(prefix="/leaderboard", tags=["leaderboard"])


@router.get(
    "/{game}",
    response_model=Leaderboard,
    summary="Show a game's leaderboard",
    responses=responses(not_found("No game has this name."), INVALID_PARAMS),
)
def leaderboard(
    game: Annotated[str, Path(max_length=32)],
    session: DbSession,
    page: Pagination,
    include_inactive: Annotated[bool, Query(description="also list deactivated bots")] = False,
) -> Leaderboard:
    """Bots ranked by mu - 3 sigma (a bot must prove itself over several matches to rank high)."""
    try:
        check_game(game)
    except UnknownGame as exc:
        raise ApiError(404, exc.message) from None  # a path that names no game is not found
    return service.leaderboard(session, game, include_inactive, page.limit, page.offset)
