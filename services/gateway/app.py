"""The gateway: Arena's REST API (`/api/v1`), OpenAPI docs (`/docs`), operations endpoints
(`/health`, `/ready`, `/metrics`) and a small HTML front page.

Run with `uvicorn services.gateway.app:app`. It only talks to PostgreSQL and sends Celery tasks by
name; it never imports match-runner code.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from services.gateway.access_log import install_access_log, remove_access_log
from services.gateway.body_limit import BodyLimitMiddleware
from services.gateway.bots.views import router as bots_router
from services.gateway.errors import install_error_handlers
from services.gateway.evolution.endpoints import router as llm_endpoints_router
from services.gateway.evolution.views import router as evolution_router
from services.gateway.games.views import router as games_router
from services.gateway.health import router as health_router
from services.gateway.input_guard import InputGuardMiddleware
from services.gateway.leaderboard.cache import InvalidateOnWrite, LeaderboardCache, rating_updates
from services.gateway.leaderboard.fast_path import CachedLeaderboard
from services.gateway.leaderboard.views import router as leaderboard_router
from services.gateway.live import router as live_router
from services.gateway.logging_filter import configure_logging, install_secret_filter
from services.gateway.matches.views import router as matches_router
from services.gateway.metrics import GatewayMetrics, MetricsMiddleware, metrics_endpoint
from services.gateway.openapi import API_DESCRIPTION, OPENAPI_TAGS, install_openapi
from services.gateway.training.views import router as training_router
from services.gateway.users.service import ensure_bootstrap_admin
from services.gateway.users.views import router as users_router
from services.gateway.web import install_web
from shared.config import Settings, get_settings
from shared.db.session import get_sessionmaker

API_PREFIX = "/api/v1"
log = logging.getLogger("services.gateway")


def body_limit_bytes(settings: Settings) -> int:
    """Room for the largest hosted upload (4 bytes a character in the worst case) plus JSON overhead."""
    return max(1_000_000, settings.hosted_code_max_chars * 4 + 64 * 1024)


def _bootstrap(settings: Settings) -> None:
    with get_sessionmaker()() as session:
        ensure_bootstrap_admin(session, settings)


_startup_frozen = False


def freeze_startup_objects() -> None:
    """Once per process, after the first start: everything made so far (modules, models, routes)
    moves out of the garbage collector's sight, so a full collection walks only what requests made.
    Those collections were most of the leaderboard's p99 at saturation (docs/deploy.md "Load")."""
    global _startup_frozen
    if not _startup_frozen:
        gc.collect()
        gc.freeze()
        _startup_frozen = True


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    install_secret_filter()
    boards = LeaderboardCache(settings.leaderboard_cache_s)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        configure_logging()
        access = install_access_log(settings.access_log_flush_s) if settings.access_log else None
        try:
            await run_in_threadpool(_bootstrap, settings)
            freeze_startup_objects()
            events_url = settings.events_redis_url or settings.redis_url
            async with rating_updates(boards, events_url, settings.events_enabled):
                yield
        finally:
            if access is not None:
                remove_access_log(access)

    app = FastAPI(
        title="Arena",
        version="1",
        summary="Bots play physics games against each other, get rated and can be watched.",
        description=API_DESCRIPTION,
        openapi_tags=OPENAPI_TAGS,
        lifespan=lifespan,
        # Served by install_web from packaged assets: FastAPI's own pages load a CDN.
        docs_url=None,
        redoc_url=None,
    )
    # Straight into the app (not through one /api/v1 router: each level of nesting is matched again
    # on every request), the public reads first: a request tries the routes in this order.
    for router in (
        leaderboard_router,
        games_router,
        matches_router,
        bots_router,
        users_router,
        training_router,
        evolution_router,
        llm_endpoints_router,
    ):
        app.include_router(router, prefix=API_PREFIX)
    app.include_router(health_router)
    app.include_router(live_router)
    install_web(app)
    app.state.settings = settings
    app.state.metrics = GatewayMetrics()
    app.state.leaderboard_cache = boards
    app.add_route("/metrics", metrics_endpoint, include_in_schema=False)
    install_error_handlers(app)
    install_openapi(app)
    app.add_middleware(CachedLeaderboard, cache=boards)  # innermost: fresh pages without the router
    app.add_middleware(InvalidateOnWrite, cache=boards)  # sees the endpoints' own statuses
    app.add_middleware(InputGuardMiddleware)  # reads bodies through the body limit
    app.add_middleware(BodyLimitMiddleware, max_bytes=body_limit_bytes(settings))
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics, access_log=settings.access_log)
    return app


app = create_app()
