"""Mad Pod Racing in the object style: small vector and pod classes with __slots__ and operators."""

import math
import sys


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return Vec(self.x - other.x, self.y - other.y)

    def __mul__(self, k):
        return Vec(self.x * k, self.y * k)

    __rmul__ = __mul__

    def __truediv__(self, k):
        return Vec(self.x / k, self.y / k)

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def __abs__(self):
        return math.hypot(self.x, self.y)

    def __eq__(self, other):
        return self.x == other.x and self.y == other.y

    def __hash__(self):
        return hash((self.x, self.y))

    def __lt__(self, other):
        return abs(self) < abs(other)

    def __iter__(self):
        yield self.x
        yield self.y

    def __repr__(self):
        return f"Vec({self.x}, {self.y})"


class Pod:
    __slots__ = ("pos", "speed", "angle", "next_cp", "boosted")  # noqa: RUF023

    def __init__(self):
        self.pos = Vec(0, 0)
        self.speed = Vec(0, 0)
        self.angle = 0
        self.next_cp = 1
        self.boosted = False

    def update(self, line):
        x, y, vx, vy, angle, next_cp = map(int, line.split())
        self.pos, self.speed, self.angle, self.next_cp = Vec(x, y), Vec(vx, vy), angle, next_cp

    def order(self, checkpoints):
        target = checkpoints[self.next_cp] - self.speed * 3
        distance = abs(checkpoints[self.next_cp] - self.pos)
        if not self.boosted and distance > 5000:
            self.boosted = True
            return f"{int(target.x)} {int(target.y)} BOOST boost!"
        thrust = 100 if distance > 1200 else 50
        return f"{int(target.x)} {int(target.y)} {thrust}"


laps = int(input())
checkpoints = [Vec(*map(int, input().split())) for _ in range(int(input()))]
mine = [Pod(), Pod()]
theirs = [Pod(), Pod()]
turn = 0
while True:
    for pod in mine + theirs:
        pod.update(input())
    closest = min(theirs, key=lambda p: abs(p.pos - mine[0].pos))
    print(f"turn {turn}: closest opponent at {closest.pos!r}", file=sys.stderr)
    for pod in mine:
        print(pod.order(checkpoints))
    turn += 1
