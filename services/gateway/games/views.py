"""Games API: the games on the platform with their observation, action and config JSON schemas."""

from __future__ import annotations

from fastapi import APIRouter

from services.gateway.games import service
from services.gateway.games.schemas import GameOut

router = APIRouter(prefix="/games", tags=["games"])


@router.get("", response_model=list[GameOut])
def list_games() -> list[GameOut]:
    return service.describe_all()


@router.get("/{name}", response_model=GameOut)
def get_game(name: str) -> GameOut:
    return service.describe(name)
