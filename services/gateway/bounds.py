"""Bounds for integers taken from URLs, matching the database columns they are compared with: a
value outside a column's type is a 422 here instead of a driver error (a 500) later."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

INT32_MAX = 2**31 - 1
"""PostgreSQL `integer`, the type of version numbers."""

VersionNumber = Annotated[int, Path(ge=1, le=INT32_MAX, description="version number, from 1")]
