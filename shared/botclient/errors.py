"""Errors raised when a bot endpoint cannot be used; messages are safe to show to the bot's owner."""

from __future__ import annotations


class BotEndpointError(Exception):
    """The bot could not be reached or answered wrongly; the message says what happened."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else "bot endpoint error"


class EndpointRefused(BotEndpointError):
    """The endpoint is not allowed (scheme, credentials, or an address we never connect to)."""
