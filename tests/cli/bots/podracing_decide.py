"""A hosted podracing bot: each pod aims at its next checkpoint, full thrust."""

from typing import Any


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    checkpoints = observation["checkpoints"]
    pods = []
    for pod in observation["pods"]:
        x, y = checkpoints[pod["next_checkpoint"]]
        pods.append({"x": x - 2 * pod["vx"], "y": y - 2 * pod["vy"], "thrust": 100})
    return {"pods": pods}
