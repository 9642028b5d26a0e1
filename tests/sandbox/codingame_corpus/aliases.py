"""Mad Pod Racing with the usual short names: import aliases of the standard library."""

import math as m
import sys as s
from collections import deque as dq
from math import atan2 as a2
from math import sqrt as sq

laps = int(input())
count = int(input())
cps = [tuple(map(int, input().split())) for _ in range(count)]
recent = dq(maxlen=5)


def aim(x, y, vx, vy, nxt):
    cx, cy = cps[nxt]
    heading = m.degrees(a2(cy - y, cx - x))
    distance = sq((cx - x) ** 2 + (cy - y) ** 2)
    return cx - 3 * vx, cy - 3 * vy, heading, distance


while True:
    pods = [list(map(int, input().split())) for _ in range(4)]
    for x, y, vx, vy, angle, nxt in pods[:2]:
        tx, ty, heading, distance = aim(x, y, vx, vy, nxt)
        off = abs((heading - angle + 540) % 360 - 180) if angle >= 0 else 0
        thrust = 0 if off > 90 else int(100 * m.cos(m.radians(off)) if distance < 2000 else 100)
        recent.append(thrust)
        print(f"{int(tx)} {int(ty)} {max(0, min(100, thrust))}")
    s.stderr.write(f"last thrusts {list(recent)}\n")
    s.stdout.flush()
