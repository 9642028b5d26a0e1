"""What each unit sees: units, projectiles and walls inside its field of view, in range and in sight.

Every live unit and projectile is tested against each viewer's range and cone in plain Python (cheaper
than a spatial query at these body counts), and each one in the cone gets one wall-only segment query
for its line of sight. Walls never
move: their sample points are prepared once per match and tested for every viewer at once with numpy.
Results are computed once per tick and shared by every player's observation of that tick.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shared.games.battle.world import Unit, World, wall_query

JSONDict = dict[str, object]
WALL_SAMPLE_SPACING = 2.0


@dataclass(slots=True)
class View:
    """One unit's perception at one tick (JSON-ready lists, sorted by id for determinism)."""

    units: list[JSONDict]
    projectiles: list[JSONDict]
    walls: list[int]
    """Indices into the match's wall list (observation constants.walls)."""


EMPTY_VIEW = View([], [], [])


def signal_json(world: World, word: str, values: tuple[float, float], sent_tick: int) -> JSONDict:
    return {
        "word": word,
        "values": [values[0], values[1]],
        "age": world.tick - sent_tick if sent_tick >= 0 else -1,
    }


class Perception:
    """Per-match perception with static wall geometry prepared once."""

    def __init__(self, world: World) -> None:
        self.world = world
        cfg = world.cfg
        self.range = cfg.sensor_range
        self.range2 = cfg.sensor_range * cfg.sensor_range
        self.half_fov = math.radians(cfg.fov_deg) / 2.0 + 1e-9
        self.full_circle = cfg.fov_deg >= 360.0
        self.walls = world.map.walls
        # Points at most WALL_SAMPLE_SPACING apart along each wall (ends included), grouped by wall;
        # a wall is visible when any of its points is in the cone and range.
        xs: list[float] = []
        ys: list[float] = []
        ends: list[int] = []
        for x1, y1, x2, y2 in world.map.walls:
            k = max(1, math.ceil(math.hypot(x2 - x1, y2 - y1) / WALL_SAMPLE_SPACING))
            xs.extend(x1 + (x2 - x1) * i / k for i in range(k + 1))
            ys.extend(y1 + (y2 - y1) * i / k for i in range(k + 1))
            ends.append(len(xs))
        self._sx = np.array(xs)
        self._sy = np.array(ys)
        # Where each wall's points start: a per-wall "any" is one logical_or.reduceat (no group is empty).
        self._starts = np.array([0, *ends[:-1]] if ends else [], dtype=np.intp)
        self.cos_half = math.cos(min(math.pi, self.half_fov))
        self._tick = -1
        self._views: list[View] = []

    def views(self) -> list[View]:
        """Views for all units (index-aligned with world.units) at the current tick, cached."""
        w = self.world
        if self._tick != w.tick:
            self._views = self._compute()
            self._tick = w.tick
        return self._views

    def invalidate(self) -> None:
        """Forget the cached views (the world changed without the clock moving, e.g. a forfeit)."""
        self._tick = -1

    def _compute(self) -> list[View]:
        w = self.world
        wall_hit = wall_query(w.space)
        r2, half, full = self.range2, self.half_fov, self.full_circle
        pi, two_pi, atan2, sqrt = math.pi, 2.0 * math.pi, math.atan2, math.sqrt
        tick = w.tick
        # One read of every live body per tick (pymunk attribute access is the slow part):
        # (sort key, x, y, public JSON, owning unit or None for a projectile).
        pos: dict[int, tuple[float, float]] = {}
        things: list[tuple[int, float, float, JSONDict, Unit | None]] = []
        unit_xy, proj_xy = w.positions()
        for u in w.units:
            if not u.alive:
                continue
            x, y = unit_xy[u.index]
            vx, vy = u.body.velocity
            pos[u.index] = (x, y)
            pub = {
                "id": u.uid,
                "team": u.player,
                "position": [x, y],
                "velocity": [vx, vy],
                "heading": u.heading,
                "hp": u.hp,
                "signal": signal_json(w, u.signal_word, u.signal_values, u.signal_tick),
            }
            things.append((u.index, x, y, pub, u))
        ttl_scale = w.cfg.dt
        for proj, x, y in proj_xy:
            pub = {
                "id": proj.pid,
                "team": proj.owner.player,
                "position": [x, y],
                "velocity": list(proj.velocity),
                "ttl": (proj.expire_tick - tick) * ttl_scale,
            }
            things.append((proj.pid, x, y, pub, None))
        los: dict[tuple[int, int], bool] = {}  # unit-to-unit sight is symmetric: query each pair once
        views: list[View] = []
        for u in w.units:
            if not u.alive:
                views.append(EMPTY_VIEW)
                continue
            x, y = pos[u.index]
            heading = u.heading
            seen_units: list[tuple[int, JSONDict]] = []
            seen_projs: list[tuple[int, JSONDict]] = []
            # A plain scan: with tens of bodies, distance and angle tests in Python beat a spatial query.
            for key, tx, ty, pub, owner in things:
                dx, dy = tx - x, ty - y
                d2 = dx * dx + dy * dy
                if d2 > r2 or owner is u:
                    continue
                bearing = (atan2(dy, dx) - heading + pi) % two_pi - pi if d2 > 0.0 else 0.0
                if not full and abs(bearing) > half:
                    continue
                if owner is None:
                    if wall_hit((x, y), (tx, ty)):
                        continue
                    seen = seen_projs
                else:
                    pair = (u.index, key) if u.index < key else (key, u.index)
                    clear = los.get(pair)
                    if clear is None:
                        clear = los[pair] = not wall_hit((x, y), (tx, ty))
                    if not clear:
                        continue
                    seen = seen_units
                entry = dict(pub)
                entry["bearing"] = bearing
                entry["distance"] = sqrt(d2)
                seen.append((key, entry))
            seen_units.sort(key=_first)
            seen_projs.sort(key=_first)
            views.append(View([e for _, e in seen_units], [e for _, e in seen_projs], []))
        self._fill_walls(views, pos)
        return views

    def _fill_walls(self, views: list[View], pos: dict[int, tuple[float, float]]) -> None:
        """Visible walls for every live unit at once (walls are part of the known map; this tells a bot
        which ones are in front of it, not what lies behind them). Elementwise numpy on (viewers,
        points) arrays and no BLAS, whose threads would fight over a single core."""
        live = [u for u in self.world.units if u.alive]
        if not live or len(self._starts) == 0:
            return
        a = np.array([(*pos[u.index], u.heading) for u in live])  # (viewers, 3): x, y, heading
        dx = self._sx - a[:, 0:1]  # (viewers, points)
        dy = self._sy - a[:, 1:2]
        dist2 = dx * dx
        dist2 += dy * dy
        ok = dist2 <= self.range2
        if not self.full_circle:
            # Inside the cone iff the angle to the heading is at most half the FOV: a dot-product test.
            heading = a[:, 2:3]
            dx *= np.cos(heading)
            dy *= np.sin(heading)
            dx += dy
            np.sqrt(dist2, out=dist2)
            dist2 *= self.cos_half
            ok &= dx >= dist2
        visible = np.logical_or.reduceat(ok, self._starts, axis=1)  # (viewers, walls)
        # One nonzero for all viewers (row-major: each row's walls ascending), split by row counts.
        walls = visible.nonzero()[1].tolist()
        start = 0
        for u, n in zip(live, visible.sum(axis=1).tolist(), strict=True):
            views[u.index].walls = walls[start : start + n]
            start += n


def _first(item: tuple[int, JSONDict]) -> int:
    return item[0]
