"""Leaderboard rows: the conservative rating (mu - 3 sigma) first, then the figures behind it."""

from __future__ import annotations

import uuid

from pydantic import BaseModel

from shared.states import BotKind, BotOrigin, BotStatus


class LeaderboardEntry(BaseModel):
    rank: int
    bot_id: uuid.UUID
    bot_name: str
    owner_name: str
    kind: BotKind
    origin: BotOrigin
    status: BotStatus
    ordinal: float
    mu: float
    sigma: float
    matches: int
    wins: int
    draws: int
    losses: int


class Leaderboard(BaseModel):
    game: str
    total: int
    entries: list[LeaderboardEntry]
