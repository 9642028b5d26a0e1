"""The gateway's HTML side: pages rendered from Jinja2 templates (`templates/`), their static files
(`static/`, served at `/static`) and the interactive API docs (`/docs`, `/redoc`) served without any
CDN. `install_web` wires all of it into an app."""

from services.gateway.web.site import install_web

__all__ = ["install_web"]
