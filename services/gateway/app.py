"""The gateway: Arena's REST API (`/api/v1`), OpenAPI docs (`/docs`), operations endpoints
(`/health`, `/ready`, `/metrics`) and a small HTML front page.

Run with `uvicorn services.gateway.app:app`. It only talks to PostgreSQL and sends Celery tasks by
name; it never imports match-runner code.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI
from starlette.concurrency import run_in_threadpool

from services.gateway.body_limit import BodyLimitMiddleware
from services.gateway.bots.views import router as bots_router
from services.gateway.errors import install_error_handlers
from services.gateway.evolution.views import router as evolution_router
from services.gateway.games.views import router as games_router
from services.gateway.health import router as health_router
from services.gateway.input_guard import InputGuardMiddleware
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


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    install_secret_filter()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging()
        await run_in_threadpool(_bootstrap, settings)
        yield

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
    api = APIRouter(prefix=API_PREFIX)
    for router in (
        users_router,
        bots_router,
        matches_router,
        games_router,
        leaderboard_router,
        training_router,
        evolution_router,
    ):
        api.include_router(router)
    app.include_router(api)
    app.include_router(health_router)
    app.include_router(live_router)
    install_web(app)
    app.state.settings = settings
    app.state.metrics = GatewayMetrics()
    app.add_route("/metrics", metrics_endpoint, include_in_schema=False)
    install_error_handlers(app)
    install_openapi(app)
    app.add_middleware(InputGuardMiddleware)  # innermost: reads bodies through the body limit
    app.add_middleware(BodyLimitMiddleware, max_bytes=body_limit_bytes(settings))
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    return app


app = create_app()
