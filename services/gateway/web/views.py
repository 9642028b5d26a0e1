"""The HTML pages: the front page, a page per bot and a page per game, and the training and
evolution pages. Everything on them is also in the JSON API; these are for people who open the
gateway in a browser.

Path and query values are parsed here, by hand, so that a bad one gets a readable HTML page (404
for an id or name that names nothing, 400 for a bad page number) instead of the API's JSON error.
"""

from __future__ import annotations

import gzip
import uuid

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from services.gateway.deps import DbSession
from services.gateway.matches.views import accepts_gzip
from services.gateway.web.pages import evolution as evolution_pages
from services.gateway.web.pages.bot import MAX_PAGE, bot_page
from services.gateway.web.pages.front import front_page
from services.gateway.web.pages.game import game_page, sample_replay
from services.gateway.web.pages.training import run_page
from services.gateway.web.templating import render
from services.gateway.web.viewer_context import renderer_urls

router = APIRouter(include_in_schema=False)


def error_page(request: Request, status_code: int, title: str, message: str) -> Response:
    """A page that says what went wrong, with the status code a client can act on."""
    return render(request, "error_page.html", {"title": title, "message": message}, status_code=status_code)


def not_found_page(request: Request, what: str) -> Response:
    return error_page(request, 404, "Not found", f"There is no {what}.")


@router.get("/", response_class=HTMLResponse)
def index(request: Request, session: DbSession) -> Response:
    page = front_page(session)
    return render(request, "index.html", {"boards": page.boards, "live": page.live, "matches": page.recent})


def _page_number(raw: str | None) -> int | None:
    if raw is None:
        return 1
    if not (raw.isascii() and raw.isdigit() and len(raw) <= len(str(MAX_PAGE))):
        return None
    return int(raw) if 1 <= int(raw) <= MAX_PAGE else None


@router.get("/bots/{bot_id}", response_class=HTMLResponse)
def bot(request: Request, bot_id: str, session: DbSession, page: str | None = None) -> Response:
    try:
        parsed = uuid.UUID(bot_id)
    except ValueError:
        return not_found_page(request, f"bot {bot_id!r}: a bot id is a UUID")
    number = _page_number(page)
    if number is None:
        return error_page(
            request, 400, "Bad page number", f"page must be a whole number from 1 to {MAX_PAGE}."
        )
    data = bot_page(session, parsed, number)
    if data is None:
        return not_found_page(request, f"bot {parsed}")
    return render(request, "bot.html", {"page": data})


@router.get("/games/{name}", response_class=HTMLResponse)
def game(request: Request, name: str, session: DbSession) -> Response:
    data = game_page(session, name)
    if data is None:
        return not_found_page(request, f"game {name!r}")
    return render(request, "game.html", {"page": data, "renderers": renderer_urls(request)})


@router.get("/games/{name}/sample-replay")
def game_sample_replay(request: Request, name: str) -> Response:
    """The replay of the game page's sample match (JSON; gzip-encoded for clients that take it)."""
    blob = sample_replay(name)
    if blob is None:
        return JSONResponse({"detail": f"There is no game {name[:64]!r}."}, status_code=404)
    headers = {"Vary": "Accept-Encoding", "Cache-Control": "public, max-age=3600"}
    if accepts_gzip(request.headers.get("accept-encoding", "")):
        return Response(blob, media_type="application/json", headers={**headers, "Content-Encoding": "gzip"})
    return Response(gzip.decompress(blob), media_type="application/json", headers=headers)


@router.get("/training", response_class=HTMLResponse)
def training_runs(request: Request) -> Response:
    """The caller's training runs: listed in the browser with the caller's API key."""
    return render(request, "training_list.html", {})


@router.get("/training/{run_id}", response_class=HTMLResponse)
def training_run(request: Request, run_id: str, session: DbSession) -> Response:
    try:
        parsed = uuid.UUID(run_id)
    except ValueError:
        return not_found_page(request, f"training run {run_id[:64]!r}: a run id is a UUID")
    data = run_page(session, parsed)
    if data is None:
        return not_found_page(request, f"training run {parsed}")
    return render(request, "training.html", {"page": data, "renderers": renderer_urls(request)})


@router.get("/evolution", response_class=HTMLResponse)
def evolution_runs(request: Request) -> Response:
    """The caller's evolution runs: listed in the browser with the caller's API key."""
    return render(request, "evolution_list.html", {"games": evolution_pages.games()})


@router.get("/evolution/{run_id}", response_class=HTMLResponse)
def evolution_run(request: Request, run_id: str, session: DbSession) -> Response:
    try:
        parsed = uuid.UUID(run_id)
    except ValueError:
        return not_found_page(request, f"evolution run {run_id[:64]!r}: a run id is a UUID")
    data = evolution_pages.run_page(session, parsed)
    if data is None:
        return not_found_page(request, f"evolution run {parsed}")
    return render(request, "evolution.html", {"page": data})
