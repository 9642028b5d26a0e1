"""What the viewer template (match.html) needs, shared by the gateway's pages and the standalone
viewer of `arena view`; kept free of database and queue imports for the latter."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from services.gateway.web.assets import SITE_ASSETS
from shared.games.registry import game_names


def renderer_urls(request: Request) -> dict[str, str]:
    """Fingerprinted URLs of the renderer modules that exist (static/viewer/<game>.js)."""
    return {
        game: SITE_ASSETS.url(request, f"viewer/{game}.js")
        for game in game_names()
        if SITE_ASSETS.has(f"viewer/{game}.js")
    }


def viewer_context(request: Request, **values: Any) -> dict[str, Any]:
    """What match.html needs; `values` overrides the defaults (a viewer with no match)."""
    context: dict[str, Any] = {
        "title": "Replay viewer",
        "mode": "file",
        "match": None,
        "replay_url": None,
        "download_url": None,
        "standalone": False,
        "renderers": renderer_urls(request),
    }
    context.update(values)
    return context
