"""Liveness (`/health`: the process answers) and readiness (`/ready`: PostgreSQL and Redis answer)."""

from __future__ import annotations

import logging

import redis
from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from services.gateway.deps import SettingsDep
from services.gateway.errors import outage_headers
from shared.db.session import get_engine
from shared.logging_throttle import LogThrottle

router = APIRouter(tags=["operations"])
log = logging.getLogger("services.gateway.health")
_not_ready_log = LogThrottle()
"""Probes come every few seconds during an outage: each state said once a minute, with the count."""


@router.get("/health", summary="Liveness")
async def health() -> dict[str, str]:
    """Answers while the process serves requests; checks nothing else. On the event loop itself:
    a probe must not queue for a worker thread behind slow requests."""
    return {"status": "ok"}


@router.get(
    "/ready",
    summary="Readiness",
    responses={
        200: {
            "description": "PostgreSQL and Redis answer.",
            "content": {
                "application/json": {"example": {"status": "ok", "checks": {"database": "ok", "redis": "ok"}}}
            },
        },
        503: {
            "description": "PostgreSQL or Redis does not answer; `checks` says which, `Retry-After` "
            "when to ask again.",
            "content": {
                "application/json": {
                    "example": {
                        "status": "unavailable",
                        "checks": {"database": "ok", "redis": "unreachable: ConnectionError"},
                    }
                }
            },
        },
    },
)
def ready(settings: SettingsDep) -> JSONResponse:
    """Whether this gateway can serve: PostgreSQL and Redis both answer."""
    checks: dict[str, str] = {}
    try:
        with get_engine().connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"unreachable: {type(exc).__name__}"
    try:
        client = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=2)
        try:
            client.ping()
        finally:
            client.close()
        checks["redis"] = "ok"
    except Exception as exc:
        checks["redis"] = f"unreachable: {type(exc).__name__}"
    ok = all(v == "ok" for v in checks.values())
    if not ok:
        _not_ready_log.log(log, logging.WARNING, tuple(sorted(checks.items())), "not ready: %s", checks)
    return JSONResponse(
        {"status": "ok" if ok else "unavailable", "checks": checks},
        status_code=200 if ok else 503,
        headers=None if ok else outage_headers(),
    )
