"""Example bot: a self-contained checkpoint follower, standard library only.

It passes the static gate as-is, so it can also be uploaded as a hosted bot (contract "decide").
Both pods race: each aims at its next checkpoint, corrected for its own drift, slows down when it
faces away from the target and boosts once on a long straight.
"""

import math

DRIFT_CORRECTION = 3.0
BOOST_DISTANCE = 5000.0


def _aim(pod, target):
    """Aim point: the checkpoint minus a few turns of current velocity, so the pod does not orbit."""
    return (target[0] - DRIFT_CORRECTION * pod["vx"], target[1] - DRIFT_CORRECTION * pod["vy"])


def _heading_error(pod, point):
    wanted = math.degrees(math.atan2(point[1] - pod["y"], point[0] - pod["x"]))
    return abs((wanted - pod["angle"] + 180.0) % 360.0 - 180.0)


def _drive(pod, observation, may_boost):
    checkpoints = observation["checkpoints"]
    target = checkpoints[pod["next_checkpoint"] % len(checkpoints)]
    aim = _aim(pod, target)
    error = _heading_error(pod, aim)
    distance = math.hypot(target[0] - pod["x"], target[1] - pod["y"])
    max_thrust = observation.get("max_thrust", 100)
    if may_boost and pod.get("boost_available") and error < 5.0 and distance > BOOST_DISTANCE:
        thrust = "BOOST"
    elif error > 90.0:
        thrust = 0
    else:
        thrust = int(max_thrust * math.cos(math.radians(error)))
    return {"x": round(aim[0]), "y": round(aim[1]), "thrust": thrust}


def decide(observation):
    pods = observation["pods"]
    return {"pods": [_drive(pod, observation, index == 0) for index, pod in enumerate(pods)]}
