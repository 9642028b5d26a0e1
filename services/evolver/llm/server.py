"""A local OpenAI-compatible server for the built-in root and child, so the evolver (or any
OpenAI client) can run against a real HTTP endpoint without a key or network.

    python -m services.evolver.llm.server --host 127.0.0.1 --port 0

prints the base URL it listens on (".../v1") as the first line of stdout. Any Authorization header
is accepted and ignored.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from services.evolver.llm.builtin import builtin_completion
from services.evolver.llm.prices import BUILTIN_CHILD_MODEL, BUILTIN_ROOT_MODEL

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 32_000_000


def _error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "arena-builtin-llm"

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def do_GET(self) -> None:
        path = self._path()
        if path in ("/v1/models", "/models"):
            now = int(time.time())
            self._send(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": name, "object": "model", "created": now, "owned_by": "arena"}
                        for name in (BUILTIN_ROOT_MODEL, BUILTIN_CHILD_MODEL)
                    ],
                },
            )
        elif path in ("/health", ""):
            self._send(200, {"status": "ok"})
        else:
            self._send(404, _error(f"no route {path}", "not_found_error"))

    def do_POST(self) -> None:
        # The body is read before anything is answered, so a kept-alive connection stays in step.
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            length = -1
        if length < 0 or length > MAX_REQUEST_BYTES:
            self.close_connection = True
            self._send(413 if length > 0 else 411, _error("a Content-Length up to 32 MB is required"))
            return
        raw = self.rfile.read(length)
        path = self._path()
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, _error(f"no route {path}", "not_found_error"))
            return
        try:
            request = json.loads(raw or b"null")
        except ValueError as exc:
            self._send(400, _error(f"the body is not JSON: {exc}"))
            return
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            self._send(400, _error("the body must be an object with a messages list"))
            return
        if request.get("stream"):
            self._send(400, _error("streaming is not supported by the built-in models"))
            return
        try:
            answer = builtin_completion(request)
        except Exception as exc:
            logger.exception("the built-in model failed")
            self._send(500, _error(f"the built-in model failed: {type(exc).__name__}", "server_error"))
            return
        self._send(200, answer)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)


def make_server(host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A bound server (not yet serving); its base URL is `base_url(server)`."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    return server


def base_url(server: ThreadingHTTPServer) -> str:
    address, port = server.server_address[:2]
    host = address.decode() if isinstance(address, bytes) else address
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the built-in evolver models over HTTP.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    server = make_server(args.host, args.port)
    print(base_url(server), flush=True)

    def stop(_signum: int, _frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
