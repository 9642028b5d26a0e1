"""Hand-placed battle scenarios: units and walls exactly where a test needs them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared.games.base import GameEvent
from shared.games.battle.config import BattleConfig
from shared.games.battle.game import BattleMatch
from shared.games.battle.maps import BattleMap, grid_walls

W, H = 40.0, 26.0


def scenario(
    units: list[list[tuple[float, float, float]]],
    walls: Sequence[tuple[float, float, float, float]] = (),
    **config: Any,
) -> BattleMatch:
    """A match on an open 40 x 26 arena with extra `walls`; units[player] = [(x, y, heading), ...]."""
    cfg = BattleConfig(**config)
    grid = tuple(tuple(False for _ in range(20)) for _ in range(13))
    bmap = BattleMap(
        name="test",
        width=W,
        height=H,
        grid=grid,
        walls=(*walls, *grid_walls(grid, W, H)),
        spawns=tuple(tuple((x, y) for x, y, _ in team) for team in units),
    )
    match = BattleMatch(0, len(units), cfg, bmap)
    for team, placed in zip(match.world.team_units, units, strict=True):
        for unit, (_, _, heading) in zip(team, placed, strict=True):
            unit.heading = heading
    return match


def run_turns(match: BattleMatch, n: int, actions: list[Any] | None = None) -> list[GameEvent]:
    """Step `n` turns with the same actions each turn; returns all events."""
    events: list[GameEvent] = []
    for _ in range(n):
        if match.finished:
            break
        events.extend(match.step(actions or [None] * match.num_players).events)
    return events


def pos(match: BattleMatch, uid: str) -> tuple[float, float]:
    return match.world.position(match.world.unit_by_id[uid])
