"""The gateway's access log: one line per HTTP request (client, request line, status, milliseconds).

Why not uvicorn's own: it writes and flushes each line as it goes, a system call per request that
cost the leaderboard about a quarter of its throughput under load (docs/deploy.md, "Load"). These
lines are formatted when the request ends and written together: when `BATCH_LINES` are waiting,
when a warning or worse arrives, every `flush_interval_s` from a background thread, and when the
handler closes. A line is therefore at most `flush_interval_s` late, and a process killed with
SIGKILL loses at most that much of its log. uvicorn's access logger is quieted (level WARNING) when
this one is installed, so a server started with the plain `uvicorn` command logs each request once.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import TextIO
from urllib.parse import quote

from starlette.types import Scope

ACCESS_LOGGER = "arena.access"
UVICORN_ACCESS_LOGGER = "uvicorn.access"
BATCH_LINES = 256
"""Lines kept before a write even when the interval has not passed (bounds the memory held)."""
LINE_FORMAT = '%s - "%s %s HTTP/%s" %d %.1f ms'

access_logger = logging.getLogger(ACCESS_LOGGER)


class BatchedLineHandler(logging.Handler):
    """Formats records as they come and writes them in batches to a text stream."""

    def __init__(self, stream: TextIO, flush_interval_s: float, batch_lines: int = BATCH_LINES) -> None:
        super().__init__()
        self.stream = stream
        self.batch_lines = batch_lines
        self._lines: list[str] = []
        self._stopped = threading.Event()
        self._flusher = threading.Thread(
            target=self._flush_every, args=(flush_interval_s,), name="access-log-flush", daemon=True
        )
        self._flusher.start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        self.acquire()
        try:
            self._lines.append(line)
            due = len(self._lines) >= self.batch_lines or record.levelno >= logging.WARNING
        finally:
            self.release()
        if due:
            self.flush()

    def flush(self) -> None:
        self.acquire()
        try:
            if not self._lines:
                return
            text = "\n".join(self._lines) + "\n"
            self._lines.clear()
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):  # a closed or broken stream: the lines are lost, not the app
                pass
        finally:
            self.release()

    def close(self) -> None:
        self._stopped.set()
        self.flush()
        super().close()

    def _flush_every(self, interval_s: float) -> None:
        while not self._stopped.wait(interval_s):
            self.flush()


def install_access_log(flush_interval_s: float, stream: TextIO | None = None) -> BatchedLineHandler:
    """Give the access logger its batched handler (replacing one installed before) and quiet
    uvicorn's per-request lines. Returns the handler so a server can close it at shutdown."""
    for old in list(access_logger.handlers):
        access_logger.removeHandler(old)
        old.close()
    handler = BatchedLineHandler(stream or sys.stdout, flush_interval_s)
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
    access_logger.addHandler(handler)
    access_logger.setLevel(logging.INFO)
    access_logger.propagate = False
    logging.getLogger(UVICORN_ACCESS_LOGGER).setLevel(logging.WARNING)
    return handler


def remove_access_log(handler: BatchedLineHandler) -> None:
    """Detach and close `handler`, writing what it still holds (a server's shutdown)."""
    access_logger.removeHandler(handler)
    handler.close()


def log_request(scope: Scope, status: int, seconds: float) -> None:
    """The access line of one finished request (the metrics middleware calls it: it already
    follows every request to its end)."""
    if access_logger.isEnabledFor(logging.INFO):
        access_logger.info(
            LINE_FORMAT,
            client_address(scope),
            scope.get("method", "GET"),
            request_target(scope),
            scope.get("http_version", "1.1"),
            status,
            seconds * 1000.0,
        )


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "-"


def request_target(scope: Scope) -> str:
    """The path as sent (percent-encoded again, so a line break in it cannot forge a log line)."""
    path = quote(scope.get("path", ""))
    query = scope.get("query_string", b"")
    return f"{path}?{quote(query.decode('latin-1'), safe='=&;%+/')}" if query else path
