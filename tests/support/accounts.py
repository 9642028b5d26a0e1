"""Platform accounts as the tests hold them: who they are and the API key they call with."""

from __future__ import annotations

import uuid
from dataclasses import dataclass


@dataclass
class Account:
    id: str
    name: str
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def unique(prefix: str) -> str:
    """A name no other test uses: tests share one database, and names are unique in it."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
