"""Request signing in the Standard Webhooks style. Standard library only: the bot SDK and the
hosted-bot runner inside the sandbox import this file too.

A request carries three headers:
  webhook-id         unique message id, never reused (the runner: "<match>-<turn>-<player>-<random>")
  webhook-timestamp  integer seconds since the epoch
  webhook-signature  a space-separated list of "<version>,<base64 HMAC-SHA256>" entries:
    v2  HMAC(secret, f"{id}.{timestamp}.{METHOD}.{path}.".encode() + body)  binds method and path
    v1  HMAC(secret, f"{id}.{timestamp}.".encode() + body)                   deprecated
The secret is "whsec_" followed by base64 of at least 24 random bytes. A receiver rejects requests
without a valid signature, those whose timestamp is older than the tolerance window or more than a
small clock skew in the future, and (the SDK, see shared.botsdk.replay) ids it has already seen.

v1 does not say which request it was made for, so a /turn signature also verified on /health. The
runner sends v1 next to v2 while third-party bots move over; `verify` refuses v1-only requests
unless the receiver opts in with `accept_v1=True`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass

SECRET_PREFIX = "whsec_"
HEADER_ID = "webhook-id"
HEADER_TIMESTAMP = "webhook-timestamp"
HEADER_SIGNATURE = "webhook-signature"
DEFAULT_TOLERANCE_S = 300
"""How old a request may be: the past side of the window."""
MAX_FUTURE_SKEW_S = 30
"""How far in the future a timestamp may be: clock skew between runner and bot, nothing more."""
MAX_ID_LENGTH = 256
"""Longer message ids are refused, so a receiver's replay cache has a bounded entry size."""


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


def _mac_v1(key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return base64.b64encode(mac).decode()


def _mac_v2(key: bytes, msg_id: str, timestamp: int, method: str, path: str, body: bytes) -> str:
    signed = f"{msg_id}.{timestamp}.{method.upper()}.{path}.".encode() + body
    return base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The deprecated v1 `webhook-signature` entry for a message (kept for the documented example)."""
    return "v1," + _mac_v1(_key(secret), msg_id, timestamp, body)


def sign_v2(secret: str, msg_id: str, timestamp: int, method: str, path: str, body: bytes) -> str:
    """The v2 `webhook-signature` entry: also binds the HTTP method and the request path."""
    return "v2," + _mac_v2(_key(secret), msg_id, timestamp, method, path, body)


class Signer:
    """Signs outgoing requests; keys are decoded once, not per request.

    `Signer(secret, *previous_secrets)` emits one entry per secret (current first), so a bot that
    still holds a previous secret keeps verifying during a rotation grace window. With `legacy_v1`
    (the default during the deprecation) each secret also gets a v1 entry.
    """

    def __init__(self, secret: str, *previous_secrets: str, legacy_v1: bool = True) -> None:
        self._keys = [_key(s) for s in (secret, *previous_secrets)]
        self._legacy_v1 = legacy_v1

    def headers(
        self, msg_id: str, body: bytes, timestamp: int | None = None, *, method: str, path: str
    ) -> dict[str, str]:
        """Headers for a request `METHOD path` (the request target as the bot will see it)."""
        ts = int(time.time()) if timestamp is None else timestamp
        entries = ["v2," + _mac_v2(key, msg_id, ts, method, path, body) for key in self._keys]
        if self._legacy_v1:
            entries += ["v1," + _mac_v1(key, msg_id, ts, body) for key in self._keys]
        return {HEADER_ID: msg_id, HEADER_TIMESTAMP: str(ts), HEADER_SIGNATURE: " ".join(entries)}


@dataclass(frozen=True, slots=True)
class Verified:
    """A request that passed `verify`: its id and timestamp (what a replay cache needs)."""

    msg_id: str
    timestamp: int
    version: str


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    method: str,
    path: str,
    accept_v1: bool = False,
    tolerance_s: int = DEFAULT_TOLERANCE_S,
    future_skew_s: int = MAX_FUTURE_SKEW_S,
    now: float | None = None,
) -> Verified:
    """Check a request's signature and freshness, or raise SignatureError.

    A valid v2 entry for this method and path is required; a valid v1 entry counts only with
    `accept_v1`. Replays inside the window are the caller's job (it has the state): see
    shared.botsdk.replay.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    msg_id = lowered.get(HEADER_ID)
    ts_raw = lowered.get(HEADER_TIMESTAMP)
    sig_header = lowered.get(HEADER_SIGNATURE)
    if not msg_id or not ts_raw or not sig_header:
        raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature header")
    if len(msg_id) > MAX_ID_LENGTH:
        raise SignatureError(f"webhook-id is longer than {MAX_ID_LENGTH} characters")
    if not ts_raw.isascii() or not ts_raw.isdigit() or len(ts_raw) > 12:
        raise SignatureError("webhook-timestamp is not an integer")
    ts = int(ts_raw)
    current = time.time() if now is None else now
    if ts < current - tolerance_s:
        raise SignatureError(f"timestamp is older than the {tolerance_s}s tolerance window")
    if ts > current + future_skew_s:
        raise SignatureError(f"timestamp is more than {future_skew_s}s in the future")
    key = _key(secret)
    expected = {"v2": _mac_v2(key, msg_id, ts, method, path, body)}
    if accept_v1:
        expected["v1"] = _mac_v1(key, msg_id, ts, body)
    for candidate in sig_header.split():
        version, _, value = candidate.partition(",")
        if version in expected and hmac.compare_digest(value.encode(), expected[version].encode()):
            return Verified(msg_id, ts, version)
    if accept_v1:
        raise SignatureError("no valid v2 or v1 signature")
    raise SignatureError("no valid v2 signature for this method and path (v1-only requests are refused)")
