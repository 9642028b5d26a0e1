"""A starting podracing bot for evolution: both pods race, with untuned numbers.

Each pod aims at its next checkpoint, corrected by part of its velocity, sets its thrust from the
heading error, eases off close to the checkpoint, turns early toward the checkpoint after when it
is fast and near, and boosts on long straights. Every choice is driven by a named constant below.
"""

from __future__ import annotations

import math
from typing import Any

# ---------------------------------------------------------------- tunable numbers
VELOCITY_COMPENSATION = 2.0
"""Turns of the pod's own velocity subtracted from the aim point (drift correction)."""
FULL_THRUST_ANGLE = 45.0
"""Full thrust while the heading is within this many degrees of the aim."""
ZERO_THRUST_ANGLE = 100.0
"""No thrust when the heading is off by this many degrees or more."""
SLOW_DISTANCE = 1500.0
"""Ease off when closer than this to the checkpoint."""
SLOW_THRUST = 60
EARLY_TURN_DISTANCE = 1200.0
"""Aim at the checkpoint after when this close to the current one and fast enough."""
EARLY_TURN_SPEED = 400.0
EARLY_TURN_THRUST = 40
BOOST_DISTANCE = 6000.0
"""Boost when the checkpoint is farther than this..."""
BOOST_ANGLE = 8.0
"""...and the heading within this many degrees of it."""
BOOST_MIN_TURN = 3
"""Never boost before this turn."""


def _angle_error(pod: dict[str, Any], target: tuple[float, float]) -> float:
    """Degrees between the pod's heading and the direction to `target` (0 before the first turn)."""
    if pod["angle"] < 0:
        return 0.0
    wanted = math.degrees(math.atan2(target[1] - pod["y"], target[0] - pod["x"]))
    return abs((wanted - float(pod["angle"]) + 540.0) % 360.0 - 180.0)


def _thrust(error: float, max_thrust: int) -> int:
    if error <= FULL_THRUST_ANGLE:
        return max_thrust
    if error >= ZERO_THRUST_ANGLE:
        return 0
    share = (ZERO_THRUST_ANGLE - error) / (ZERO_THRUST_ANGLE - FULL_THRUST_ANGLE)
    return int(max_thrust * share)


def _drive(pod: dict[str, Any], observation: dict[str, Any]) -> dict[str, Any]:
    checkpoints = observation["checkpoints"]
    max_thrust = int(observation["max_thrust"])
    target = checkpoints[pod["next_checkpoint"]]
    distance = math.hypot(target[0] - pod["x"], target[1] - pod["y"])
    speed = math.hypot(pod["vx"], pod["vy"])
    total = len(checkpoints) * observation["laps"] + 1
    last_pass = pod["checkpoints_passed"] >= total - 1
    if distance < EARLY_TURN_DISTANCE and speed > EARLY_TURN_SPEED and not last_pass:
        following = checkpoints[(pod["next_checkpoint"] + 1) % len(checkpoints)]
        aim = (
            following[0] - VELOCITY_COMPENSATION * pod["vx"],
            following[1] - VELOCITY_COMPENSATION * pod["vy"],
        )
        thrust = min(EARLY_TURN_THRUST, _thrust(_angle_error(pod, aim), max_thrust))
        return {"x": round(aim[0]), "y": round(aim[1]), "thrust": thrust}
    aim = (target[0] - VELOCITY_COMPENSATION * pod["vx"], target[1] - VELOCITY_COMPENSATION * pod["vy"])
    error = _angle_error(pod, aim)
    thrust = _thrust(error, max_thrust)
    if distance < SLOW_DISTANCE:
        thrust = min(thrust, SLOW_THRUST)
    command: dict[str, Any] = {"x": round(aim[0]), "y": round(aim[1]), "thrust": thrust}
    if (
        pod["boost_available"]
        and observation["turn"] >= BOOST_MIN_TURN
        and distance > BOOST_DISTANCE
        and error < BOOST_ANGLE
    ):
        command["thrust"] = "BOOST"
    return command


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    return {"pods": [_drive(pod, observation) for pod in observation["pods"]]}
