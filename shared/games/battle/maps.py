"""Arena layouts: a seeded generator of mirror-symmetric, connected maps and a few hand-made ones.

Maps are occupancy grids of 2 m cells. Obstacles are placed on one half (quarter with more than two
players) and mirrored, so every side faces the same terrain. Walls are the merged boundary edges of the
occupied cells plus the arena border, computed once per match.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

CELL = 2.0
"""Grid cell size in metres; twice a unit's diameter, so any free 4-connected path is walkable."""

Grid = tuple[tuple[bool, ...], ...]
"""grid[row][col], row 0 at y = 0; True means solid."""

Segment = tuple[float, float, float, float]

# Hand-made maps for the default 40 x 26 arena: the left half (10 columns x 13 rows), top row printed
# first; the right half is its mirror image. '#' is solid.
_NAMED_LEFT_HALVES: dict[str, tuple[str, ...]] = {
    "open": ("." * 10,) * 13,
    "pillars": (
        "..........",
        "..........",
        "....#....#",
        "..........",
        "......#...",
        "..........",
        "....#....#",
        "..........",
        "......#...",
        "..........",
        "....#....#",
        "..........",
        "..........",
    ),
    "corridors": (
        "..........",
        "..........",
        "....######",
        "..........",
        "..........",
        ".....#....",
        ".....#....",
        ".....#....",
        "..........",
        "..........",
        "....######",
        "..........",
        "..........",
    ),
    "bunkers": (
        "..........",
        "......#...",
        "...##.#...",
        "..........",
        "........##",
        "....#.....",
        "....#.....",
        "....#.....",
        "........##",
        "..........",
        "...##.#...",
        "......#...",
        "..........",
    ),
}
NAMED_MAP_SIZE = (40.0, 26.0)


@dataclass(frozen=True, slots=True)
class BattleMap:
    name: str
    width: float
    height: float
    grid: Grid
    walls: tuple[Segment, ...]
    """Obstacle boundary segments followed by the four border segments."""
    spawns: tuple[tuple[tuple[float, float], ...], ...]
    """Per player, one spawn point per unit."""

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "width": self.width,
            "height": self.height,
            "cell": CELL,
            "walls": [list(w) for w in self.walls],
        }


def spawn_points(
    width: float, height: float, num_players: int, units: int
) -> list[list[tuple[float, float]]]:
    """Spawn lines for each player: left, right, bottom, top edges, facing the centre."""
    sides = ("left", "right", "bottom", "top")[:num_players]
    out: list[list[tuple[float, float]]] = []
    for side in sides:
        along = height if side in ("left", "right") else width
        per_line = max(1, int((along - 4.0) // CELL))
        points: list[tuple[float, float]] = []
        for i in range(units):
            line, slot = divmod(i, per_line)
            in_line = min(per_line, units - line * per_line)
            offset = (slot - (in_line - 1) / 2.0) * CELL
            depth = 2.0 + line * CELL * 0.75
            if side == "left":
                points.append((depth, height / 2 + offset))
            elif side == "right":
                points.append((width - depth, height / 2 + offset))
            elif side == "bottom":
                points.append((width / 2 + offset, depth))
            else:
                points.append((width / 2 + offset, height - depth))
        out.append(points)
    return out


def _spawn_cells(cols: int, rows: int, num_players: int) -> set[tuple[int, int]]:
    """Cells kept free for spawning: three columns (rows) along each used side."""
    keep: set[tuple[int, int]] = set()
    for r in range(rows):
        for c in range(3):
            keep.add((r, c))
            keep.add((r, cols - 1 - c))
    if num_players > 2:
        for c in range(cols):
            for r in range(3):
                keep.add((r, c))
                keep.add((rows - 1 - r, c))
    return keep


def free_cells_connected(grid: Grid) -> bool:
    """Whether all free cells form one 4-connected region (every spot reachable from every spawn)."""
    rows, cols = len(grid), len(grid[0])
    free = [(r, c) for r in range(rows) for c in range(cols) if not grid[r][c]]
    if not free:
        return False
    seen = {free[0]}
    queue = deque([free[0]])
    while queue:
        r, c = queue.popleft()
        for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= nr < rows and 0 <= nc < cols and not grid[nr][nc] and (nr, nc) not in seen:
                seen.add((nr, nc))
                queue.append((nr, nc))
    return len(seen) == len(free)


def _random_grid(cols: int, rows: int, density: float, num_players: int, rng: random.Random) -> Grid:
    """Random rectangles in one half (or quarter) mirrored across the centre line(s)."""
    keep = _spawn_cells(cols, rows, num_players)
    half_c = cols // 2
    half_r = (rows + 1) // 2 if num_players > 2 else rows
    for _attempt in range(64):
        cells = [[False] * cols for _ in range(rows)]
        target = int(density * half_c * half_r)
        filled = 0
        for _ in range(200):
            if filled >= target:
                break
            w, h = rng.randint(1, 2), rng.randint(1, 4)
            if rng.random() < 0.5:
                w, h = h, w
            c0, r0 = rng.randint(0, half_c - 1), rng.randint(0, half_r - 1)
            for r in range(r0, min(r0 + h, half_r)):
                for c in range(c0, min(c0 + w, half_c)):
                    if (r, c) in keep or cells[r][c]:
                        continue
                    cells[r][c] = True
                    filled += 1
        for r in range(rows):
            for c in range(half_c):
                src = cells[r][c]
                if num_players > 2 and r >= half_r:
                    src = cells[rows - 1 - r][c]
                cells[r][c] = src
                cells[r][cols - 1 - c] = src
        grid = tuple(tuple(row) for row in cells)
        if free_cells_connected(grid):
            return grid
    return tuple(tuple(False for _ in range(cols)) for _ in range(rows))


def _named_grid(name: str) -> Grid:
    half = _NAMED_LEFT_HALVES[name]
    rows = [tuple(ch == "#" for ch in line) for line in reversed(half)]
    return tuple(row + tuple(reversed(row)) for row in rows)


def grid_walls(grid: Grid, width: float, height: float) -> tuple[Segment, ...]:
    """Merged boundary edges between solid and free cells, then the arena border."""
    rows, cols = len(grid), len(grid[0])

    def solid(r: int, c: int) -> bool:
        return r < 0 or c < 0 or r >= rows or c >= cols or grid[r][c]

    segs: list[Segment] = []
    for r in range(rows + 1):  # horizontal edges at y = r * CELL
        start = None
        for c in range(cols + 1):
            edge = c < cols and solid(r - 1, c) != solid(r, c)
            if edge and start is None:
                start = c
            elif not edge and start is not None:
                segs.append((start * CELL, r * CELL, c * CELL, r * CELL))
                start = None
    for c in range(cols + 1):  # vertical edges at x = c * CELL
        start = None
        for r in range(rows + 1):
            edge = r < rows and solid(r, c - 1) != solid(r, c)
            if edge and start is None:
                start = r
            elif not edge and start is not None:
                segs.append((c * CELL, start * CELL, c * CELL, r * CELL))
                start = None
    border = (
        (0.0, 0.0, width, 0.0),
        (width, 0.0, width, height),
        (width, height, 0.0, height),
        (0.0, height, 0.0, 0.0),
    )
    return (*segs, *border)


def build_map(
    name: str, width: float, height: float, seed: int, num_players: int, units: int, density: float
) -> BattleMap:
    """The map a match plays on; `name` is "random" or one of the hand-made layouts."""
    cols, rows = round(width / CELL), round(height / CELL)
    if name == "random":
        rng = random.Random(f"battle-map-{seed}-{cols}x{rows}-{num_players}")
        grid = _random_grid(cols, rows, density, num_players, rng)
    else:
        if name not in _NAMED_LEFT_HALVES:
            raise ValueError(f"unknown map {name!r}")
        if (width, height) != NAMED_MAP_SIZE:
            raise ValueError(f"map {name!r} needs a {NAMED_MAP_SIZE[0]:g} x {NAMED_MAP_SIZE[1]:g} arena")
        grid = _named_grid(name)
    spawns = spawn_points(width, height, num_players, units)
    return BattleMap(
        name=name,
        width=width,
        height=height,
        grid=grid,
        walls=grid_walls(grid, width, height),
        spawns=tuple(tuple(p) for p in spawns),
    )
