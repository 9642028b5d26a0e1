"""What the bots API accepts and returns. A bot's secret appears only in the creation and rotation
responses (`BotCreated`, `SecretRotated`); every other model leaves it out by construction."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from services.gateway.users.schemas import NAME_PATTERN

Contract = Literal["decide", "codingame"]


def _check_endpoint(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("endpoint must be an absolute http:// or https:// URL, e.g. https://bot.example.com")
    if parts.username or parts.password:
        raise ValueError("endpoint must not contain credentials")
    if parts.query or parts.fragment:
        raise ValueError("endpoint must not have a query string or fragment")
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
        default="decide",
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
    kind: str
    origin: str
    status: str
    endpoint: str | None
    owner_id: uuid.UUID
    owner_name: str
    current_version: int | None
    rating: RatingOut | None
    created_at: datetime
    updated_at: datetime
    last_match_at: datetime | None


class BotCreated(BotOut):
    secret: str = Field(description="The bot's signing secret. Shown only in this response; store it now.")
    next_step: str | None = None


class SecretRotated(BaseModel):
    bot_id: uuid.UUID
    secret: str = Field(description="The new signing secret, shown once. The old one stops working now.")


class PublicBot(BaseModel):
    id: uuid.UUID
    name: str
    game: str
    kind: str
    origin: str
    status: str
    owner_name: str
    current_version: int | None
    rating: RatingOut | None


class VersionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    number: int
    contract: str | None
    source_sha256: str | None
    source_chars: int | None
    notes: dict[str, Any]
    created_at: datetime
    current: bool


class VersionDetail(VersionOut):
    source: str | None
