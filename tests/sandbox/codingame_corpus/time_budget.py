"""Mad Pod Racing with a search: random candidate moves simulated within a time budget per turn."""

import math
import random
import sys
import time

FIRST_TURN_BUDGET = 0.5
TURN_BUDGET = 0.03

random.seed(7)
laps = int(input())
count = int(input())
checkpoints = [tuple(map(int, input().split())) for _ in range(count)]


def simulate(x, y, vx, vy, angle, target, thrust):
    """One turn of CodinGame's physics for a pod aiming at `target` (rotation capped at 18)."""
    want = math.degrees(math.atan2(target[1] - y, target[0] - x))
    turn = max(-18.0, min(18.0, (want - angle + 540.0) % 360.0 - 180.0)) if angle >= 0 else want
    heading = (angle + turn) if angle >= 0 else want
    vx += thrust * math.cos(math.radians(heading))
    vy += thrust * math.sin(math.radians(heading))
    return x + vx, y + vy, int(vx * 0.85), int(vy * 0.85), heading


def score(x, y, cp):
    return -math.hypot(cp[0] - x, cp[1] - y)


first = True
while True:
    start = time.time()
    budget = FIRST_TURN_BUDGET if first else TURN_BUDGET
    first = False
    pods = [list(map(int, input().split())) for _ in range(4)]
    evaluated = 0
    for x, y, vx, vy, angle, nxt in pods[:2]:
        cp = checkpoints[nxt]
        best = (score(x, y, cp), cp[0], cp[1], 0)
        while time.time() - start < budget * 0.45 * (1 + pods.index([x, y, vx, vy, angle, nxt])):
            tx = cp[0] + random.randint(-1500, 1500)
            ty = cp[1] + random.randint(-1500, 1500)
            thrust = random.choice((0, 50, 100, 100, 100))
            nx, ny, *_ = simulate(x, y, vx, vy, angle, (tx, ty), thrust)
            candidate = (score(nx, ny, cp), tx, ty, thrust)
            best = max(best, candidate)
            evaluated += 1
        print(f"{best[1]} {best[2]} {best[3]}")
    print(f"{evaluated} candidates in {1000 * (time.time() - start):.1f} ms", file=sys.stderr)
