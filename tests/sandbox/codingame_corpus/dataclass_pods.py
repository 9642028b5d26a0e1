"""Mad Pod Racing with dataclasses, an enum and a heap: one runner, one blocker."""

# ruff: noqa: UP006, UP033, UP035  (typing.List and lru_cache(maxsize=None), as CodinGame bots write them)

import heapq
import sys
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from typing import List, Tuple


class Role(Enum):
    RUNNER = "runner"
    BLOCKER = "blocker"


@dataclass(slots=True)
class Pod:
    x: int
    y: int
    vx: int
    vy: int
    angle: int
    next_cp: int
    role: Role = Role.RUNNER

    def distance_to(self, point: Tuple[int, int]) -> float:
        return ((self.x - point[0]) ** 2 + (self.y - point[1]) ** 2) ** 0.5


@dataclass(order=True)
class Plan:
    cost: float
    target: Tuple[int, int] = field(compare=False)
    thrust: int = field(compare=False, default=100)


@lru_cache(maxsize=None)
def lead(x: int, y: int, vx: int, vy: int) -> Tuple[int, int]:
    return x - 3 * vx, y - 3 * vy


def read_pod(role: Role) -> Pod:
    return Pod(*map(int, input().split()), role=role)


laps = int(input())
checkpoints: List[Tuple[int, int]] = [tuple(map(int, input().split())) for _ in range(int(input()))]

while True:
    mine = [read_pod(Role.RUNNER), read_pod(Role.BLOCKER)]
    theirs = [read_pod(Role.RUNNER), read_pod(Role.RUNNER)]
    leader = max(theirs, key=lambda p: (p.next_cp, -p.distance_to(checkpoints[p.next_cp])))
    for pod in mine:
        plans: List[Plan] = []
        if pod.role is Role.RUNNER:
            cp = checkpoints[pod.next_cp]
            heapq.heappush(plans, Plan(pod.distance_to(cp), lead(cp[0], cp[1], pod.vx, pod.vy)))
        else:
            cp = checkpoints[leader.next_cp]
            heapq.heappush(plans, Plan(pod.distance_to(cp), cp, 80))
            heapq.heappush(plans, Plan(pod.distance_to((leader.x, leader.y)) + 2000, (leader.x, leader.y)))
        plan = heapq.heappop(plans)
        print(f"{plan.target[0]} {plan.target[1]} {plan.thrust} {pod.role.value}")
    print(f"leader {leader}", file=sys.stderr)
