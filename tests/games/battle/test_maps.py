"""Generated maps are mirror-symmetric, connected and leave the spawns free; named maps too."""

from __future__ import annotations

from collections import deque

import pytest

from shared.games.battle.maps import CELL, BattleMap, Grid, Segment, build_map


def _connected(grid: Grid) -> bool:
    """Independent flood fill over free cells (4-neighbourhood)."""
    rows, cols = len(grid), len(grid[0])
    free = {(r, c) for r in range(rows) for c in range(cols) if not grid[r][c]}
    start = next(iter(sorted(free)))
    seen, todo = {start}, deque([start])
    while todo:
        r, c = todo.popleft()
        for n in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if n in free and n not in seen:
                seen.add(n)
                todo.append(n)
    return seen == free


def _norm(seg: Segment) -> tuple[tuple[float, float], ...]:
    a, b = (seg[0], seg[1]), (seg[2], seg[3])
    return tuple(sorted((a, b)))


def _check(bmap: BattleMap, num_players: int) -> None:
    grid = bmap.grid
    rows, cols = len(grid), len(grid[0])
    assert all(grid[r][c] == grid[r][cols - 1 - c] for r in range(rows) for c in range(cols))
    if num_players > 2:
        assert all(grid[r][c] == grid[rows - 1 - r][c] for r in range(rows) for c in range(cols))
    assert _connected(grid)
    walls = {_norm(w) for w in bmap.walls}
    mirrored = {_norm((bmap.width - w[0], w[1], bmap.width - w[2], w[3])) for w in bmap.walls}
    assert walls == mirrored
    for team in bmap.spawns:
        for x, y in team:
            # Spawn points sit on cell corners: every cell touching one must be free.
            for r in (int(y / CELL) - 1, int(y / CELL)):
                for c in (int(x / CELL) - 1, int(x / CELL)):
                    if 0 <= r < rows and 0 <= c < cols:
                        assert not grid[r][c], (x, y)
    left, right = bmap.spawns[0], bmap.spawns[1]
    assert sorted((bmap.width - x, y) for x, y in left) == sorted(right)


def test_random_maps_symmetric_and_connected_over_many_seeds() -> None:
    layouts = set()
    for seed in range(200):
        bmap = build_map("random", 40.0, 26.0, seed, 2, 3, 0.14)
        _check(bmap, 2)
        assert sum(map(sum, bmap.grid)) > 10  # not an empty arena
        layouts.add(bmap.grid)
    assert len(layouts) > 190  # seeds really vary the layout


def test_dense_big_and_four_player_maps() -> None:
    for seed in range(40):
        _check(build_map("random", 60.0, 36.0, seed, 2, 10, 0.3), 2)
        _check(build_map("random", 40.0, 26.0, seed, 4, 3, 0.2), 4)


def test_same_seed_same_map() -> None:
    assert build_map("random", 40.0, 26.0, 7, 2, 3, 0.14) == build_map("random", 40.0, 26.0, 7, 2, 3, 0.14)


@pytest.mark.parametrize("name", ["open", "pillars", "corridors", "bunkers"])
def test_named_maps(name: str) -> None:
    _check(build_map(name, 40.0, 26.0, 0, 2, 3, 0.14), 2)


def test_named_map_needs_its_size() -> None:
    with pytest.raises(ValueError, match="map 'pillars' needs a 40 x 26 arena"):
        build_map("pillars", 60.0, 36.0, 0, 2, 3, 0.14)
