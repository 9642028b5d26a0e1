"""Every failure becomes a JSON answer with a `detail` that tells the caller what to fix.

Bad input is always a 4xx: validation errors list each offending field path, unknown routes name the
route, database conflicts become 409. An unreachable database or Redis is a 503 with Retry-After
(an HTML page for the HTML pages), logged once per interval with a count, never a traceback per
request. Only real bugs reach the catch-all, which logs the traceback and answers 500 without
internals. The body's shape is documented once, as `ErrorBody`, in
services/gateway/openapi.py.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.routing import APIRoute
from sqlalchemy.exc import IntegrityError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from services.gateway.web.templating import render
from shared.bots import errors as bot_errors
from shared.evolution import errors as evolution_errors
from shared.logging_throttle import LogThrottle
from shared.matches import MatchRequestError
from shared.outages import DATABASE_ERRORS, REDIS_ERRORS, Dependency, describe, unreachable
from shared.quotas import QuotaExceeded
from shared.training import errors as training_errors

log = logging.getLogger("services.gateway.errors")

OUTAGE_RETRY_AFTER_S = 5
"""Retry-After of a 503 for an unreachable database or Redis: the workers retry their own work at
most 10 s apart (shared.queue), clients a little sooner; a restarted PostgreSQL answers in seconds."""
OUTAGE_MESSAGES = {
    Dependency.DATABASE: "the database is unreachable; try again later",
    Dependency.REDIS: "the match queue (Redis) is unreachable; try again later",
}
_outage_log = LogThrottle()


def outage_headers() -> dict[str, str]:
    """The headers of every 503: when to try again."""
    return {"Retry-After": str(OUTAGE_RETRY_AFTER_S)}


class ApiError(Exception):
    """A domain error with its HTTP status; services raise it, the handler renders it. A 503 (a
    backing service unreachable: the queue, replay storage) says when to try again (Retry-After)."""

    def __init__(self, status_code: int, detail: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail
        self.errors = errors

    @property
    def headers(self) -> dict[str, str] | None:
        return outage_headers() if self.status_code == 503 else None


def not_found(what: str) -> ApiError:
    return ApiError(404, f"{what} not found")


def _loc(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(part) for part in loc)


def validation_problems(errors: list[Any]) -> list[dict[str, str]]:
    """Field path, message and type only: never echo the input (it may hold a secret)."""
    return [
        {"loc": _loc(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in errors
    ]


async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
    problems = validation_problems(list(exc.errors()))
    summary = "; ".join(f"{p['loc']}: {p['msg']}" for p in problems[:10]) or "invalid request"
    return JSONResponse({"detail": f"invalid request: {summary}", "errors": problems}, status_code=422)


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    detail: Any = exc.detail
    if exc.status_code == 404 and detail == "Not Found":
        detail = f"no such route: {request.method} {request.url.path} (see /docs)"
    elif exc.status_code == 405 and detail == "Method Not Allowed":
        detail = f"{request.method} is not allowed on {request.url.path}"
    return JSONResponse(
        {"detail": detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None)
    )


async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
    body: dict[str, Any] = {"detail": exc.detail}
    if exc.errors is not None:
        body["errors"] = exc.errors
    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


BOT_ERROR_STATUS: dict[type[bot_errors.BotError], int] = {
    bot_errors.BotNotFound: 404,
    bot_errors.NotBotOwner: 403,
    bot_errors.BotNameTaken: 409,
    bot_errors.WrongBotKind: 409,
    bot_errors.SourceTooLarge: 413,
    bot_errors.InvalidBotSource: 422,
    bot_errors.EndpointCheckFailed: 422,
    bot_errors.UnknownGame: 422,
}
"""The HTTP status of each bot-domain error; a subclass not listed takes its nearest listed base's."""


def bot_error_status(exc: bot_errors.BotError) -> int:
    for cls in type(exc).__mro__:
        if cls in BOT_ERROR_STATUS:
            return BOT_ERROR_STATUS[cls]
    return 400


async def _bot_error(_request: Request, exc: bot_errors.BotError) -> JSONResponse:
    """Rendered like ApiError: `detail`, plus `errors` when the error carries structured details."""
    body: dict[str, Any] = {"detail": exc.message}
    if exc.details is not None:
        body["errors"] = exc.details
    return JSONResponse(body, status_code=bot_error_status(exc))


TRAINING_ERROR_STATUS: dict[type[training_errors.TrainingError], int] = {
    training_errors.RunNotFound: 404,
    training_errors.CheckpointNotFound: 404,
    training_errors.RunStateError: 409,
    training_errors.NothingToExport: 409,
    training_errors.NoRaceYet: 404,
    training_errors.UntrainableGame: 422,
}
"""The HTTP status of each training-domain error."""


async def _training_error(_request: Request, exc: training_errors.TrainingError) -> JSONResponse:
    return JSONResponse({"detail": exc.message}, status_code=TRAINING_ERROR_STATUS.get(type(exc), 400))


EVOLUTION_ERROR_STATUS: dict[type[evolution_errors.EvolutionError], int] = {
    evolution_errors.EvolutionRunNotFound: 404,
    evolution_errors.ProgramNotFound: 404,
    evolution_errors.LlmCallNotFound: 404,
    evolution_errors.EvolutionRunStateError: 409,
    evolution_errors.UnevolvableGame: 422,
    evolution_errors.InvalidSeed: 422,
    evolution_errors.InvalidFitnessWeights: 422,
    evolution_errors.LlmEndpointRefused: 422,
    evolution_errors.UnknownLlmEndpoint: 422,
    evolution_errors.LlmKeyMisuse: 422,
    evolution_errors.LlmModelNotOffered: 422,
    evolution_errors.LlmMoneyCapReached: 429,
}
"""The HTTP status of each evolution-domain error."""
EVOLUTION_ERROR_FIELD: dict[type[evolution_errors.EvolutionError], str] = {
    evolution_errors.UnevolvableGame: "body.game",
    evolution_errors.InvalidSeed: "body.config.seeds",
    evolution_errors.InvalidFitnessWeights: "body.config.evaluation.fitness_weights",
    evolution_errors.LlmEndpointRefused: "body.config.llm.base_url",
    evolution_errors.UnknownLlmEndpoint: "body.config.llm.endpoint",
    evolution_errors.LlmKeyMisuse: "body.api_key",
    evolution_errors.LlmModelNotOffered: "body.config.llm",
}
"""The request field a refused run creation is about, listed in `errors` like a validation error."""


async def _evolution_error(_request: Request, exc: evolution_errors.EvolutionError) -> JSONResponse:
    body: dict[str, Any] = {"detail": exc.message}
    field = EVOLUTION_ERROR_FIELD.get(type(exc))
    if field is not None:
        body["errors"] = [{"loc": field, "msg": exc.message, "type": "value_error"}]
    headers = None
    if isinstance(exc, evolution_errors.LlmMoneyCapReached):
        headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after_s)))}
    return JSONResponse(body, status_code=EVOLUTION_ERROR_STATUS.get(type(exc), 400), headers=headers)


async def _match_request_error(_request: Request, exc: MatchRequestError) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=exc.status_code)


async def _quota_exceeded(_request: Request, exc: QuotaExceeded) -> JSONResponse:
    """429: `detail` names the quota and its setting; Retry-After says when it passes again."""
    return JSONResponse(
        {"detail": exc.message}, status_code=429, headers={"Retry-After": str(exc.retry_after_s)}
    )


async def _integrity_error(request: Request, exc: IntegrityError) -> JSONResponse:
    text = str(exc.orig) if exc.orig is not None else str(exc)
    if "unique" in text.lower() or "duplicate" in text.lower():
        detail = "name already taken (or another unique value conflicts with existing data)"
    else:
        detail = "the request conflicts with existing data"
    log.info("integrity error on %s %s: %s", request.method, request.url.path, text.splitlines()[0])
    return JSONResponse({"detail": detail}, status_code=409)


def _wants_html(request: Request) -> bool:
    """Whether the request was routed to one of the HTML pages (services/gateway/web)."""
    route = request.scope.get("route")
    return isinstance(route, APIRoute) and route.response_class is HTMLResponse


def outage_response(request: Request, dependency: Dependency, exc: BaseException) -> Response:
    """503 with Retry-After and one line: JSON for the API, a short page for the HTML pages. Logged
    once per dependency and error type per interval, with the count of the others."""
    _outage_log.log(
        log,
        logging.WARNING,
        (dependency, type(exc).__name__),
        "%s unreachable: answering 503 (%s %s: %s)",
        dependency,
        request.method,
        request.url.path,
        describe(exc),
    )
    message = OUTAGE_MESSAGES[dependency]
    headers = outage_headers()
    if _wants_html(request):
        page = render(request, "error_page.html", {"title": "Unavailable", "message": message}, 503)
        page.headers.update(headers)
        return page
    return JSONResponse({"detail": message}, status_code=503, headers=headers)


async def _outage(request: Request, exc: Exception) -> Response:
    """The handler of shared.outages' error classes (registered below)."""
    dependency = unreachable(exc)
    if dependency is None:  # not reached for the registered classes; a bug if it ever is
        return await _unexpected(request, exc)
    return outage_response(request, dependency, exc)


async def _unexpected(request: Request, exc: Exception) -> Response:
    dependency = unreachable(exc)  # an outage wrapped in another error
    if dependency is not None:
        return outage_response(request, dependency, exc)
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return JSONResponse({"detail": "internal server error"}, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(ApiError, _api_error)  # type: ignore[arg-type]
    app.add_exception_handler(bot_errors.BotError, _bot_error)  # type: ignore[arg-type]
    app.add_exception_handler(MatchRequestError, _match_request_error)  # type: ignore[arg-type]
    app.add_exception_handler(QuotaExceeded, _quota_exceeded)  # type: ignore[arg-type]
    app.add_exception_handler(training_errors.TrainingError, _training_error)  # type: ignore[arg-type]
    app.add_exception_handler(evolution_errors.EvolutionError, _evolution_error)  # type: ignore[arg-type]
    app.add_exception_handler(IntegrityError, _integrity_error)  # type: ignore[arg-type]
    for outage in (*DATABASE_ERRORS, *REDIS_ERRORS):
        app.add_exception_handler(outage, _outage)
    app.add_exception_handler(Exception, _unexpected)
