"""Small builders for hand-made race situations."""

from __future__ import annotations

from shared.games.podracing.engine import Pod, PodCommand, Race, RaceConfig

FAR = [(-30000.0, -30000.0), (-30000.0, 30000.0), (30000.0, -30000.0), (30000.0, 30000.0)]
"""Parking spots far from each other and from any track, for pods a test does not use."""


def race(checkpoints: list[tuple[int, int]] | None = None, turn: int = 1, **config: object) -> Race:
    """A race on an explicit track with every pod parked far away, at the given turn."""
    track = checkpoints or [(10000, 5000), (5000, 0), (20000, 20000)]
    result = Race(RaceConfig(**config), track)  # type: ignore[arg-type]
    for pod, (x, y) in zip(result.pods, FAR, strict=True):
        pod.x, pod.y = x, y
    result.turn = turn
    return result


def place(r: Race, index: int, x: float, y: float, vx: float = 0.0, vy: float = 0.0, **extra: object) -> Pod:
    pod = r.pods[index]
    pod.x, pod.y, pod.vx, pod.vy = x, y, vx, vy
    for key, value in extra.items():
        setattr(pod, key, value)
    return pod


def idle(r: Race) -> list[PodCommand]:
    """Thrust 0 aimed at the pod itself: no rotation, no acceleration."""
    return [PodCommand(pod.x, pod.y, 0) for pod in r.pods]


def with_command(r: Race, index: int, command: PodCommand) -> list[PodCommand]:
    commands = idle(r)
    commands[index] = command
    return commands
