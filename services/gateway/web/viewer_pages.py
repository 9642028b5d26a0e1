"""The replay viewer's pages: `/matches/{id}` (a stored match, or a running one played live) and
`/view` (a replay file: dropped into the page or named by `?src=`). The pages only say where the
replay comes from; static/viewer/*.js fetches it and draws it.

An evolution run's evaluation match is its owner's and admins' only (shared.matches.visible_to): a
page has no session, so only a request that carries the owner's or an admin's API key (as the API
takes it) gets its viewer; everyone else gets the page of a match that does not exist."""

from __future__ import annotations

import uuid

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from services.gateway.deps import DbSession, MaybeUser
from services.gateway.matches.service import API_PREFIX, match_views
from services.gateway.web.templating import render
from services.gateway.web.viewer_context import viewer_context
from shared.matches import get_visible_match

router = APIRouter(include_in_schema=False)


def _missing_match(request: Request, raw_id: str) -> Response:
    message = f"There is no match {raw_id[:64]!r}."
    return render(
        request, "error_page.html", {"title": "Match not found", "message": message}, status_code=404
    )


@router.get("/matches/{match_id}", response_class=HTMLResponse)
def match_page(match_id: str, request: Request, session: DbSession, viewer: MaybeUser) -> Response:
    """The viewer for one match; `?t=N` opens at frame N (read by the page's script)."""
    try:
        parsed = uuid.UUID(match_id)
    except ValueError:
        return _missing_match(request, match_id)
    match = get_visible_match(session, viewer, parsed)
    if match is None:
        return _missing_match(request, match_id)
    view = match_views(session, [match], None)[0]
    root = request.scope.get("root_path", "")
    replay = f"{root}{API_PREFIX}/matches/{match.id}/replay"
    names = " vs ".join(p.bot_name for p in sorted(view.participants, key=lambda p: p.slot))
    context = viewer_context(
        request,
        title=f"{view.game}: {names}" if names else f"{view.game} match",
        mode="match",
        match=view,
        replay_url=replay,
        download_url=f"{replay}?compressed=1",
    )
    return render(request, "match.html", context)


@router.get("/view", response_class=HTMLResponse)
def view_page(request: Request) -> Response:
    """The viewer with no match: drop a replay file, or `?src=/path/replay.json` on this server."""
    return render(request, "match.html", viewer_context(request))
