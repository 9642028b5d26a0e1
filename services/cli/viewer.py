"""`arena view`: the gateway's replay viewer for one replay file, served on a local port.

The app is services/gateway/web/standalone.py (the viewer at `/`, the replay at `/replay.json`);
this module binds the socket itself so that port 0 (any free port) still prints the real URL.
"""

from __future__ import annotations

import os
import socket
import sys
import webbrowser
from pathlib import Path

from services.cli.errors import CliError
from services.cli.replay_files import read_replay


def graphical_session() -> bool:
    """Whether opening a browser makes sense here (never a text browser taking over a terminal)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(64)
    return sock


def serve_replay(path: Path, *, host: str, port: int, open_browser: bool) -> None:
    """Serve the viewer for `path` until interrupted; prints the URL first."""
    replay = read_replay(path)  # refuse a file that is no replay before starting anything
    try:
        import uvicorn

        from services.gateway.web.standalone import standalone_viewer_app
    except ImportError as exc:
        raise CliError(
            f"arena view needs the gateway's packages ({exc.name or exc}): pip install 'arena[gateway]'"
        ) from None
    app = standalone_viewer_app(path.resolve())
    sock = _bind(host, port)
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{bound_port}/"
    frames = len(replay.get("frames", []))
    print(f"viewer for {path} ({replay.get('game')}, {frames} frames): {url}", flush=True)
    print("press Ctrl+C to stop", flush=True)
    if open_browser:
        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
