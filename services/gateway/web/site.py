"""Wires the HTML side into the gateway app."""

from __future__ import annotations

from fastapi import FastAPI

from services.gateway.web.assets import DOCS_ASSETS, SITE_ASSETS
from services.gateway.web.docs import install_docs
from services.gateway.web.viewer_pages import router as viewer_router
from services.gateway.web.views import router


def install_web(app: FastAPI) -> None:
    """Pages, their static files and the offline API docs. The docs assets are mounted before
    `/static`, which would otherwise swallow `/static/docs/...` and answer 404."""
    for assets in (DOCS_ASSETS, SITE_ASSETS):
        app.mount(assets.prefix, assets.files, name=assets.name)
    install_docs(app)
    app.include_router(router)
    app.include_router(viewer_router)
