"""Turning whatever a bot answered into engine commands, without ever raising.

Each problem found adds one to the player's invalid-action count. An unusable pod entry (or no
answer at all) becomes the default command: aim at the pod's next checkpoint with thrust 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from shared.games.podracing.engine import PODS_PER_PLAYER, PodCommand, round_half_away
from shared.games.podracing.schemas import MAX_COORDINATE, MAX_MESSAGE_LENGTH


@dataclass
class SanitizedAction:
    commands: list[PodCommand]
    messages: list[str | None]
    invalid: int = 0
    problems: list[str] = field(default_factory=list)


def default_command(target: tuple[int, int]) -> PodCommand:
    return PodCommand(target_x=float(target[0]), target_y=float(target[1]), thrust=0)


def _number(value: Any) -> float | None:
    """A finite number, or None; bools are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.where = ""
        """What the next problems are about ("pod 1: "), for the bot's owner."""

    def add(self, text: str) -> None:
        self.items.append(self.where + text)


def _coordinate(entry: dict[str, Any], key: str, problems: _Problems) -> float | None:
    value = _number(entry.get(key))
    if value is None:
        problems.add(f"{key} is missing or not a finite number")
        return None
    if abs(value) > MAX_COORDINATE:
        problems.add(f"{key} clamped to +-{MAX_COORDINATE}")
        value = max(-MAX_COORDINATE, min(MAX_COORDINATE, value))
    return value


def _pod_command(entry: Any, target: tuple[int, int], max_thrust: int, problems: _Problems) -> PodCommand:
    if not isinstance(entry, dict):
        problems.add("pod entry is not an object")
        return default_command(target)
    x = _coordinate(entry, "x", problems)
    y = _coordinate(entry, "y", problems)
    if x is None or y is None:
        return default_command(target)
    raw = entry.get("thrust")
    if isinstance(raw, str):
        word = raw.strip().upper()
        if word == "BOOST":
            return PodCommand(x, y, thrust=max_thrust, boost=True)
        if word == "SHIELD":
            return PodCommand(x, y, thrust=0, shield=True)
        problems.add("thrust is neither a number, BOOST nor SHIELD")
        return default_command(target)
    thrust = _number(raw)
    if thrust is None:
        problems.add("thrust is missing or not a finite number")
        return default_command(target)
    if not 0 <= thrust <= max_thrust:
        problems.add(f"thrust clamped to 0..{max_thrust}")
        thrust = max(0.0, min(float(max_thrust), thrust))
    return PodCommand(x, y, thrust=int(round_half_away(thrust)))


def _message(entry: Any, problems: _Problems) -> str | None:
    if not isinstance(entry, dict) or entry.get("message") is None:
        return None
    message = entry["message"]
    if not isinstance(message, str):
        problems.add("message is not a string")
        return None
    if len(message) > MAX_MESSAGE_LENGTH:
        problems.add(f"message cut to {MAX_MESSAGE_LENGTH} characters")
        message = message[:MAX_MESSAGE_LENGTH]
    return message


def sanitize_action(raw: Any, targets: list[tuple[int, int]], max_thrust: int) -> SanitizedAction:
    """Commands for a player's two pods; `targets` are their next checkpoints (for defaults).

    `raw` None means the bot did not answer: defaults, not counted as invalid.
    """
    if raw is None:
        return SanitizedAction([default_command(t) for t in targets], [None] * PODS_PER_PLAYER)
    problems = _Problems()
    entries: list[Any] = []
    if not isinstance(raw, dict) or not isinstance(raw.get("pods"), list):
        problems.add("action is not an object with a 'pods' list")
    else:
        entries = raw["pods"]
        if len(entries) != PODS_PER_PLAYER:
            problems.add(f"'pods' has {len(entries)} entries instead of {PODS_PER_PLAYER}")
    commands: list[PodCommand] = []
    messages: list[str | None] = []
    for index, target in enumerate(targets):
        problems.where = f"pod {index}: "
        if index < len(entries):
            commands.append(_pod_command(entries[index], target, max_thrust, problems))
            messages.append(_message(entries[index], problems))
        else:
            commands.append(default_command(target))
            messages.append(None)
    return SanitizedAction(commands, messages, invalid=len(problems.items), problems=problems.items)
