"""The replay viewer for one replay file, without a database or anything else of the gateway:
what `arena view FILE` serves on a local port. The page is the gateway's own viewer (same template
and static files); the replay is at `/replay.json`, read from disk on each request, so a file
written again (another `arena play`) shows on reload."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from services.gateway.web.assets import SITE_ASSETS
from services.gateway.web.templating import render
from services.gateway.web.viewer_context import viewer_context

REPLAY_PATH = "/replay.json"
GZIP_MAGIC = b"\x1f\x8b"


def replay_response(replay_path: Path) -> Response:
    """The file as JSON; a gzipped file (the API's download) is sent as is, gzip-encoded."""
    try:
        data = replay_path.read_bytes()
    except OSError as exc:
        return JSONResponse({"detail": f"cannot read the replay file: {exc.strerror}"}, status_code=404)
    headers = {"Cache-Control": "no-cache"}
    if data.startswith(GZIP_MAGIC):
        headers["Content-Encoding"] = "gzip"
    return Response(data, media_type="application/json", headers=headers)


def standalone_viewer_app(replay_path: Path) -> FastAPI:
    """A small app serving the viewer at `/` for `replay_path` (replay at `/replay.json`)."""
    path = Path(replay_path)
    app = FastAPI(title="Arena replay viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount(SITE_ASSETS.prefix, SITE_ASSETS.files, name=SITE_ASSETS.name)

    @app.get("/", response_class=HTMLResponse)
    def viewer(request: Request) -> Response:
        context = viewer_context(
            request,
            title=path.name,
            replay_url=REPLAY_PATH,
            download_url=REPLAY_PATH,
            standalone=True,
        )
        return render(request, "match.html", context)

    @app.get(REPLAY_PATH)
    def replay() -> Response:
        return replay_response(path)

    return app
