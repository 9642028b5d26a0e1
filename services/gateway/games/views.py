"""Games API: the games on the platform with their observation, action and config JSON schemas."""

from __future__ import annotations

from fastapi import APIRouter

from services.gateway.games import service
from services.gateway.games.schemas import GameOut
from services.gateway.openapi import not_found

router = APIRouter(prefix="/games", tags=["games"])


@router.get("", response_model=list[GameOut], summary="List the games")
def list_games() -> list[GameOut]:
    """Every game on the platform with its player counts and JSON schemas."""
    return service.describe_all()


@router.get(
    "/{name}",
    response_model=GameOut,
    summary="Describe a game",
    responses=not_found("No game has this name."),
)
def get_game(name: str) -> GameOut:
    """One game: its rules in brief, observation, action and config JSON schemas."""
    return service.describe(name)
