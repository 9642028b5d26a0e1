"""What the matches API accepts and returns."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.states import MatchKind, MatchStatus


class MatchCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    game: str = Field(min_length=1, max_length=32, examples=["podracing"])
    bot_ids: list[uuid.UUID] = Field(min_length=2, max_length=16, description="players, in slot order")
    seed: int | None = Field(default=None, ge=0, lt=2**63, description="random if omitted")
    config: dict[str, Any] | None = Field(
        default=None, description="validated against the game's config schema"
    )
    rated: bool = Field(
        default=False,
        description="whether the result moves ratings; only admins may set true (everyone else: 403)",
    )


class ParticipantOut(BaseModel):
    slot: int
    bot_id: uuid.UUID
    bot_name: str
    owner_name: str
    version: int | None
    rank: int | None
    score: float | None
    metrics: dict[str, Any]
    mu_before: float | None
    sigma_before: float | None
    mu_after: float | None
    sigma_after: float | None
    ordinal_change: float | None = Field(description="change of mu - 3 sigma from this match")
    errors: int
    timeouts: int
    forfeited: bool
    latency_p50_ms: float | None
    latency_p99_ms: float | None
    error_samples: list[Any] | None = Field(description="only shown to the bot's owner and admins")


class MatchOut(BaseModel):
    id: uuid.UUID
    game: str
    kind: MatchKind
    rated: bool
    status: MatchStatus
    seed: int
    config: dict[str, Any]
    attempts: int
    queued_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    turns: int | None
    end_reason: str | None
    error: str | None
    participants: list[ParticipantOut]
    replay_url: str | None
    replay_frames: int | None
    replay_bytes: int | None
