"""Mad Pod Racing with numpy: the track and the pods as arrays, the orders computed together."""

import sys

import numpy as np

laps = int(input())
count = int(input())
checkpoints = np.array([[int(v) for v in input().split()] for _ in range(count)], dtype=np.float64)
lengths = np.linalg.norm(np.roll(checkpoints, -1, axis=0) - checkpoints, axis=1)
print(f"track length {lengths.sum():.0f}", file=sys.stderr)
boost = np.array([True, True])

while True:
    state = np.array([[int(v) for v in input().split()] for _ in range(4)], dtype=np.float64)
    mine = state[:2]
    positions, speeds, targets = mine[:, 0:2], mine[:, 2:4], mine[:, 5].astype(np.int64)
    goals = checkpoints[targets] - 3.0 * speeds
    distances = np.linalg.norm(checkpoints[targets] - positions, axis=1)
    headings = np.degrees(np.arctan2(*(checkpoints[targets] - positions).T[::-1]))
    off = np.abs((headings - mine[:, 4] + 540.0) % 360.0 - 180.0)
    thrust = np.where(off > 90.0, 0, np.clip(distances / 20.0, 30, 100)).astype(np.int64)
    for i in range(2):
        x, y = np.rint(goals[i]).astype(np.int64)
        if boost[i] and distances[i] > 6000 and off[i] < 10:
            boost[i] = False
            print(f"{x} {y} BOOST")
        else:
            print(f"{x} {y} {thrust[i]}")
