"""Secrets at rest: bot signing secrets are encrypted (the runner needs them back), API keys are
hashed (only ever compared)."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from cryptography.fernet import Fernet, InvalidToken

from shared.config import Settings

API_KEY_PREFIX = "arena_"


class SecretDecryptionError(Exception):
    """A stored secret cannot be decrypted: the secret key changed or the row is corrupt."""


def encrypt_secret(settings: Settings, plain: str) -> bytes:
    return Fernet(settings.fernet_key()).encrypt(plain.encode())


def decrypt_secret(settings: Settings, token: bytes) -> str:
    try:
        return Fernet(settings.fernet_key()).decrypt(token).decode()
    except InvalidToken as exc:
        raise SecretDecryptionError("bot secret cannot be decrypted with the configured secret key") from exc


def new_api_key() -> str:
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def api_key_prefix(key: str) -> str:
    return key[: len(API_KEY_PREFIX) + 8]


def hash_api_key(settings: Settings, key: str) -> str:
    """HMAC-SHA256 with the server secret: keys are random, so a fast keyed hash is enough, and a
    leaked table is useless without the secret key."""
    return hmac.new(settings.secret_key.get_secret_value().encode(), key.encode(), hashlib.sha256).hexdigest()
