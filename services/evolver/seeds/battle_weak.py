"""A starting battle bot for evolution: sound reflexes, untuned numbers.

Each unit picks a visible (or team-reported) enemy, keeps a preferred distance from it while
strafing, fires with a lead correction when the line is clear, dodges shots about to hit it, backs
off when hurt, and hunts the last known enemy position when nothing is in sight. Every choice is
driven by a named constant below, so tuning them is how this bot gets better.
"""

from __future__ import annotations

import math
from typing import Any

Point = tuple[float, float]

# ---------------------------------------------------------------- tunable numbers
ENGAGE_RANGE = 10.0
"""Advance on the target while farther than this (m)."""
MIN_RANGE = 5.0
"""Back away from the target while closer than this (m)."""
ADVANCE_STEP = 2.0
BACKOFF_STEP = 1.5
STRAFE_DISTANCE = 1.0
"""Sideways offset of each move order while engaged (m)."""
STRAFE_PERIOD = 10
"""Turns between changes of strafing direction."""
FIRE_RANGE = 14.0
"""Shoot only at targets closer than this (m)."""
LEAD_FACTOR = 0.5
"""How much of the target's predicted motion to aim ahead (1.0 = full intercept)."""
FIRE_CLEARANCE = 0.2
"""Distance a shot's path must keep from walls (m)."""
FRIEND_CLEARANCE = 0.9
"""Distance a shot's path must keep from teammates (m)."""
RETREAT_HP = 40.0
"""Back off toward home below this many hit points (hits take 20 at a time)."""
RETREAT_STEP = 3.0
DODGE_HORIZON = 0.4
"""Dodge shots that reach the unit within this many seconds."""
DODGE_MARGIN = 0.7
"""Dodge when a shot's closest approach is within this much of the unit's radius (m)."""
LOW_HP_WEIGHT = 0.05
"""Metres of distance one hit point of a target's health counts for when choosing whom to shoot."""
MEMORY_TICKS = 360
"""Forget enemy sightings after this many ticks."""
SIGNAL_TICKS = 48
"""Ignore teammates' enemy reports older than this many ticks."""
HUNT_STEP = 4.0
"""How far ahead each move order points while hunting (m)."""
SCAN_ANGLE = 0.4
"""Half-width of the view sweep while hunting (rad)."""
SCAN_PERIOD = 4
STEER_LOOKAHEAD = 3.0
"""Length of the path checked against walls before moving (m)."""
STEER_CLEARANCE = 0.6
WALL_MARGIN = 0.7
"""Keep move targets this far inside the arena (m)."""


# ---------------------------------------------------------------- geometry
def _dist(a: Any, b: Any) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _seg_point_dist(px: float, py: float, x1: float, y1: float, x2: float, y2: float) -> float:
    ex, ey = x2 - x1, y2 - y1
    length_sq = ex * ex + ey * ey
    t = 0.0
    if length_sq > 0:
        t = max(0.0, min(1.0, ((px - x1) * ex + (py - y1) * ey) / length_sq))
    return math.hypot(px - x1 - t * ex, py - y1 - t * ey)


def _blocked(a: Point, b: Point, walls: list[list[float]], clearance: float) -> bool:
    """Whether the straight path a-b crosses a wall or passes within `clearance` of one."""
    ax, ay = a
    bx, by = b
    for x1, y1, x2, y2 in walls:
        if max(x1, x2) < min(ax, bx) - clearance or min(x1, x2) > max(ax, bx) + clearance:
            continue
        if max(y1, y2) < min(ay, by) - clearance or min(y1, y2) > max(ay, by) + clearance:
            continue
        d1 = (bx - ax) * (y1 - ay) - (by - ay) * (x1 - ax)
        d2 = (bx - ax) * (y2 - ay) - (by - ay) * (x2 - ax)
        d3 = (x2 - x1) * (ay - y1) - (y2 - y1) * (ax - x1)
        d4 = (x2 - x1) * (by - y1) - (y2 - y1) * (bx - x1)
        if d1 * d2 < 0 and d3 * d4 < 0:
            return True
        if (
            clearance > 0
            and min(
                _seg_point_dist(x1, y1, ax, ay, bx, by),
                _seg_point_dist(x2, y2, ax, ay, bx, by),
                _seg_point_dist(ax, ay, x1, y1, x2, y2),
                _seg_point_dist(bx, by, x1, y1, x2, y2),
            )
            < clearance
        ):
            return True
    return False


def _clamp(point: Point, width: float, height: float) -> list[float]:
    return [
        min(max(point[0], WALL_MARGIN), width - WALL_MARGIN),
        min(max(point[1], WALL_MARGIN), height - WALL_MARGIN),
    ]


def _steer(pos: Point, goal: Point, walls: list[list[float]], side: float) -> Point:
    """The goal if the first metres toward it are clear, else the clear step closest in angle."""
    distance = _dist(pos, goal)
    if distance < 0.3:
        return goal
    base = math.atan2(goal[1] - pos[1], goal[0] - pos[0])
    reach = min(distance, STEER_LOOKAHEAD)
    ahead = (pos[0] + reach * math.cos(base), pos[1] + reach * math.sin(base))
    if not _blocked(pos, ahead, walls, STEER_CLEARANCE):
        return goal
    for offset in (0.5, 1.0, 1.5, 2.0, 2.6):
        for sign in (side, -side):
            angle = base + sign * offset
            step = (pos[0] + reach * math.cos(angle), pos[1] + reach * math.sin(angle))
            if not _blocked(pos, step, walls, STEER_CLEARANCE):
                return step
    return goal


# ---------------------------------------------------------------- aiming and dodging
def _aim_point(shooter: Point, target: dict[str, Any], speed: float) -> Point:
    """Where to shoot: the target's position moved ahead by LEAD_FACTOR of the flight time."""
    tx, ty = target["position"]
    vx, vy = target["velocity"]
    flight = _dist(shooter, (tx, ty)) / speed
    for _ in range(3):
        flight = _dist(shooter, (tx + vx * flight, ty + vy * flight)) / speed
    return tx + LEAD_FACTOR * vx * flight, ty + LEAD_FACTOR * vy * flight


def _line_clear(
    pos: Point, aim: Point, unit: dict[str, Any], team: int, walls: list[list[float]], radius: float
) -> bool:
    if _blocked(pos, aim, walls, FIRE_CLEARANCE):
        return False
    for other in unit["visible_units"]:
        if other["team"] != team:
            continue
        fx, fy = other["position"]
        if _dist(pos, (fx, fy)) < _dist(pos, aim) and (
            _seg_point_dist(fx, fy, pos[0], pos[1], aim[0], aim[1]) < radius + FRIEND_CLEARANCE
        ):
            return False
    return True


def _dodge_side(me: dict[str, Any], projectiles: list[Any], team: int, radius: float) -> str | None:
    """'left' or 'right' to step out of the way of the most urgent hostile shot, else None."""
    px, py = me["position"]
    best, side = DODGE_HORIZON, None
    for shot in projectiles:
        if shot["team"] == team:
            continue
        (qx, qy), (vx, vy) = shot["position"], shot["velocity"]
        speed_sq = vx * vx + vy * vy
        if speed_sq == 0:
            continue
        rx, ry = px - qx, py - qy
        t = (rx * vx + ry * vy) / speed_sq
        if t <= 0 or t > best or t > shot["ttl"]:
            continue
        mx, my = rx - vx * t, ry - vy * t
        if math.hypot(mx, my) > radius + DODGE_MARGIN:
            continue
        best = t
        heading = me["heading"]
        if abs(mx) + abs(my) < 1e-6:
            mx, my = -vy, vx
        side = "left" if mx * -math.sin(heading) + my * math.cos(heading) >= 0 else "right"
    return side


# ---------------------------------------------------------------- the bot
def _known_enemies(obs: dict[str, Any], team: int) -> dict[str, Any]:
    """Enemies seen by any teammate this turn, by id."""
    enemies: dict[str, Any] = {}
    for unit in obs["units"]:
        if not unit["self"]["alive"]:
            continue
        for other in unit["visible_units"]:
            if other["team"] != team:
                enemies.setdefault(other["id"], other)
    return enemies


def _remembered(obs: dict[str, Any], enemies: dict[str, Any]) -> dict[str, list[float]]:
    """Last known enemy positions [x, y, tick], refreshed with this turn's sightings."""
    memory = obs.get("memory")
    seen = memory.get("seen") if isinstance(memory, dict) else None
    kept: dict[str, list[float]] = {}
    if isinstance(seen, dict):
        for key, value in seen.items():
            if isinstance(value, list) and len(value) == 3 and obs["tick"] - value[2] < MEMORY_TICKS:
                kept[key] = value
    for key, enemy in enemies.items():
        kept[key] = [round(enemy["position"][0], 1), round(enemy["position"][1], 1), obs["tick"]]
    return kept


def _hunt_goal(
    obs: dict[str, Any], pos: Point, remembered: dict[str, list[float]], width: float, height: float
) -> Point:
    """Where an enemy probably is: a fresh team report, a remembered sighting, or the enemy's spawn."""
    places = []
    for signal in obs["team_channel"]:
        if signal["alive"] and signal["word"] == "enemy" and 0 <= signal["age"] < SIGNAL_TICKS:
            vx, vy = signal["values"]
            places.append(((vx + 1) * width / 2, (vy + 1) * height / 2))
    for value in remembered.values():
        places.append((value[0], value[1]))
    if places:
        return min(places, key=lambda place: _dist(pos, place))
    spawns = obs["constants"]["spawns"]
    others = [spots for index, spots in enumerate(spawns) if index != obs["team"]]
    if not others:
        return width / 2, height / 2
    spot = others[0][len(others[0]) // 2]
    return spot[0], spot[1]


def _choose_target(pos: Point, enemies: dict[str, Any]) -> Any:
    best, best_score = None, 0.0
    for enemy in enemies.values():
        score = _dist(pos, enemy["position"]) + LOW_HP_WEIGHT * enemy["hp"]
        if best is None or score < best_score:
            best, best_score = enemy, score
    return best


def decide(obs: dict[str, Any]) -> dict[str, Any]:
    constants = obs["constants"]
    team = obs["team"]
    width, height = constants["width"], constants["height"]
    walls = constants["walls"]
    radius = constants["unit_radius"]
    speed = constants["projectile_speed"]
    enemies = _known_enemies(obs, team)
    remembered = _remembered(obs, enemies)
    home_spots = constants["spawns"][team]
    home = home_spots[len(home_spots) // 2]
    orders: dict[str, Any] = {}
    for index, unit in enumerate(obs["units"]):
        me = unit["self"]
        if not me["alive"]:
            continue
        pos = (me["position"][0], me["position"][1])
        side = 1.0 if index % 2 == 0 else -1.0
        command: dict[str, Any] = {}
        if me["dodge_ready"]:
            dodge = _dodge_side(me, unit["visible_projectiles"], team, radius)
            if dodge is not None:
                command["dodge"] = dodge
        target = _choose_target(pos, enemies)
        if target is not None:
            tp = target["position"]
            distance = _dist(pos, tp)
            angle = math.atan2(tp[1] - pos[1], tp[0] - pos[0])
            command["signal"] = {
                "word": "enemy",
                "values": [round(2 * tp[0] / width - 1, 3), round(2 * tp[1] / height - 1, 3)],
            }
            if me["hp"] < RETREAT_HP:
                push = -RETREAT_STEP
                goal = (pos[0] + (home[0] - pos[0]) * 0.3, pos[1] + (home[1] - pos[1]) * 0.3)
            else:
                push = ADVANCE_STEP if distance > ENGAGE_RANGE else 0.0
                if distance < MIN_RANGE:
                    push = -BACKOFF_STEP
                goal = pos
            strafe = side if (obs["turn"] // STRAFE_PERIOD) % 2 == 0 else -side
            sideways = angle + strafe * math.pi / 2
            goal = (
                goal[0] + push * math.cos(angle) + STRAFE_DISTANCE * math.cos(sideways),
                goal[1] + push * math.sin(angle) + STRAFE_DISTANCE * math.sin(sideways),
            )
            aim = _aim_point(pos, target, speed)
            if distance < FIRE_RANGE and _line_clear(pos, aim, unit, team, walls, radius):
                command["fire"] = [aim[0], aim[1]]
            else:
                command["turn"] = angle
                if distance > MIN_RANGE:
                    goal = (tp[0], tp[1])
        else:
            hunt = _hunt_goal(obs, pos, remembered, width, height)
            angle = math.atan2(hunt[1] - pos[1], hunt[0] - pos[0])
            goal = (pos[0] + HUNT_STEP * math.cos(angle), pos[1] + HUNT_STEP * math.sin(angle))
            if _dist(pos, hunt) < HUNT_STEP:
                goal = hunt
            sweep = SCAN_ANGLE if obs["turn"] % SCAN_PERIOD < SCAN_PERIOD // 2 else -SCAN_ANGLE
            command["turn"] = angle + sweep
        command["move"] = _clamp(_steer(pos, goal, walls, side), width, height)
        orders[me["id"]] = command
    return {"units": orders, "memory": {"seen": remembered}}
