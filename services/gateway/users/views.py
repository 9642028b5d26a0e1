"""Users API: admins create users; everybody manages their own keys."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, status

from services.gateway.deps import AdminUser, CurrentUser, DbSession, SettingsDep
from services.gateway.openapi import (
    ADMIN_ONLY,
    INVALID_PARAMS,
    JSON_BODY,
    KEY_REQUIRED,
    error,
    not_found,
    responses,
)
from services.gateway.users import service
from services.gateway.users.schemas import (
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyOut,
    Me,
    UserCreate,
    UserCreated,
    UserOut,
)

router = APIRouter(tags=["users"])


@router.post(
    "/users",
    status_code=status.HTTP_201_CREATED,
    response_model=UserCreated,
    summary="Create a user",
    responses=responses(ADMIN_ONLY, JSON_BODY, {409: error("The user name is already taken.")}),
)
def create_user(body: UserCreate, session: DbSession, settings: SettingsDep, _: AdminUser) -> UserCreated:
    """Create a user (admin only). The response carries the user's first API key, shown once."""
    user, key, plain = service.create_user(session, settings, body.name, body.role)
    return UserCreated(
        user=UserOut.model_validate(user),
        api_key=ApiKeyCreated(**ApiKeyOut.model_validate(key).model_dump(), api_key=plain),
    )


@router.get("/users", response_model=list[UserOut], summary="List users", responses=ADMIN_ONLY)
def list_users(session: DbSession, _: AdminUser) -> list[UserOut]:
    """All users (admin only)."""
    return [UserOut.model_validate(u) for u in service.list_users(session)]


@router.get("/me", response_model=Me, summary="Show the calling user", responses=KEY_REQUIRED)
def me(user: CurrentUser, session: DbSession) -> Me:
    """The calling user and its API keys (prefixes only)."""
    keys = [ApiKeyOut.model_validate(k) for k in service.list_keys(session, user)]
    return Me(**UserOut.model_validate(user).model_dump(), api_keys=keys)


@router.get(
    "/me/api-keys", response_model=list[ApiKeyOut], summary="List my API keys", responses=KEY_REQUIRED
)
def list_keys(user: CurrentUser, session: DbSession) -> list[ApiKeyOut]:
    """The caller's keys, revoked ones included; only each key's prefix is shown."""
    return [ApiKeyOut.model_validate(k) for k in service.list_keys(session, user)]


@router.post(
    "/me/api-keys",
    status_code=status.HTTP_201_CREATED,
    response_model=ApiKeyCreated,
    summary="Create an API key",
    responses=responses(KEY_REQUIRED, JSON_BODY),
)
def create_key(
    body: ApiKeyCreate, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> ApiKeyCreated:
    """A new API key for the caller, shown once."""
    key, plain = service.add_api_key(session, settings, user, body.name)
    session.commit()
    return ApiKeyCreated(**ApiKeyOut.model_validate(key).model_dump(), api_key=plain)


@router.delete(
    "/me/api-keys/{key_id}",
    response_model=ApiKeyOut,
    summary="Revoke an API key",
    responses=responses(KEY_REQUIRED, not_found("You have no API key with this id."), INVALID_PARAMS),
)
def revoke_key(key_id: uuid.UUID, user: CurrentUser, session: DbSession) -> ApiKeyOut:
    """Revoke one of the caller's keys; it stops working immediately."""
    return ApiKeyOut.model_validate(service.revoke_key(session, user, key_id))
