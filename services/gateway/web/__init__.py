"""The gateway's HTML side: pages rendered from Jinja2 templates (`templates/`), their static files
(`static/`, served at `/static`) and the interactive API docs (`/docs`, `/redoc`) served without any
CDN. `install_web` wires all of it into an app."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI


def install_web(app: FastAPI) -> None:
    """Imported on use: `arena view` (web.standalone) needs the templates and static files but not
    the pages' database and queue modules, which want the gateway's settings."""
    from services.gateway.web.site import install_web as install

    install(app)


__all__ = ["install_web"]
