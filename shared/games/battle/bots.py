"""Built-in battle bots: `decide(observation) -> action` functions.

Standard library only and self-contained, so this file also works as an uploaded bot or behind the
HTTP bot protocol. All three share the same senses (pooled sightings, memory of last known enemy
positions, team signals) and the same reflexes (lead aiming, no shooting through walls or friends,
dodging incoming shots); they differ in how they choose where to stand:

- aggressive: closes to mid range and strafes, following teammates' "enemy" signals.
- defensive: holds a post in front of its spawn, hides behind walls while reloading, calls for help.
- sniper: keeps long range, fires only at range, relocates after each shot, scans when blind.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Obs = dict[str, Any]
Point = tuple[float, float]

MEMORY_TTL_TICKS = 600  # forget enemy sightings after 5 s
SIGNAL_TTL_TICKS = 72


# ---------------------------------------------------------------- geometry
def _dist(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _point_seg_dist(px: float, py: float, x1: float, y1: float, x2: float, y2: float) -> float:
    ex, ey = x2 - x1, y2 - y1
    l2 = ex * ex + ey * ey
    t = 0.0 if l2 == 0 else max(0.0, min(1.0, ((px - x1) * ex + (py - y1) * ey) / l2))
    return math.hypot(px - x1 - t * ex, py - y1 - t * ey)


Wall = tuple[float, float, float, float, float, float, float, float]
"""(min x, max x, min y, max y, x1, y1, x2, y2): a wall with its bounding box, for quick rejection."""


GRID_CELL = 5.0
"""Side (m) of the grid cells that index walls for short path checks."""


class Walls:
    """The map's walls with bounding boxes, prepared once per map (a box test rejects most walls), and
    a grid of cells listing the walls whose box touches each cell, so a short path checks only those."""

    def __init__(self, walls: list[list[float]]) -> None:
        self.raw = walls
        self.items: list[Wall] = [
            (min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2), x1, y1, x2, y2) for x1, y1, x2, y2 in walls
        ]
        cells: dict[tuple[int, int], list[Wall]] = {}
        for w in self.items:
            for cx in range(int(w[0] // GRID_CELL), int(w[1] // GRID_CELL) + 1):
                for cy in range(int(w[2] // GRID_CELL), int(w[3] // GRID_CELL) + 1):
                    cells.setdefault((cx, cy), []).append(w)
        self.cells: dict[tuple[int, int], tuple[Wall, ...]] = {k: tuple(v) for k, v in cells.items()}

    def near(self, lox: float, hix: float, loy: float, hiy: float) -> Sequence[Wall]:
        """Every wall whose box can overlap the box [lox, hix] x [loy, hiy] (some maybe twice): those of
        the grid cells it covers when they are at most two by two, else all of them."""
        if not (hix - lox < 2.0 * GRID_CELL and hiy - loy < 2.0 * GRID_CELL):  # long (or not finite)
            return self.items
        cx0, cx1 = int(lox // GRID_CELL), int(hix // GRID_CELL)
        cy0, cy1 = int(loy // GRID_CELL), int(hiy // GRID_CELL)
        if cx1 - cx0 > 1 or cy1 - cy0 > 1:
            return self.items
        get, none = self.cells.get, ()
        out = get((cx0, cy0), none)
        if cx1 != cx0:
            out += get((cx1, cy0), none)
        if cy1 != cy0:
            out += get((cx0, cy1), none)
            if cx1 != cx0:
                out += get((cx1, cy1), none)
        return out


_wall_cache: list[Any] = [None]


def prepare_walls(walls: list[list[float]]) -> Walls:
    """Prepared walls; the last map's result is kept since the map never changes during a match."""
    cached: Walls | None = _wall_cache[0]
    if cached is not None and (cached.raw is walls or cached.raw == walls):
        return cached
    _wall_cache[0] = out = Walls(walls)
    return out


def path_blocked(a: Point, b: Point, walls: Walls, clearance: float) -> bool:
    """Whether a straight path from a to b passes within `clearance` of any wall."""
    ax, ay = a
    bx, by = b
    lox, hix = (ax if ax < bx else bx) - clearance, (bx if ax < bx else ax) + clearance
    loy, hiy = (ay if ay < by else by) - clearance, (by if ay < by else ay) + clearance
    for wx0, wx1, wy0, wy1, x1, y1, x2, y2 in walls.near(lox, hix, loy, hiy):
        if wx1 < lox or wx0 > hix or wy1 < loy or wy0 > hiy:
            continue
        # Proper crossing test by orientations, then the four end-to-segment distances.
        d1 = (bx - ax) * (y1 - ay) - (by - ay) * (x1 - ax)
        d2 = (bx - ax) * (y2 - ay) - (by - ay) * (x2 - ax)
        d3 = (x2 - x1) * (ay - y1) - (y2 - y1) * (ax - x1)
        d4 = (x2 - x1) * (by - y1) - (y2 - y1) * (bx - x1)
        if d1 * d2 < 0 and d3 * d4 < 0:
            return True
        if clearance > 0 and (
            _point_seg_dist(x1, y1, ax, ay, bx, by) < clearance
            or _point_seg_dist(x2, y2, ax, ay, bx, by) < clearance
            or _point_seg_dist(ax, ay, x1, y1, x2, y2) < clearance
            or _point_seg_dist(bx, by, x1, y1, x2, y2) < clearance
        ):
            return True
    return False


def lead_point(shooter: Point, target: Point, velocity: Point, speed: float) -> Point:
    """Where to aim so a projectile at `speed` meets a target moving at constant `velocity`."""
    dx, dy = target[0] - shooter[0], target[1] - shooter[1]
    vx, vy = velocity
    a = vx * vx + vy * vy - speed * speed
    b = 2 * (dx * vx + dy * vy)
    c = dx * dx + dy * dy
    t = math.sqrt(c) / speed
    if abs(a) > 1e-9:
        disc = b * b - 4 * a * c
        if disc >= 0:
            roots = [r for r in ((-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)) if r > 0]
            if roots:
                t = min(roots)
    return target[0] + vx * t, target[1] + vy * t


def incoming_dodge(me: Obs, projectiles: list[Obs], radius: float) -> str | None:
    """ "left"/"right" to leave the path of the most urgent projectile about to hit, else None."""
    px, py = me["position"]
    best_t, side = 0.8, None
    for p in projectiles:
        (qx, qy), (vx, vy) = p["position"], p["velocity"]
        v2 = vx * vx + vy * vy
        if v2 == 0:
            continue
        rx, ry = px - qx, py - qy
        t = (rx * vx + ry * vy) / v2
        if t <= 0 or t > min(best_t, p["ttl"]):
            continue
        mx, my = rx - vx * t, ry - vy * t  # from the projectile's path to me at closest approach
        if math.hypot(mx, my) > radius + 0.4:
            continue
        best_t = t
        h = me["heading"]
        lx, ly = -math.sin(h), math.cos(h)
        if abs(mx) + abs(my) < 1e-6:  # dead centre: step to whichever side is perpendicular to the shot
            mx, my = -vy, vx
        side = "left" if mx * lx + my * ly >= 0 else "right"
    return side


def steer(pos: Point, goal: Point, walls: Walls, clearance: float, prefer: float) -> Point:
    """A waypoint toward `goal`: the goal itself if the next few metres are clear, else the clear 3 m
    step closest in angle to it (trying the `prefer` side first, so a unit follows a wall consistently).
    Only the near part of the path is checked: the bot plans again every turn anyway."""
    d = _dist(pos, goal)
    if d < 0.3:
        return goal
    base = math.atan2(goal[1] - pos[1], goal[0] - pos[0])
    reach = min(d, 4.0)
    near = (pos[0] + reach * math.cos(base), pos[1] + reach * math.sin(base))
    if not path_blocked(pos, near, walls, clearance):
        return goal
    for off in (0.45, 0.9, 1.35, 1.8, 2.4, 3.0):
        for sgn in (prefer, -prefer):
            a = base + sgn * off
            q = (pos[0] + 3.0 * math.cos(a), pos[1] + 3.0 * math.sin(a))
            if not path_blocked(pos, q, walls, clearance):
                return q
    return goal


# ---------------------------------------------------------------- shared senses
class Senses:
    """What the whole team knows this turn: pooled sightings, memory and teammates' signals."""

    def __init__(self, obs: Obs) -> None:
        c = obs["constants"]
        self.c = c
        self.team = obs["team"]
        self.tick = obs["tick"]
        self.walls = prepare_walls(c["walls"])
        self.width, self.height = c["width"], c["height"]
        self.radius = c["unit_radius"]
        self.speed = c["projectile_speed"]
        self.mine = [u for u in obs["units"] if u["self"]["alive"]]
        mem = obs.get("memory") or {}
        self.mem: dict[str, Any] = mem if isinstance(mem, dict) else {}
        self.enemies: dict[str, Obs] = {}
        self.friends: dict[str, Obs] = {}
        for u in self.mine:
            for v in u["visible_units"]:
                book = self.friends if v["team"] == self.team else self.enemies
                book.setdefault(v["id"], v)
        seen = self.mem.get("seen", {}) if isinstance(self.mem.get("seen"), dict) else {}
        self.last_seen: dict[str, list[float]] = {
            k: v
            for k, v in seen.items()
            if isinstance(v, list)
            and len(v) == 3
            and self.tick - v[2] < MEMORY_TTL_TICKS
            and k not in self.enemies
        }
        for eid, e in self.enemies.items():
            self.last_seen[eid] = [round(e["position"][0], 1), round(e["position"][1], 1), self.tick]
        self.reports: list[Point] = []
        for s in obs["team_channel"]:
            if s["alive"] and s["word"] == "enemy" and 0 <= s["age"] < SIGNAL_TTL_TICKS:
                self.reports.append(self.denorm(s["values"]))
        others = [sp for i, sp in enumerate(c["spawns"]) if i != self.team]
        self.enemy_home = (
            tuple(others[0][len(others[0]) // 2]) if others else (self.width / 2, self.height / 2)
        )
        home = c["spawns"][self.team]
        spot = home[len(home) // 2]
        self.home: Point = (spot[0], spot[1])

    def norm(self, p: Point) -> list[float]:
        return [round(2 * p[0] / self.width - 1, 3), round(2 * p[1] / self.height - 1, 3)]

    def denorm(self, v: list[float]) -> Point:
        return (v[0] + 1) * self.width / 2, (v[1] + 1) * self.height / 2

    def nearest_enemy(self, pos: Point) -> Obs | None:
        best = None
        for e in self.enemies.values():
            if best is None or _dist(pos, e["position"]) < _dist(pos, best["position"]):
                best = e
        return best

    def rumour(self, pos: Point) -> Point | None:
        """Closest place an enemy is believed to be: a teammate's report or a remembered sighting."""
        places = list(self.reports) + [(v[0], v[1]) for v in self.last_seen.values()]
        return min(places, key=lambda p: _dist(pos, p)) if places else None

    def memory(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"seen": self.last_seen}
        if extra:
            out.update(extra)
        return out


def fire_solution(s: Senses, unit: Obs, target: Obs) -> Point | None:
    """A lead-corrected aim point, or None when walls or friends are in the way."""
    me = unit["self"]
    pos = me["position"]
    aim = lead_point(pos, target["position"], target["velocity"], s.speed)
    if path_blocked(pos, aim, s.walls, 0.25):
        return None
    for f in unit["visible_units"]:
        if f["team"] != s.team:
            continue
        fp = f["position"]
        if _dist(pos, fp) < _dist(pos, aim) and _point_seg_dist(
            fp[0], fp[1], pos[0], pos[1], aim[0], aim[1]
        ) < (s.radius + 0.35):
            return None
    return aim


def cover_point(s: Senses, pos: Point, threat: Point, ring: float = 2.5) -> Point | None:
    """The nearest spot around `pos` from which walls hide the unit from `threat`."""
    best, best_d = None, 1e9
    for k in range(8):
        a = k * math.pi / 4
        q = (pos[0] + ring * math.cos(a), pos[1] + ring * math.sin(a))
        if not (1 < q[0] < s.width - 1 and 1 < q[1] < s.height - 1):
            continue
        if path_blocked(q, threat, s.walls, 0.0) and not path_blocked(pos, q, s.walls, s.radius + 0.05):
            d = _dist(pos, q)
            if d < best_d:
                best, best_d = q, d
    return best


def _face(pos: Point, goal: Point, fallback: float) -> float:
    if _dist(pos, goal) < 0.5:
        return fallback
    return math.atan2(goal[1] - pos[1], goal[0] - pos[0])


def _clamp(s: Senses, p: Point) -> list[float]:
    m = s.radius + 0.1
    return [min(max(p[0], m), s.width - m), min(max(p[1], m), s.height - m)]


def _base_orders(s: Senses, unit: Obs) -> dict[str, Any]:
    """Reflexes every bot shares: dodge incoming shots and report the nearest enemy to the team."""
    me = unit["self"]
    cmd: dict[str, Any] = {}
    if me["dodge_ready"]:
        hostile = [p for p in unit["visible_projectiles"] if p["team"] != s.team]
        side = incoming_dodge(me, hostile, s.radius)
        if side:
            cmd["dodge"] = side
    enemy = s.nearest_enemy(me["position"])
    if enemy is not None:
        cmd["signal"] = {"word": "enemy", "values": s.norm(enemy["position"])}
    return cmd


# ---------------------------------------------------------------- the bots
def aggressive(obs: Obs) -> dict[str, Any]:
    """Close to ~7 m, strafe, shoot everything in sight; follow teammates' reports when blind."""
    s = Senses(obs)
    orders: dict[str, Any] = {}
    for unit in s.mine:
        me = unit["self"]
        pos = (me["position"][0], me["position"][1])
        cmd = _base_orders(s, unit)
        enemy = s.nearest_enemy(pos)
        prefer = 1.0 if me["id"][-1] in "02468" else -1.0
        if enemy is not None:
            ep = enemy["position"]
            d = _dist(pos, ep)
            ang = math.atan2(ep[1] - pos[1], ep[0] - pos[0])
            strafe = prefer if (obs["turn"] // 6) % 2 == 0 else -prefer
            side = ang + strafe * math.pi / 2
            push = 2.0 if d > 7 else (-1.5 if d < 4 else 0.0)
            goal = (
                pos[0] + push * math.cos(ang) + 1.5 * math.cos(side),
                pos[1] + push * math.sin(ang) + 1.5 * math.sin(side),
            )
            aim = fire_solution(s, unit, enemy)
            if aim is not None:
                cmd["fire"] = [aim[0], aim[1]]
            else:
                cmd["turn"] = ang
                goal = ep
            cmd["move"] = _clamp(s, steer(pos, goal, s.walls, s.radius + 0.05, prefer))
        else:
            goal = s.rumour(pos) or s.enemy_home
            cmd["move"] = _clamp(s, steer(pos, goal, s.walls, s.radius + 0.05, prefer))
            cmd["turn"] = _face(pos, cmd["move"], me["heading"])
        orders[me["id"]] = cmd
    return {"units": orders, "memory": s.memory()}


def defensive(obs: Obs) -> dict[str, Any]:
    """Hold a post in front of home, duck behind cover while reloading, fall back and call for help."""
    s = Senses(obs)
    orders: dict[str, Any] = {}
    cx, cy = s.width / 2, s.height / 2
    # When nothing has been seen or reported for a while, the post creeps toward the enemy's side.
    contact = s.mem.get("contact", 0) if isinstance(s.mem.get("contact"), int) else 0
    if s.enemies or s.reports:
        contact = s.tick
    quiet_s = max(0.0, (s.tick - contact) / s.c["physics_hz"] - 5.0)
    depth = min(6.0 + 1.5 * quiet_s, _dist(s.home, s.enemy_home) - 8.0)
    for i, unit in enumerate(s.mine):
        me = unit["self"]
        pos = (me["position"][0], me["position"][1])
        cmd = _base_orders(s, unit)
        hx, hy = s.home
        toward = math.atan2(cy - hy, cx - hx)
        spread = (i - (len(s.mine) - 1) / 2) * 3.0
        post = (
            hx + depth * math.cos(toward) - spread * math.sin(toward),
            hy + depth * math.sin(toward) + spread * math.cos(toward),
        )
        prefer = 1.0 if i % 2 == 0 else -1.0
        enemy = s.nearest_enemy(pos)
        if me["hp"] < 40:
            post = (hx, hy)
            cmd["signal"] = {"word": "help", "values": s.norm(pos)}
        if enemy is not None:
            ep = (enemy["position"][0], enemy["position"][1])
            aim = fire_solution(s, unit, enemy) if me["cooldown"] < 0.25 else None
            if aim is not None:
                cmd["fire"] = [aim[0], aim[1]]
                goal = (
                    post
                    if _dist(pos, ep) > 6
                    else (pos[0] - (ep[0] - pos[0]) * 0.5, pos[1] - (ep[1] - pos[1]) * 0.5)
                )
            else:
                cmd["turn"] = math.atan2(ep[1] - pos[1], ep[0] - pos[0])
                goal = cover_point(s, pos, ep) or post
        else:
            rumour = s.rumour(pos)
            look = rumour or s.enemy_home
            cmd["turn"] = _face(pos, look, toward)
            goal = post
        cmd["move"] = _clamp(s, steer(pos, goal, s.walls, s.radius + 0.05, prefer))
        orders[me["id"]] = cmd
    return {"units": orders, "memory": s.memory({"contact": contact})}


def sniper(obs: Obs) -> dict[str, Any]:
    """Keep 11-16 m away, shoot only from range, relocate after each shot, sweep the view when blind."""
    s = Senses(obs)
    orders: dict[str, Any] = {}
    sweep = s.mem.get("sweep", 1) if s.mem.get("sweep") in (1, -1) else 1
    for i, unit in enumerate(s.mine):
        me = unit["self"]
        pos = (me["position"][0], me["position"][1])
        cmd = _base_orders(s, unit)
        prefer = 1.0 if i % 2 == 0 else -1.0
        enemy = s.nearest_enemy(pos)
        if enemy is not None:
            ep = (enemy["position"][0], enemy["position"][1])
            d = _dist(pos, ep)
            ang = math.atan2(ep[1] - pos[1], ep[0] - pos[0])
            aim = fire_solution(s, unit, enemy)
            if aim is not None and d >= 8.0:
                cmd["fire"] = [aim[0], aim[1]]
            else:
                cmd["turn"] = ang
            if d < 11:
                goal = (pos[0] - 3 * math.cos(ang), pos[1] - 3 * math.sin(ang))
            elif not me["can_fire"]:
                goal = cover_point(s, pos, ep) or (
                    pos[0] + 2 * math.cos(ang + prefer * 1.57),
                    pos[1] + 2 * math.sin(ang + prefer * 1.57),
                )
            elif d > 16:
                goal = (pos[0] + 2 * math.cos(ang), pos[1] + 2 * math.sin(ang))
            else:
                goal = pos
        else:
            rumour = s.rumour(pos)
            target = rumour or s.enemy_home
            ang = math.atan2(target[1] - pos[1], target[0] - pos[0])
            d = _dist(pos, target)
            goal = (pos[0] + 2 * math.cos(ang), pos[1] + 2 * math.sin(ang)) if d > 14 else pos
            cmd["turn"] = ang + sweep * prefer * 0.5 * (1 if obs["turn"] % 4 < 2 else -1)
        cmd["move"] = _clamp(s, steer(pos, goal, s.walls, s.radius + 0.05, prefer))
        orders[me["id"]] = cmd
    return {"units": orders, "memory": s.memory({"sweep": -sweep})}


def idle(_obs: Obs) -> dict[str, Any]:
    """Does nothing: a baseline opponent for tests and benchmarks."""
    return {"units": {}}


BOTS = {"aggressive": aggressive, "defensive": defensive, "sniper": sniper}
