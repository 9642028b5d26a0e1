"""A hosted podracing bot: each pod aims at its next checkpoint, full thrust."""


def decide(observation):
    checkpoints = observation["checkpoints"]
    pods = []
    for pod in observation["pods"]:
        x, y = checkpoints[pod["next_checkpoint"]]
        pods.append({"x": x - 2 * pod["vx"], "y": y - 2 * pod["vy"], "thrust": 100})
    return {"pods": pods}
