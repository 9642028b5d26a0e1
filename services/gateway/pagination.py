"""Limit/offset pagination shared by the list endpoints."""

from __future__ import annotations

from typing import Annotated, Generic, TypeVar

from fastapi import Depends, Query
from pydantic import BaseModel, Field

T = TypeVar("T")

MAX_PAGE = 200
DEFAULT_LIMIT = 50
MAX_OFFSET = 2**31 - 1
"""Far past any real listing, and inside every integer type the database and drivers use."""


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int
    total_exact: bool = Field(
        default=True, description="false when `total` stopped at the list's counting limit (there are more)"
    )
    limit: int
    offset: int


class PageParams(BaseModel):
    limit: int
    offset: int


async def _page_params(
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="items per page")] = DEFAULT_LIMIT,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="items to skip")] = 0,
) -> PageParams:
    """`async` only because nothing here waits: a plain function would take a thread per request."""
    return PageParams(limit=limit, offset=offset)


Pagination = Annotated[PageParams, Depends(_page_params)]
