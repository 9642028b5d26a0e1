"""The HTML front page: leaderboards and recent matches with replay links. Everything on it is also
in the JSON API; this is for people who open the gateway in a browser."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from services.gateway.deps import DbSession
from services.gateway.leaderboard.service import leaderboard
from services.gateway.matches.service import list_matches, match_views
from services.gateway.web.templating import render
from shared.games.registry import game_names

router = APIRouter(include_in_schema=False)

LEADERBOARD_ROWS = 20
RECENT_MATCHES = 25


@router.get("/", response_class=HTMLResponse)
def index(request: Request, session: DbSession) -> Response:
    boards = [
        leaderboard(session, game, include_inactive=False, limit=LEADERBOARD_ROWS, offset=0)
        for game in game_names()
    ]
    matches, _ = list_matches(session, None, None, None, None, RECENT_MATCHES, 0)
    return render(request, "index.html", {"boards": boards, "matches": match_views(session, matches, None)})
