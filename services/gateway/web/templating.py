"""The Jinja2 environment every page renders with: autoescaping always on (names and other text
that users choose end up in pages), undefined names are errors rather than blanks, and templates
can link to static files by fingerprinted URL (`asset_url('arena.css')`)."""

from __future__ import annotations

from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from services.gateway.web.assets import SITE_ASSETS

NAV_LINKS: list[tuple[str, str]] = [
    ("/", "Arena"),
    ("/games/podracing", "Podracing"),
    ("/games/battle", "Battle"),
    ("/training", "Training"),
    ("/evolution", "Evolution"),
    ("/docs", "API docs"),
    ("/redoc", "API reference"),
    ("/metrics", "Metrics"),
]
"""The base layout's navigation (path below the app's root, label); new pages add themselves here."""


@jinja2.pass_context
def asset_url(context: jinja2.runtime.Context, path: str) -> str:
    request: Request = context["request"]
    return SITE_ASSETS.url(request, path)


def _page_context(request: Request) -> dict[str, Any]:
    """What the base layout needs on every page: where the app is mounted and which page is open."""
    return {"root_path": request.scope.get("root_path", ""), "current_path": request.url.path}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("services.gateway.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["asset_url"] = asset_url
    env.globals["nav_links"] = NAV_LINKS
    return env


templates = Jinja2Templates(env=_environment(), context_processors=[_page_context])

PAGE_CSP = "; ".join(
    [
        "default-src 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ]
)
"""Pages load only the gateway's own files and run no inline script: even markup that slipped past
escaping could not run or fetch anything."""


def render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> Response:
    return templates.TemplateResponse(
        request, name, context, status_code=status_code, headers={"Content-Security-Policy": PAGE_CSP}
    )
