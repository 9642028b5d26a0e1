"""Keeps secrets out of logs, whatever logs them: API keys, bot secrets and Authorization headers are
masked when a log record is created, before any handler or formatter sees it."""

from __future__ import annotations

import logging
import re
from typing import Any

_PATTERNS = [
    re.compile(r"whsec_[A-Za-z0-9+/=]+"),
    re.compile(r"arena_[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)(bearer\s+)[^\s'\",]+"),
    re.compile(r"(?i)(x-api-key['\"]?\s*[:=]\s*['\"]?)[^\s'\",]+"),
]
MASK = "[REDACTED]"
_MARKERS = ("whsec_", "arena_")
_MARKERS_ANY_CASE = ("bearer", "x-api-key")
"""A message that contains none of these (most of them: every access log line) cannot match any
pattern above, so it is not searched: masking then costs one scan instead of four regexes."""


def might_hold_secret(text: str) -> bool:
    if any(marker in text for marker in _MARKERS):
        return True
    lowered = text.lower()
    return any(marker in lowered for marker in _MARKERS_ANY_CASE)


def redact(text: str) -> str:
    if not might_hold_secret(text):
        return text
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
    return text


class SecretRedactingFilter(logging.Filter):
    """Rewrites a record's message with secrets masked; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        _redact_record(record)
        return True


def _redact_record(record: logging.LogRecord) -> None:
    if getattr(record, "_arena_redacted", False):
        return
    try:
        message = record.getMessage()
    except Exception:  # a broken format string is the logger's problem, not ours
        return
    cleaned = redact(message)
    if cleaned != message:
        record.msg, record.args = cleaned, ()
    record._arena_redacted = True


_installed = False


def install_secret_filter() -> None:
    """Wrap the log record factory once per process, so every record from every logger is masked."""
    global _installed
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        _redact_record(record)
        return record

    logging.setLogRecordFactory(factory)
    _installed = True


def configure_logging(level: int = logging.INFO) -> None:
    """Give the gateway's own loggers a handler when the server did not configure one (uvicorn only
    configures its own loggers), so warnings and errors from the API reach the process output."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(SecretRedactingFilter())
    root.addHandler(handler)
    root.setLevel(level)
