"""What can go wrong when bots are registered or changed, without any transport attached.

Each error carries a `message` written for the person (or program) that asked, and `details` where
there is structured data to show (the gate's problems with line numbers). How an error is shown is
the caller's business: the gateway maps each class to an HTTP status in one place
(services/gateway/errors.py), a worker records or logs it.
"""

from __future__ import annotations

import uuid
from typing import Any

__all__ = [
    "BotError",
    "BotNameTaken",
    "BotNotFound",
    "EndpointCheckFailed",
    "EndpointNotAllowed",
    "InvalidBotSource",
    "NotBotOwner",
    "SourceTooLarge",
    "UnknownGame",
    "WrongBotKind",
]


class BotError(Exception):
    """Base of the bot domain's errors: a message safe to show, and optional structured details."""

    def __init__(self, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class BotNotFound(BotError):
    def __init__(self, bot_id: uuid.UUID) -> None:
        super().__init__(f"bot {bot_id} not found")
        self.bot_id = bot_id


class NotBotOwner(BotError):
    """The caller neither owns the bot nor is an admin."""

    def __init__(self, bot_id: uuid.UUID) -> None:
        super().__init__(f"bot {bot_id} belongs to another user")
        self.bot_id = bot_id


class BotNameTaken(BotError):
    """Bot names are unique per game."""

    def __init__(self, game: str, name: str) -> None:
        super().__init__(f"name already taken: a {game} bot named {name!r} already exists")
        self.game = game
        self.name = name


class WrongBotKind(BotError):
    """The operation exists for the other kind of bot (code uploads for hosted, endpoints for HTTP)."""


class UnknownGame(BotError):
    def __init__(self, message: str, game: str) -> None:
        super().__init__(message)
        self.game = game


class InvalidBotSource(BotError):
    """Hosted code the static gate refuses; `details` lists each problem as {line, col, message}."""


class SourceTooLarge(InvalidBotSource):
    """Hosted code over ARENA_HOSTED_CODE_MAX_CHARS: refused before the gate reads it."""

    def __init__(self, chars: int, limit: int) -> None:
        super().__init__(
            f"the source is {chars} characters long; the limit is {limit} (ARENA_HOSTED_CODE_MAX_CHARS)"
        )
        self.chars = chars
        self.limit = limit


class EndpointCheckFailed(BotError):
    """An HTTP bot's endpoint did not pass its signed health check (GET /health)."""

    def __init__(self, message: str, endpoint: str) -> None:
        super().__init__(message)
        self.endpoint = endpoint


class EndpointNotAllowed(EndpointCheckFailed):
    """The SSRF policy refused the endpoint's address before any connection was made."""
