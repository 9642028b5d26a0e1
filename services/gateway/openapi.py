"""What the OpenAPI document (`/openapi.json`, `/docs`) says about failures and groups.

Every error the gateway answers has one body, `ErrorBody` (see services/gateway/errors.py). Each
dependency or domain error that can fail a request has its responses declared here once, and the
views combine the ones their operation can really answer with `responses(...)`: an operation that
needs a key lists 401, one with a JSON body lists 413 and 422, one that loads your bot lists 403
and 404. tests/gateway/test_openapi.py checks the declarations against the dependencies and against
live answers. FastAPI's own default 422 (a body this gateway never sends) is dropped from the
document by `install_openapi`.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

Responses = dict[int | str, dict[str, Any]]
"""The shape FastAPI takes in a route's `responses=`."""


class ErrorBody(BaseModel):
    """The body of every error answer (but `/ready`'s 503, which reports its checks)."""

    model_config = ConfigDict(title="ErrorBody")

    detail: str = Field(description="What went wrong and what to do about it, written for a person.")
    errors: list[dict[str, Any]] | SkipJsonSchema[None] = Field(
        default=None,
        description="Present when the error comes with a list of problems. Validation errors (422) list "
        "each bad field as `{loc, msg, type}` (`loc` is a dotted path such as `body.name` or "
        "`query.limit`; the rejected value is never echoed); hosted code the static gate refuses "
        "lists each problem as `{line, col, message}`.",
    )


def error(
    description: str, headers: dict[str, str] | None = None, example: str | dict[str, Any] | None = None
) -> dict[str, Any]:
    """One documented error status: its description, the ErrorBody schema, response headers
    (name -> description) it carries, and an example body (a string is the example's `detail`)."""
    declared: dict[str, Any] = {"model": ErrorBody, "description": description}
    if example is not None:
        body = {"detail": example} if isinstance(example, str) else example
        declared["content"] = {"application/json": {"example": body}}
    if headers:
        declared["headers"] = {
            name: {"description": text, "schema": {"type": "string"}} for name, text in headers.items()
        }
    return declared


def responses(*parts: Responses) -> Responses:
    """Merge declarations; where two declare the same status, both descriptions (whole sentences)
    and both's headers are kept (the first's example)."""
    merged: Responses = {}
    for part in parts:
        for code, declared in part.items():
            if code in merged:
                first = merged[code]
                merged[code] = {**first, "description": f"{first['description']} {declared['description']}"}
                headers = {**first.get("headers", {}), **declared.get("headers", {})}
                if headers:
                    merged[code]["headers"] = headers
            else:
                merged[code] = dict(declared)
    return merged


def _key_error(description: str, example: str) -> dict[str, Any]:
    return error(description, {"WWW-Authenticate": "`Bearer`: send an API key"}, example)


def _invalid(loc: str, msg: str, kind: str) -> dict[str, Any]:
    """An example validation body, as services/gateway/errors.py renders one."""
    return {"detail": f"invalid request: {loc}: {msg}", "errors": [{"loc": loc, "msg": msg, "type": kind}]}


KEY_REQUIRED: Responses = {
    401: _key_error(
        "No API key was sent, the key is invalid or revoked, or the Authorization header is not "
        "`Bearer <api key>`.",
        "an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'",
    )
}
"""For operations that depend on `CurrentUser`."""

KEY_OPTIONAL: Responses = {
    401: _key_error(
        "A key was sent but it is invalid or revoked, or the Authorization header is not "
        "`Bearer <api key>` (send no key at all to read anonymously).",
        "invalid or revoked API key",
    )
}
"""For operations that depend on `MaybeUser`: no key is fine, a wrong one is not."""

OPTIONAL_KEY_EXTRA: dict[str, Any] = {"security": [{}]}
"""`openapi_extra` for `MaybeUser` operations: FastAPI lists their key schemes; the empty
requirement added here says that sending none is allowed too."""

ADMIN_ONLY: Responses = responses(
    KEY_REQUIRED,
    {403: error("The key's user is not an admin.", example="this operation needs the admin role")},
)
"""For operations that depend on `AdminUser`."""

INVALID_PARAMS: Responses = {
    422: error(
        "A path or query parameter is invalid; `errors` lists each one as `{loc, msg, type}`.",
        example=_invalid("query.limit", "Input should be greater than or equal to 1", "greater_than_equal"),
    )
}
"""For operations with path or query parameters (FastAPI validates them before the view runs)."""

JSON_BODY: Responses = {
    413: error(
        "The request body is over the gateway's size limit.",
        example="request body of 2000032 bytes exceeds the limit of 1064960 bytes",
    ),
    422: error(
        "The body is not valid JSON, does not match the schema, or holds a value no endpoint can "
        "store (NaN, Infinity, NUL characters); `errors` lists each problem as `{loc, msg, type}`.",
        example=_invalid("body.name", "String should have at least 1 character", "string_too_short"),
    ),
}
"""For operations that read a JSON body (services/gateway/body_limit.py, input_guard.py)."""

OWNED_BOT: Responses = {
    403: error(
        "The bot belongs to another user (only its owner or an admin may see or change it).",
        example="bot 0b5e4c9e-8f43-4a8e-9d1a-5a1d2f1f6f10 belongs to another user",
    ),
    404: error("No bot has this id.", example="bot 0b5e4c9e-8f43-4a8e-9d1a-5a1d2f1f6f10 not found"),
}
"""For operations that load one of the caller's bots (`shared.bots.get_owned_bot`)."""

BOT_NAME_TAKEN: Responses = {409: error("Another bot of the same game already has this name.")}

UNKNOWN_GAME: Responses = {422: error("The game is not one of the platform's games.")}

ENDPOINT_CHECK: Responses = {
    422: error(
        "The endpoint failed its signed health check (`GET /health`), or the address policy "
        "refuses it (private, loopback or otherwise disallowed addresses)."
    )
}
"""For operations that health-check an HTTP bot's endpoint before changing anything."""

HOSTED_SOURCE: Responses = {
    413: error("The source is longer than ARENA_HOSTED_CODE_MAX_CHARS characters."),
    422: error(
        "The static gate refuses the code; `errors` lists each problem as `{line, col, message}`.",
        example={
            "detail": "the bot source has 1 problem(s): line 1, column 0: import of 'os' is not allowed",
            "errors": [{"line": 1, "col": 0, "message": "import of 'os' is not allowed"}],
        },
    ),
}
"""For operations that take hosted bot code."""


def not_found(description: str) -> Responses:
    return {404: error(description)}


def _quota(description: str, example: str) -> Responses:
    return {
        429: error(
            f"{description} `detail` names the quota and its setting (shared/quotas.py).",
            {"Retry-After": "seconds until the quota lets this request through again"},
            example,
        )
    }


RUN_QUOTAS = _quota(
    "Over one of your quotas: runs created per hour (when creating), runs queued or running at once, "
    "or the last 24 h's training time (training runs) or LLM spend (evolution runs).",
    "quota reached: 4 of your runs are queued or running; at most 4 runs (training and evolution "
    "together) at once per user (ARENA_QUOTA_ACTIVE_RUNS); stop one, or try again when one has ended",
)
"""For operations that create or resume a training or evolution run."""
BOT_QUOTA = _quota(
    "Over your quota of bots registered per hour.",
    "quota reached: 10 bots registered in the last hour; at most 10 per hour per user "
    "(ARENA_QUOTA_BOTS_PER_HOUR); try again in 1200 s",
)
UPLOAD_QUOTA = _quota(
    "Over your quota of hosted code uploads (new versions, training exports) per hour.",
    "quota reached: 30 hosted code uploads (new versions and training exports) in the last hour; at "
    "most 30 per hour per user (ARENA_QUOTA_UPLOADS_PER_HOUR); try again in 600 s",
)


API_DESCRIPTION = """\
**Authentication.** Send an API key as `Authorization: Bearer <api key>` or `X-API-Key: <api key>`
(in these docs: the **Authorize** button). Read endpoints (games, leaderboards, matches, replays,
public bots) need no key; a key that is sent must be valid, though.

**Errors.** Every error answers a JSON `ErrorBody`: `{"detail": "...", "errors": [...]}`. `detail`
says what went wrong for a person to read; `errors` is there when there is a list of problems
(each invalid field as `{loc, msg, type}`, or each problem in uploaded code as `{line, col, message}`).

| status | when |
|---|---|
| 400 | a NUL character in the URL; a challenge the game refuses (bot count, a bot of another game) |
| 401 | no key where one is needed, a wrong or revoked key, a malformed Authorization header |
| 403 | not your bot, not an admin, a rated challenge by a non-admin |
| 404 | no such route, bot, version, match, replay, key, game, training or evolution run |
| 409 | a taken name, the wrong kind of bot, an inactive bot, a run whose state forbids it |
| 410 | a replay that was stored but is no longer in its replay storage |
| 413 | a body over the size limit, hosted code over its character limit |
| 422 | invalid parameters or body (`errors` lists them), refused code, a failed endpoint health check |
| 429 | over the challenge rate limit or one of your quotas; `Retry-After` says when to try again |
| 503 | the database, the queue, the rate limiter or replay storage is down; `Retry-After`: when to retry |
"""
"""The API's introduction at the top of `/docs` and `/redoc`."""

OPENAPI_TAGS: list[dict[str, Any]] = [
    {
        "name": "users",
        "description": "Users and their API keys. Admins create users; everybody manages their own "
        "keys. A key is shown once, when it is created.",
    },
    {
        "name": "bots",
        "description": "Register HTTP bots (your server, called with signed requests) and hosted "
        "bots (Python code the platform runs in a sandbox), upload versions, rotate secrets, take "
        "bots on and off the ladder.",
    },
    {
        "name": "matches",
        "description": "Challenges, match listings with results and errors, and replays.",
    },
    {
        "name": "games",
        "description": "The games on the platform with their observation, action and config JSON schemas.",
    },
    {"name": "leaderboard", "description": "Ratings per game; no key needed."},
    {
        "name": "training",
        "description": "Training runs of the trainer service (PPO on the batched podracing engine): "
        "start one, follow its metrics live, stop and resume it, change its learning rate, entropy "
        "coefficient, rewards or stage while it trains, and export checkpoints as hosted bots.",
    },
    {
        "name": "evolution",
        "description": "Evolution runs of the evolver service (a root LLM steering child LLMs that write "
        "and mutate bot code): start one, follow its generations, programs, lineage, MAP-Elites grid, "
        "LLM calls, events, spend and payoff table, stop and resume it, and download it as an archive.",
    },
    {
        "name": "operations",
        "description": "Liveness and readiness for load balancers and orchestrators.",
    },
]
"""Tag descriptions, in the order `/docs` shows the groups."""


FASTAPI_VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")
"""The 422 body FastAPI documents by default: `{"detail": [...]}`, which this gateway never sends."""


def drop_default_validation_errors(document: dict[str, Any]) -> dict[str, Any]:
    """Remove the 422 FastAPI adds to every operation with parameters unless one is declared: ours
    are declared (with ErrorBody) where a parameter can really fail validation. Idempotent."""
    default_ref = f"#/components/schemas/{FASTAPI_VALIDATION_SCHEMAS[0]}"
    for item in document.get("paths", {}).values():
        for operation in item.values():
            answers = operation.get("responses", {})
            content = answers.get("422", {}).get("content", {}).get("application/json", {})
            if content.get("schema", {}).get("$ref") == default_ref:
                del answers["422"]
    schemas = document.get("components", {}).get("schemas", {})
    if default_ref not in json.dumps(document.get("paths", {})):
        for name in FASTAPI_VALIDATION_SCHEMAS:
            schemas.pop(name, None)
    return document


def install_openapi(app: FastAPI) -> None:
    """Serve the app's OpenAPI document with `drop_default_validation_errors` applied (FastAPI's
    documented way to change the document is to replace `app.openapi`)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        return drop_default_validation_errors(build())

    app.openapi = openapi  # type: ignore[method-assign]
