"""Swagger UI (`/docs`) and ReDoc (`/redoc`) with every script, stylesheet and icon served by the
gateway itself. FastAPI's own pages load them from a CDN and stay blank without internet; these are
built with FastAPI's public helpers, pointed at the assets of the `fastapi-offline` package.

Swagger UI's online validator badge (an image from validator.swagger.io) and ReDoc's Google fonts
are switched off too, and ReDoc's bundle is sent with its vendor's logo (from cdn.redoc.ly, which
no option turns off) replaced by an empty image (assets.DOCS_PATCHES). Both pages also carry a
Content-Security-Policy that lets them load from the gateway only, so whatever a later version of
either might ask of another host is dropped before it reaches the network."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from starlette.requests import Request
from starlette.responses import HTMLResponse

from services.gateway.web.assets import DOCS_ASSET_FILES, DOCS_ASSETS, SITE_ASSETS

DOCS_URL = "/docs"
REDOC_URL = "/redoc"
FAVICON = "favicon.svg"
DOCS_CSP = "; ".join(
    [
        "default-src 'self'",
        # Swagger UI is started by an inline script; both UIs inject inline styles.
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "frame-ancestors 'self'",
    ]
)


def install_docs(app: FastAPI) -> None:
    """Add the docs pages to an app created with `docs_url=None, redoc_url=None`."""
    if app.docs_url is not None or app.redoc_url is not None:
        raise RuntimeError("create the app with docs_url=None, redoc_url=None: its docs load a CDN")
    missing = [name for name in DOCS_ASSET_FILES if not DOCS_ASSETS.has(name)]
    if missing:
        raise RuntimeError(f"the fastapi-offline package lacks {', '.join(missing)}; reinstall it")
    openapi_url = app.openapi_url
    if openapi_url is None:
        return
    oauth2_redirect_url = app.swagger_ui_oauth2_redirect_url

    def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=DOCS_ASSETS.url(request, "swagger-ui-bundle.js"),
            swagger_css_url=DOCS_ASSETS.url(request, "swagger-ui.css"),
            swagger_favicon_url=SITE_ASSETS.url(request, FAVICON),
            oauth2_redirect_url=root + oauth2_redirect_url if oauth2_redirect_url else None,
            init_oauth=app.swagger_ui_init_oauth,
            swagger_ui_parameters={**(app.swagger_ui_parameters or {}), "validatorUrl": None},
        )
        page.headers["Content-Security-Policy"] = DOCS_CSP
        return page

    def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=DOCS_ASSETS.url(request, "redoc.standalone.js"),
            redoc_favicon_url=SITE_ASSETS.url(request, FAVICON),
            with_google_fonts=False,
        )
        page.headers["Content-Security-Policy"] = DOCS_CSP
        return page

    app.add_api_route(DOCS_URL, swagger_ui, methods=["GET"], include_in_schema=False)
    if oauth2_redirect_url:
        app.add_api_route(
            oauth2_redirect_url,
            get_swagger_ui_oauth2_redirect_html,
            methods=["GET"],
            include_in_schema=False,
        )
    app.add_api_route(REDOC_URL, redoc, methods=["GET"], include_in_schema=False)
