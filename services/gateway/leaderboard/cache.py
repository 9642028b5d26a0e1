"""Leaderboard pages as JSON bytes, kept per gateway process for a few seconds.

Under load the leaderboard is asked for far more often than it changes, and building it (a join, a
count, a model per row, serialising) cost several times what answering does. A page is built once
per `ARENA_LEADERBOARD_CACHE_S` and per key (game, include_inactive, limit, offset); requests that
arrive while it is being built wait for that one build instead of starting their own. When a page
expires, the next request starts its refresh and everyone keeps getting the expired page until the
refresh is done (at most one more period: after that they wait for it), so nobody waits for the
database in the steady state.

A page is dropped before its time when its game's ratings change (`invalidate(game)`, on every rated
`match.finished` event the process hears) and when this process handled any successful write
(`invalidate()`, by `InvalidateOnWrite`), so a client sees its own changes at once. Changes made
through another process are seen within the cache time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shared.events import TOPIC_MATCHES, EventStream, MatchFinished
from shared.logging_throttle import LogThrottle
from shared.outages import describe, unreachable

log = logging.getLogger(__name__)
_build_failures = LogThrottle()

MAX_PAGES = 256
"""Pages kept at most (offsets are the client's to choose); the oldest goes first."""
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True, slots=True)
class PageKey:
    game: str
    include_inactive: bool
    limit: int
    offset: int


@dataclass(frozen=True, slots=True)
class _Page:
    body: bytes
    expires: float


class LeaderboardCache:
    """Pages by key for `ttl_s` seconds (0: every request builds its page). Lives on one event loop."""

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._pages: dict[PageKey, _Page] = {}
        self._building: dict[PageKey, asyncio.Task[bytes]] = {}
        self._generation = 0
        self.builds = 0
        """Pages built so far (for tests and diagnostics)."""
        self.ready_served = 0
        """Pages handed out by `ready` so far (for tests and diagnostics)."""

    @property
    def size(self) -> int:
        """Pages kept now (expired ones included until they are replaced or pushed out)."""
        return len(self._pages)

    async def page(self, key: PageKey, build: Callable[[], Awaitable[bytes]]) -> bytes:
        """The cached page; an expired one (less than one more period old) while a fresh one is
        built in the background; or, with neither, the build under way or a new build's page."""
        if self.ttl_s <= 0:
            self.builds += 1
            return await build()
        now = self._clock()
        cached = self._pages.get(key)
        if cached is not None and cached.expires > now:
            return cached.body
        task = self._building.get(key) or self._start(key, build)
        if cached is not None and cached.expires + self.ttl_s > now:
            # Nobody waits for a refresh: requests that come while it runs get the page it replaces.
            return cached.body
        # Shielded: a client that goes away does not cancel the build the others wait for.
        return await asyncio.shield(task)

    def ready(self, key: PageKey) -> bytes | None:
        """What `page` would answer at once without starting anything: the page if it has not
        expired, or the expired one while its refresh is under way (less than one more period
        old); else None (`page` must start a build, or wait for one). Never builds or waits."""
        cached = self._pages.get(key)
        if cached is None:
            return None
        now = self._clock()
        if cached.expires <= now and not (key in self._building and cached.expires + self.ttl_s > now):
            return None
        self.ready_served += 1
        return cached.body

    def _start(self, key: PageKey, build: Callable[[], Awaitable[bytes]]) -> asyncio.Task[bytes]:
        task = asyncio.ensure_future(self._build(key, build, self._generation))
        self._building[key] = task
        task.add_done_callback(lambda done: self._built(key, done))
        return task

    async def _build(self, key: PageKey, build: Callable[[], Awaitable[bytes]], generation: int) -> bytes:
        self.builds += 1
        started = self._clock()
        body = await build()
        if generation == self._generation:  # nothing changed while it was built: keep it
            if len(self._pages) >= MAX_PAGES:
                self._drop_expired()
            if len(self._pages) >= MAX_PAGES:
                del self._pages[next(iter(self._pages))]
            self._pages[key] = _Page(body, started + self.ttl_s)
        return body

    def _built(self, key: PageKey, task: asyncio.Task[bytes]) -> None:
        if self._building.get(key) is task:
            del self._building[key]
        if not task.cancelled() and (problem := task.exception()) is not None:
            # Waiters, if any, got it too; retrieved here so that none is reported as lost. An outage
            # fails every build until it ends: said once per interval (the 503s are logged too).
            _build_failures.log(
                log,
                logging.WARNING,
                (unreachable(problem), type(problem).__name__),
                "leaderboard page %s not built: %s",
                key,
                describe(problem),
            )

    def _drop_expired(self) -> None:
        now = self._clock()
        for key in [key for key, page in self._pages.items() if page.expires <= now]:
            del self._pages[key]

    def invalidate(self, game: str | None = None) -> None:
        """Forget the pages of `game` (of every game: None), and builds under way: a request from
        now on builds a fresh page, and a build that started before is not kept."""
        self._generation += 1
        for key in [key for key in self._pages if game is None or key.game == game]:
            del self._pages[key]
        for key in [key for key in self._building if game is None or key.game == game]:
            del self._building[key]


class InvalidateOnWrite:
    """Drops the cached pages when this process answers a write (not GET, HEAD or OPTIONS) with a
    success, as the response starts: a bot deactivated, renamed or deleted here is off the board for
    the next request of the client that changed it."""

    def __init__(self, app: ASGIApp, cache: LeaderboardCache) -> None:
        self.app = app
        self.cache = cache

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method", "GET") in READ_METHODS:
            await self.app(scope, receive, send)
            return

        async def watching_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                self.cache.invalidate()
            await send(message)

        await self.app(scope, receive, watching_send)


async def _follow(cache: LeaderboardCache, redis_url: str) -> None:
    try:
        async with EventStream([TOPIC_MATCHES], redis_url=redis_url) as stream:
            async for event in stream:
                if isinstance(event, MatchFinished) and event.rated:
                    cache.invalidate(event.game)
    except Exception as exc:  # a bug, not Redis (the stream survives Redis): pages still expire
        log.warning("leaderboard cache: rating updates no longer followed: %s: %s", type(exc).__name__, exc)


@contextlib.asynccontextmanager
async def rating_updates(cache: LeaderboardCache, redis_url: str, enabled: bool) -> AsyncIterator[None]:
    """While open, every rated `match.finished` drops its game's pages (the stream reconnects by
    itself; events missed meanwhile only leave pages to expire on time)."""
    if not enabled or cache.ttl_s <= 0:
        yield
        return
    task = asyncio.create_task(_follow(cache, redis_url), name="leaderboard-cache-invalidation")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
