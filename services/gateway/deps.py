"""Request dependencies shared by every domain: settings, a database session, the calling user.

Views declare what they need with `Annotated` aliases (`DbSession`, `CurrentUser`, `AdminUser`), so
authentication and transaction handling live in one place instead of in every endpoint.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Annotated

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar
from fastapi import Depends, HTTPException, Request, Security, status
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import QueuePool

from shared.config import Settings, get_settings
from shared.crypto import hash_api_key
from shared.db.models import ApiKey, User
from shared.db.session import get_sessionmaker
from shared.logging_throttle import LogThrottle
from shared.outages import Dependency, describe, unreachable
from shared.states import UserRole

log = logging.getLogger(__name__)
_close_log = LogThrottle()
"""Every request that held a connection when the database went away says so: once a minute."""

LAST_USED_RESOLUTION = timedelta(minutes=1)
"""`last_used_at` is only rewritten when older than this, so reads do not turn into writes."""


def _settings(request: Request) -> Settings:
    """The app's Settings (set by create_app); the process-wide ones if the app has none."""
    return getattr(request.app.state, "settings", None) or get_settings()


SettingsDep = Annotated[Settings, Depends(_settings)]


DEFAULT_SESSION_SLOTS = 5
"""Requests that may hold a session at once when the pool does not say its size."""
_session_slots: RunVar[anyio.Semaphore] = RunVar("arena_db_session_slots")


def _slots(maker: sessionmaker[Session]) -> anyio.Semaphore:
    """This event loop's session slots: as many as the connection pool keeps (its pool_size)."""
    slots = _session_slots.get(None)
    if slots is None:
        pool = getattr(maker.kw.get("bind"), "pool", None)
        size = pool.size() if isinstance(pool, QueuePool) else DEFAULT_SESSION_SLOTS
        slots = anyio.Semaphore(max(1, size))
        _session_slots.set(slots)
    return slots


async def _db() -> AsyncIterator[Session]:
    """The request's session, once one of the pool's slots is free.

    Requests beyond the pool's size wait here, on the event loop, holding neither a thread nor a
    connection. Without the slots, more concurrent requests than the thread pool has threads could
    deadlock: every thread waiting for a connection, every connection held by a request whose
    endpoint had returned and that waited for a thread to serialise its response; only the pool's
    30 s timeout broke it, with a 500 for each waiting request. Closing (which returns the
    connection) runs on a thread of its own, so it never waits behind the endpoints."""
    maker = get_sessionmaker()
    async with _slots(maker):
        session = maker()
        try:
            yield session
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(_close, session, limiter=anyio.CapacityLimiter(1))


def _close(session: Session) -> None:
    """Close the request's session. When the database dropped its connection meanwhile (an outage
    that began after the endpoint's last statement), the rollback that closing does fails: the
    connection is discarded instead, since the server ended its transaction already. Raising would
    come after the answer has started (FastAPI closes the session then), where it can no longer be
    a 503, only a traceback per request in the log."""
    try:
        session.close()
    except Exception as exc:
        if unreachable(exc) is not Dependency.DATABASE:
            raise
        session.invalidate()
        _close_log.log(
            log,
            logging.WARNING,
            type(exc).__name__,
            "a request's database connection was lost; discarded (%s)",
            describe(exc),
        )


DbSession = Annotated[Session, Depends(_db)]


BEARER_KEY = HTTPBearer(
    scheme_name="BearerKey",
    bearerFormat="Arena API key",
    description="An API key in the Authorization header: `Authorization: Bearer <api key>`.",
    auto_error=False,
)
"""Declares the scheme in the OpenAPI document (the /docs Authorize button); `_presented_key`
decides, so a malformed Authorization header still gets its own 401."""
API_KEY_HEADER = APIKeyHeader(
    name="X-API-Key",
    scheme_name="ApiKeyHeader",
    description="The same API key in its own header: `X-API-Key: <api key>`.",
    auto_error=False,
)


def _presented_key(
    authorization: str | None, bearer: HTTPAuthorizationCredentials | None, x_api_key: str | None
) -> str | None:
    """X-API-Key wins; otherwise an Authorization header must be 'Bearer <key>' (anything else
    there is an error rather than no key, so a typo is not silently anonymous)."""
    if x_api_key:
        return x_api_key.strip()
    if authorization:
        key = bearer.credentials.strip() if bearer is not None else ""
        if not key:
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "Authorization header must be 'Bearer <api key>'",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return key
    return None


def _user_for_key(session: Session, settings: Settings, key: str) -> User | None:
    row = session.scalar(
        select(ApiKey).where(ApiKey.key_hash == hash_api_key(settings, key), ApiKey.revoked_at.is_(None))
    )
    if row is None:
        return None
    now = datetime.now(UTC)
    if row.last_used_at is None or now - row.last_used_at > LAST_USED_RESOLUTION:
        row.last_used_at = now
        session.commit()
    return row.user


def optional_user(
    session: DbSession,
    settings: SettingsDep,
    request: Request,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER_KEY)],
    x_api_key: Annotated[str | None, Security(API_KEY_HEADER)],
) -> User | None:
    """The caller if it presented a key; a presented key that is wrong is still an error."""
    key = _presented_key(request.headers.get("Authorization"), bearer, x_api_key)
    if key is None:
        return None
    user = _user_for_key(session, settings, key)
    if user is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, "invalid or revoked API key", headers={"WWW-Authenticate": "Bearer"}
        )
    return user


MaybeUser = Annotated[User | None, Depends(optional_user)]


def current_user(user: MaybeUser) -> User:
    if user is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return user


CurrentUser = Annotated[User, Depends(current_user)]


def admin_user(user: CurrentUser) -> User:
    if user.role != UserRole.ADMIN:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "this operation needs the admin role")
    return user


AdminUser = Annotated[User, Depends(admin_user)]


def is_admin(user: User | None) -> bool:
    return user is not None and user.role == UserRole.ADMIN
