"""The bot domain: registration, versions, activation, secret rotation, renames and who may act on a
bot, as plain functions that the gateway, the workers (evolver, trainer) and scripts all call, so a
bot looks the same whoever created it.

Transaction rule: every function that changes something commits the session before it returns.
Call them with no pending changes of your own in the session: on a conflict found at commit time
(a name another registration took first) the session is rolled back as a whole. Every check runs
before anything is changed, so a function that raises has changed nothing.

Errors are `BotError` subclasses (shared.bots.errors) with a message safe to show and, for refused
code, the problems with line numbers in `details`; the gateway maps each class to an HTTP status in
services/gateway/errors.py. Nothing here imports a web framework.

The functions are synchronous: the endpoint health check runs its own short event loop, so call them
from a thread or a worker process, never from inside a running event loop. Field formats (name
pattern, endpoint URL shape, secret format) are the API schemas' job; callers that build values
themselves are trusted to build valid ones.
"""

from __future__ import annotations

from shared.bots.errors import (
    BotError,
    BotNameTaken,
    BotNotFound,
    EndpointCheckFailed,
    EndpointNotAllowed,
    InvalidBotSource,
    NotBotOwner,
    SourceTooLarge,
    UnknownGame,
    WrongBotKind,
)
from shared.bots.service import (
    HttpBotRegistration,
    add_version,
    check_endpoint,
    check_game,
    check_source,
    deactivate,
    ensure_may_manage,
    get_bot,
    get_owned_bot,
    grace_ends_at,
    grace_secrets,
    may_manage,
    publicly_listed,
    reactivate,
    register_hosted_bot,
    register_http_bot,
    rotate_secret,
    update_bot,
)

__all__ = [
    "BotError",
    "BotNameTaken",
    "BotNotFound",
    "EndpointCheckFailed",
    "EndpointNotAllowed",
    "HttpBotRegistration",
    "InvalidBotSource",
    "NotBotOwner",
    "SourceTooLarge",
    "UnknownGame",
    "WrongBotKind",
    "add_version",
    "check_endpoint",
    "check_game",
    "check_source",
    "deactivate",
    "ensure_may_manage",
    "get_bot",
    "get_owned_bot",
    "grace_ends_at",
    "grace_secrets",
    "may_manage",
    "publicly_listed",
    "reactivate",
    "register_hosted_bot",
    "register_http_bot",
    "rotate_secret",
    "update_bot",
]
