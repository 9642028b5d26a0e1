"""Cached leaderboard pages answered before routing.

The leaderboard is the most asked-for read, and a cached page costs almost nothing to send; what a
request cost was the framework around it (matching the request against the routes, resolving the
endpoint's dependencies, validating its parameters), more than the send itself. This layer answers
`GET /api/v1/leaderboard/{game}` itself with what the page cache would answer at once
(`LeaderboardCache.ready`: a page that has not expired, or the expired one while its refresh runs)
when the query is one it reads exactly as the endpoint does (no query, or `limit`, `offset` and
`include_inactive` in their plain forms, each at most once, within their bounds). Everything else
goes on to the endpoint: a page to build or wait for, an unknown game, any other spelling of a
parameter, errors. It sits inside the metrics and access log middlewares, so its requests are
counted (under the endpoint's route) and logged like the others.

Serving the expired page here too while it refreshes keeps the tail short: otherwise every request
during a refresh would take the slow way at once (docs/deploy.md, "Load").
"""

from __future__ import annotations

from urllib.parse import unquote_plus

from starlette.types import ASGIApp, Receive, Scope, Send

from services.gateway.leaderboard.cache import LeaderboardCache, PageKey
from services.gateway.metrics import ROUTE_TEMPLATE
from services.gateway.pagination import DEFAULT_LIMIT, MAX_OFFSET, MAX_PAGE

PREFIX = "/api/v1/leaderboard/"
TEMPLATE = PREFIX + "{game}"
"""The endpoint's route template, for the metrics (the router never sees these requests)."""
BOOLEANS = {"true": True, "false": False}
"""The plain spellings; FastAPI's other ones ("1", "yes", "on", any case) go to the endpoint."""


def page_key(path: str, query: bytes) -> PageKey | None:
    """The page a request asks for, when the fast path can read it exactly; else None. The game is
    not checked: only pages the endpoint built (for games it accepted) are ever in the cache."""
    game = path[len(PREFIX) :]
    limit, offset, include_inactive = DEFAULT_LIMIT, 0, False
    seen: set[str] = set()
    for pair in query.decode("latin-1").split("&") if query else ():
        name, equals, raw = pair.partition("=")
        value = unquote_plus(raw)
        if not equals or name in seen:
            return None
        seen.add(name)
        if name == "include_inactive" and value in BOOLEANS:
            include_inactive = BOOLEANS[value]
        elif name in ("limit", "offset") and value.isascii() and value.isdigit() and len(value) <= 10:
            number = int(value)
            if name == "limit" and 1 <= number <= MAX_PAGE:
                limit = number
            elif name == "offset" and number <= MAX_OFFSET:
                offset = number
            else:
                return None
        else:
            return None
    return PageKey(game, include_inactive, limit, offset)


class CachedLeaderboard:
    """ASGI middleware: cached leaderboard pages, answered without the router."""

    def __init__(self, app: ASGIApp, cache: LeaderboardCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"].startswith(PREFIX):
            key = page_key(scope["path"], scope["query_string"])
            body = self.cache.ready(key) if key is not None else None
            if body is not None:
                scope[ROUTE_TEMPLATE] = TEMPLATE
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [
                            (b"content-length", str(len(body)).encode()),
                            (b"content-type", b"application/json"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
