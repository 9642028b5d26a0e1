"""Leaderboard API: public, one board per game, served from the process's short-lived page cache
(services.gateway.leaderboard.cache)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from services.gateway.errors import ApiError
from services.gateway.leaderboard import service
from services.gateway.leaderboard.cache import LeaderboardCache, PageKey
from services.gateway.leaderboard.schemas import Leaderboard
from services.gateway.openapi import INVALID_PARAMS, not_found, responses
from services.gateway.pagination import Pagination
from shared.bots import UnknownGame, check_game
from shared.db.session import get_sessionmaker

router = APIRouter(prefix="/leaderboard", tags=["leaderboard"])


def page_cache(request: Request) -> LeaderboardCache:
    """The app's cache (create_app makes one); a fresh uncached one for an app that has none."""
    cache: LeaderboardCache | None = getattr(request.app.state, "leaderboard_cache", None)
    if cache is None:
        cache = request.app.state.leaderboard_cache = LeaderboardCache(0)
    return cache


def build_page(key: PageKey) -> bytes:
    """One page as JSON, read in one short session (on a worker thread)."""
    with get_sessionmaker()() as session:
        board = service.leaderboard(session, key.game, key.include_inactive, key.limit, key.offset)
    return board.model_dump_json().encode()


@router.get(
    "/{game}",
    response_model=Leaderboard,
    summary="Show a game's leaderboard",
    responses=responses(not_found("No game has this name."), INVALID_PARAMS),
)
async def leaderboard(
    request: Request,
    game: Annotated[str, Path(max_length=32)],
    page: Pagination,
    include_inactive: Annotated[bool, Query(description="also list deactivated bots")] = False,
) -> Response:
    """Bots ranked by mu - 3 sigma (a bot must prove itself over several matches to rank high).
    Built at most once every few seconds per page (ARENA_LEADERBOARD_CACHE_S) and at once after a
    rated match."""
    try:
        check_game(game)
    except UnknownGame as exc:
        raise ApiError(404, exc.message) from None  # a path that names no game is not found
    key = PageKey(game, include_inactive, page.limit, page.offset)
    body = await page_cache(request).page(key, lambda: run_in_threadpool(build_page, key))
    return Response(body, media_type="application/json")
