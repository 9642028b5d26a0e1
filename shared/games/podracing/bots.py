"""Built-in podracing bots, standard library only, so they also serve as starting points for bot authors.

Each bot is a `decide(observation) -> action` function on the JSON observation (see schemas.py).
"""

from __future__ import annotations

import math
from typing import Any

Point = tuple[float, float]

FRICTION = 0.85
CHECKPOINT_AIM_RADIUS = 550.0
"""A little inside the real 600 so that anticipation does not cut a checkpoint too fine."""
COAST_TURNS = 6
VELOCITY_COMPENSATION = 3.5
BOOST_MIN_DISTANCE = 4500.0
BOOST_MAX_ERROR = 4.0
MAX_ROTATION = 18.0
ORBIT_DISTANCE = 1800.0
ORBIT_ERROR = 60.0
ORBIT_THRUST = 0.3


def _distance(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _segment_hits(start: Point, end: Point, centre: Point, radius: float) -> bool:
    """Whether the segment start-end comes within `radius` of `centre`."""
    sx, sy = end[0] - start[0], end[1] - start[1]
    length_sq = sx * sx + sy * sy
    if length_sq == 0:
        return _distance(start, centre) < radius
    u = ((centre[0] - start[0]) * sx + (centre[1] - start[1]) * sy) / length_sq
    u = max(0.0, min(1.0, u))
    return _distance((start[0] + u * sx, start[1] + u * sy), centre) < radius


def _coasts_into(pod: dict[str, Any], centre: Point, turns: int = COAST_TURNS) -> bool:
    """Whether the pod reaches `centre` within `turns` turns without any more thrust."""
    x, y, vx, vy = float(pod["x"]), float(pod["y"]), float(pod["vx"]), float(pod["vy"])
    for _ in range(turns):
        nx, ny = x + vx, y + vy
        if _segment_hits((x, y), (nx, ny), centre, CHECKPOINT_AIM_RADIUS):
            return True
        x, y = nx, ny
        vx, vy = math.trunc(vx * FRICTION), math.trunc(vy * FRICTION)
    return False


def _heading_error(pod: dict[str, Any], aim: Point) -> float:
    """Degrees still off the aim after this turn's rotation (0 on the first turn: rotation is free)."""
    if pod["angle"] < 0:
        return 0.0
    wanted = math.degrees(math.atan2(aim[1] - pod["y"], aim[0] - pod["x"]))
    diff = (wanted - float(pod["angle"]) + 540.0) % 360.0 - 180.0
    return max(0.0, abs(diff) - MAX_ROTATION)


def _drift_error(pod: dict[str, Any], point: Point) -> float:
    """Degrees between where the pod is sliding and where `point` is (0 when it stands still)."""
    if pod["vx"] == 0 and pod["vy"] == 0:
        return 0.0
    drift = math.atan2(pod["vy"], pod["vx"])
    wanted = math.atan2(point[1] - pod["y"], point[0] - pod["x"])
    return abs((math.degrees(wanted - drift) + 540.0) % 360.0 - 180.0)


def _thrust_for(error: float, max_thrust: int) -> int:
    """Full thrust while roughly aligned, fading to nothing when facing away."""
    if error < 60.0:
        return max_thrust
    if error >= 120.0:
        return 0
    return int(max_thrust * (120.0 - error) / 60.0)


def _after_turn(pod: dict[str, Any], aim: Point, thrust: int) -> dict[str, Any]:
    """The pod one turn later if it flies alone: rotation (18 degrees), thrust, move, friction."""
    wanted = math.degrees(math.atan2(aim[1] - pod["y"], aim[0] - pod["x"]))
    if pod["angle"] < 0:
        angle = wanted
    else:
        diff = (wanted - pod["angle"] + 540.0) % 360.0 - 180.0
        angle = pod["angle"] + max(-MAX_ROTATION, min(MAX_ROTATION, diff))
    vx = pod["vx"] + math.cos(math.radians(angle)) * thrust
    vy = pod["vy"] + math.sin(math.radians(angle)) * thrust
    return {
        "x": round(pod["x"] + vx),
        "y": round(pod["y"] + vy),
        "vx": math.trunc(vx * FRICTION),
        "vy": math.trunc(vy * FRICTION),
        "angle": angle % 360.0,
    }


def _compensated(point: Point, pod: dict[str, Any]) -> Point:
    """Aim off by a few turns of the current velocity so that the drift carries the pod onto `point`."""
    return (point[0] - VELOCITY_COMPENSATION * pod["vx"], point[1] - VELOCITY_COMPENSATION * pod["vy"])


def _total_passes(observation: dict[str, Any]) -> int:
    return int(observation["checkpoint_count"]) * int(observation["laps"]) + 1


def race_pod(pod: dict[str, Any], observation: dict[str, Any], allow_boost: bool = True) -> dict[str, Any]:
    """Drive one pod round the track: velocity-corrected aim, anticipation, thrust by heading error.

    Anticipation: when the pod would drift into its checkpoint anyway, it already turns (and, if the
    drift still makes it, accelerates) towards the checkpoint after.
    """
    checkpoints = [(float(x), float(y)) for x, y in observation["checkpoints"]]
    count = len(checkpoints)
    current = checkpoints[pod["next_checkpoint"]]
    max_thrust = int(observation["max_thrust"])
    final = pod["checkpoints_passed"] >= _total_passes(observation) - 1
    if not final and _coasts_into(pod, current):
        following = checkpoints[(pod["next_checkpoint"] + 1) % count]
        aim = _compensated(following, pod)
        thrust = _thrust_for(_heading_error(pod, aim), max_thrust)
        while thrust > 0 and not _coasts_into(_after_turn(pod, aim, thrust), current, COAST_TURNS - 1):
            thrust //= 2
        return {"x": round(aim[0]), "y": round(aim[1]), "thrust": thrust}
    aim = _compensated(current, pod)
    error = _heading_error(pod, aim)
    command: int | str = _thrust_for(error, max_thrust)
    distance = _distance((pod["x"], pod["y"]), current)
    if distance < ORBIT_DISTANCE and _drift_error(pod, current) > ORBIT_ERROR:
        # Sliding past the checkpoint: thrust now would only keep the pod circling round it.
        command = min(int(command), int(max_thrust * ORBIT_THRUST))
    if allow_boost and pod["boost_available"] and error <= BOOST_MAX_ERROR and distance > BOOST_MIN_DISTANCE:
        command = "BOOST"
    return {"x": round(aim[0]), "y": round(aim[1]), "thrust": command}


def runner(observation: dict[str, Any]) -> dict[str, Any]:
    """Both pods race."""
    return {"pods": [race_pod(pod, observation) for pod in observation["pods"]]}


def _progress(pod: dict[str, Any], checkpoints: list[Point]) -> tuple[int, float]:
    centre = checkpoints[pod["next_checkpoint"]]
    return (pod["checkpoints_passed"], -_distance((pod["x"], pod["y"]), centre))


def _will_collide(one: dict[str, Any], two: dict[str, Any]) -> bool:
    """Whether the two pods, carrying on as they go, touch hard within the coming turn."""
    next_one = (one["x"] + one["vx"], one["y"] + one["vy"])
    next_two = (two["x"] + two["vx"], two["y"] + two["vy"])
    closing = math.hypot(one["vx"] - two["vx"], one["vy"] - two["vy"])
    return _distance(next_one, next_two) < 850.0 and closing > 250.0


def harass_pod(pod: dict[str, Any], observation: dict[str, Any]) -> dict[str, Any]:
    """Get between the opponent's leading pod and its next checkpoint, ram it, shield before impact."""
    checkpoints = [(float(x), float(y)) for x, y in observation["checkpoints"]]
    victim = max(observation["opponents"], key=lambda other: _progress(other, checkpoints))
    if pod["shield_cooldown"] == 0 and _will_collide(pod, victim):
        return {"x": victim["x"], "y": victim["y"], "thrust": "SHIELD"}
    position = (float(pod["x"]), float(pod["y"]))
    victim_at = (float(victim["x"] + victim["vx"]), float(victim["y"] + victim["vy"]))
    gate = checkpoints[victim["next_checkpoint"]]
    max_thrust = int(observation["max_thrust"])
    if _distance(position, victim_at) < 2500.0:
        aim = victim_at
        thrust = _thrust_for(_heading_error(pod, aim), max_thrust)
    else:
        # Wait a little in front of the checkpoint the victim is heading for.
        aim = (gate[0] + (victim_at[0] - gate[0]) * 0.25, gate[1] + (victim_at[1] - gate[1]) * 0.25)
        aim = _compensated(aim, pod)
        distance = _distance(position, aim)
        thrust = _thrust_for(_heading_error(pod, aim), max_thrust)
        if distance < 1500.0:
            thrust = min(thrust, int(max_thrust * distance / 1500.0))
    return {"x": round(aim[0]), "y": round(aim[1]), "thrust": thrust}


def blocker(observation: dict[str, Any]) -> dict[str, Any]:
    """The first pod races, the second harasses the opponent's leading pod."""
    first, second = observation["pods"]
    return {"pods": [race_pod(first, observation), harass_pod(second, observation)]}


def naive(observation: dict[str, Any]) -> dict[str, Any]:
    """Straight at the next checkpoint at half thrust: a baseline to beat."""
    checkpoints = observation["checkpoints"]
    pods = []
    for pod in observation["pods"]:
        x, y = checkpoints[pod["next_checkpoint"]]
        pods.append({"x": x, "y": y, "thrust": 50})
    return {"pods": pods}


BUILTIN_BOTS = {"runner": runner, "blocker": blocker}
