"""What the users API accepts and returns. Key hashes never leave the server."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from shared.states import UserRole

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"


class UserCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN, examples=["alice"])
    role: UserRole = UserRole.USER


class ApiKeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="default", min_length=1, max_length=64)


class ApiKeyOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class ApiKeyCreated(ApiKeyOut):
    api_key: str = Field(description="The plain key. Shown only in this response; store it now.")


class UserOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    name: str
    role: UserRole
    created_at: datetime


class UserCreated(BaseModel):
    user: UserOut
    api_key: ApiKeyCreated


class Me(UserOut):
    api_keys: list[ApiKeyOut]
