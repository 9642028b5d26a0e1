"""What the bots API accepts and returns. A bot's secret appears only in the creation and rotation
responses (`BotCreated`, `SecretRotated`); every other model leaves it out by construction."""

from __future__ import annotations

import ipaddress
import re
import uuid
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from services.gateway.users.schemas import NAME_PATTERN
from shared.states import BotKind, BotOrigin, BotStatus, HostedContract

Contract = HostedContract


_URL_CHARACTERS = re.compile(r"[\x21-\x7e]+")
"""Printable ASCII without spaces: anything else in a URL must be percent-encoded."""
_ENCODED_CONTROL = re.compile(r"%(?:[01][0-9a-fA-F]|7[fF])")
_BAD_ESCAPE = re.compile(r"%(?![0-9a-fA-F]{2})")
_DNS_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


def _check_host(host: str) -> None:
    """An IP literal or a DNS name of letters, digits and hyphens (punycode for other scripts)."""
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    if len(host) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in labels):
        raise ValueError(
            "endpoint host must be an IP address or a DNS name of letters, digits and hyphens "
            "(labels of 1 to 63 characters; write international names in punycode, xn--...)"
        )
    if labels[-1].isdigit():
        raise ValueError(f"endpoint host {host!r} is neither a valid IP address nor a DNS name")


def _check_endpoint(value: str) -> str:
    """Refuse at the door what an HTTP client, the SSRF guard or a request line could choke on."""
    if not _URL_CHARACTERS.fullmatch(value):
        raise ValueError(
            "endpoint must be printable ASCII without spaces or control characters "
            "(percent-encode other characters in the path)"
        )
    if _ENCODED_CONTROL.search(value):
        raise ValueError("endpoint must not contain percent-encoded control characters (%00-%1F, %7F)")
    if _BAD_ESCAPE.search(value):
        raise ValueError("endpoint has a '%' that is not followed by two hex digits")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise ValueError(
            f"endpoint is not a valid URL (a port must be a number from 1 to 65535): {exc}"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("endpoint must be an absolute http:// or https:// URL, e.g. https://bot.example.com")
    if port == 0:
        raise ValueError("endpoint port must be a number from 1 to 65535")
    if parts.username or parts.password or "@" in parts.netloc:
        raise ValueError("endpoint must not contain credentials")
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise ValueError("endpoint must not have a query string or fragment")
    _check_host(parts.hostname)
    return value.rstrip("/")


def _check_secret(value: str | None) -> str | None:
    if value is None:
        return None
    from shared.protocol.signing import Signer

    try:
        Signer(value)
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    return value


class HttpBotCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN, examples=["my-racer"])
    game: str = Field(min_length=1, max_length=32, examples=["podracing"])
    endpoint: str = Field(min_length=1, max_length=2048, examples=["https://bot.example.com"])
    secret: str | None = Field(
        default=None,
        description="Optional signing secret ('whsec_' + base64 of >= 24 bytes) that the bot already uses. "
        "Given: the health check runs now and the bot is active at once. Omitted: the server generates "
        "one, the bot starts inactive, and POST /bots/{id}/reactivate runs the health check.",
    )

    _endpoint = field_validator("endpoint")(_check_endpoint)
    _secret = field_validator("secret")(_check_secret)


class HostedBotCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN, examples=["my-hosted-racer"])
    game: str = Field(min_length=1, max_length=32, examples=["podracing"])
    source: str = Field(min_length=1, description="Python source of the bot")
    contract: Contract = Field(
        default=HostedContract.DECIDE,
        description="'decide': a module defining decide(observation); "
        "'codingame': a script reading stdin and printing its moves",
    )


class BotUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=64, pattern=NAME_PATTERN)
    endpoint: str | None = Field(default=None, min_length=1, max_length=2048)

    _endpoint = field_validator("endpoint")(lambda v: None if v is None else _check_endpoint(v))

    @model_validator(mode="after")
    def _name_or_endpoint_given(self) -> BotUpdate:
        if self.name is None and self.endpoint is None:
            raise ValueError("give at least one of 'name' or 'endpoint'")
        return self


class VersionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, description="Python source of the new version")
    contract: Contract | None = Field(default=None, description="defaults to the current version's contract")
    notes: dict[str, Any] = Field(default_factory=dict, description="free-form provenance")


class RatingOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    mu: float
    sigma: float
    ordinal: float
    matches_played: int
    wins: int
    draws: int
    losses: int


class BotOut(BaseModel):
    id: uuid.UUID
    name: str
    game: str
    kind: BotKind
    origin: BotOrigin
    status: BotStatus
    endpoint: str | None
    owner_id: uuid.UUID
    owner_name: str
    current_version: int | None
    rating: RatingOut | None
    created_at: datetime
    updated_at: datetime
    last_match_at: datetime | None
    status_reason: str | None = Field(default=None, description="Why the bot is suspended (owner only).")
    suspended_at: datetime | None = None
    health_failures: int = Field(default=0, description="Failed pre-match health checks in a row.")
    last_health_check_at: datetime | None = None
    last_health_error: str | None = Field(default=None, description="The last failed check's detail.")
    previous_secret_valid_until: datetime | None = Field(
        default=None, description="After a rotation: until when the runner still signs with the old secret."
    )


class BotCreated(BotOut):
    secret: str = Field(description="The bot's signing secret. Shown only in this response; store it now.")
    next_step: str | None = None


class SecretRotated(BaseModel):
    bot_id: uuid.UUID
    secret: str = Field(
        description="The new signing secret, shown once. The runner also signs with the old one until "
        "the bot's previous_secret_valid_until (ARENA_SECRET_GRACE_S after the rotation)."
    )


class PublicBot(BaseModel):
    id: uuid.UUID
    name: str
    game: str
    kind: BotKind
    origin: BotOrigin
    status: BotStatus
    owner_name: str
    current_version: int | None
    rating: RatingOut | None


class VersionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    number: int
    contract: HostedContract | None
    source_sha256: str | None
    source_chars: int | None
    notes: dict[str, Any]
    created_at: datetime
    current: bool


class VersionDetail(VersionOut):
    source: str | None
