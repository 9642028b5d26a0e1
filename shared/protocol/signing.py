"""Request signing in the Standard Webhooks style. Standard library only: the bot SDK and the
hosted-bot runner inside the sandbox import this file too.

A request carries three headers:
  webhook-id         unique message id (the runner uses "<match>-<turn>-<player>")
  webhook-timestamp  integer seconds since the epoch
  webhook-signature  "v1,<base64 HMAC-SHA256(secret, f"{id}.{timestamp}.{body}")>" (space-separated list)
The secret is "whsec_" followed by base64 of at least 24 random bytes. A receiver rejects requests
without a valid signature and those whose timestamp is outside the tolerance window (replays).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping

SECRET_PREFIX = "whsec_"
HEADER_ID = "webhook-id"
HEADER_TIMESTAMP = "webhook-timestamp"
HEADER_SIGNATURE = "webhook-signature"
DEFAULT_TOLERANCE_S = 300


class SignatureError(Exception):
    """The request is unsigned, badly signed or stale; the reason says which."""


def generate_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def _key(secret: str) -> bytes:
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError("bot secret must start with 'whsec_'")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except ValueError as exc:
        raise ValueError("bot secret is not valid base64 after 'whsec_'") from exc
    if len(key) < 24:
        raise ValueError("bot secret is too short (need at least 24 bytes)")
    return key


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header value for a message."""
    mac = hmac.new(_key(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


class Signer:
    """Signs outgoing requests with one secret; the key is decoded once, not per request."""

    def __init__(self, secret: str) -> None:
        self._key = _key(secret)

    def headers(self, msg_id: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
        ts = int(time.time()) if timestamp is None else timestamp
        mac = hmac.new(self._key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
        return {
            HEADER_ID: msg_id,
            HEADER_TIMESTAMP: str(ts),
            HEADER_SIGNATURE: "v1," + base64.b64encode(mac).decode(),
        }


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance_s: int = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> str:
    """Check a request's signature and freshness; return its message id or raise SignatureError."""
    lowered = {k.lower(): v for k, v in headers.items()}
    msg_id = lowered.get(HEADER_ID)
    ts_raw = lowered.get(HEADER_TIMESTAMP)
    sig_header = lowered.get(HEADER_SIGNATURE)
    if not msg_id or not ts_raw or not sig_header:
        raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature header")
    try:
        ts = int(ts_raw)
    except ValueError as exc:
        raise SignatureError("webhook-timestamp is not an integer") from exc
    current = time.time() if now is None else now
    if abs(current - ts) > tolerance_s:
        raise SignatureError(f"timestamp outside the {tolerance_s}s tolerance window")
    expected = sign(secret, msg_id, ts, body).split(",", 1)[1]
    for candidate in sig_header.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return msg_id
    raise SignatureError("no valid v1 signature")
