"""Game descriptions: what a bot receives, what it answers, and what a match can be configured with."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class GameOut(BaseModel):
    name: str
    title: str
    min_players: int
    max_players: int
    builtin_bots: list[str]
    observation_schema: dict[str, Any]
    action_schema: dict[str, Any]
    config_schema: dict[str, Any]
