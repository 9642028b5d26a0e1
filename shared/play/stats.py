"""Per-participant figures collected while a match is played: what a bot's owner needs to debug it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from shared.botclient import TurnReply

MAX_ERROR_SAMPLES = 5
MAX_INVALID_SAMPLES = 5
MAX_SENT_CHARS = 300
"""How much of an invalid action a sample keeps: enough to see its shape."""
MAX_PROBLEMS_PER_SAMPLE = 3


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


class InvalidSample(TypedDict):
    """A turn whose action the game could only partly use."""

    turn: int
    sent: str
    """The action as compact JSON, cut to MAX_SENT_CHARS."""
    problems: list[str]
    """What the game found wrong (the first MAX_PROBLEMS_PER_SAMPLE)."""


@dataclass
class PlayerStats:
    """Counts and samples for one player. Timeouts and errors are counted apart; both are failures."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    timeouts: int = 0
    consecutive_failures: int = 0
    forfeited: bool = False
    forfeit_reason: str | None = None
    error_samples: list[dict[str, object]] = field(default_factory=list)
    invalid_samples: list[InvalidSample] = field(default_factory=list)
    """Turns whose action the game could only partly use: what the bot sent and what was wrong."""

    def record(self, turn: int, reply: TurnReply) -> None:
        if reply.ok:
            self.latencies_ms.append(reply.latency_ms)
            self.consecutive_failures = 0
            return
        self.consecutive_failures += 1
        if reply.timed_out:
            self.timeouts += 1
        else:
            self.errors += 1
            self.latencies_ms.append(reply.latency_ms)
        self.sample(turn, reply.error or "timeout")

    def sample(self, turn: int, message: str) -> None:
        if len(self.error_samples) < MAX_ERROR_SAMPLES:
            self.error_samples.append({"turn": turn, "error": message})

    def invalid(self, turn: int, action: object, problems: Sequence[str]) -> None:
        """An action the game read only in part (the `invalid_actions` metric counts the problems)."""
        if len(self.invalid_samples) < MAX_INVALID_SAMPLES:
            self.invalid_samples.append(
                InvalidSample(
                    turn=turn, sent=_excerpt(action), problems=list(problems[:MAX_PROBLEMS_PER_SAMPLE])
                )
            )

    @property
    def latency_p50_ms(self) -> float | None:
        return percentile(self.latencies_ms, 50)

    @property
    def latency_p99_ms(self) -> float | None:
        return percentile(self.latencies_ms, 99)


def _excerpt(action: object) -> str:
    """The action as compact JSON, cut to MAX_SENT_CHARS."""
    try:
        text = json.dumps(action, separators=(",", ":"), ensure_ascii=False, default=repr)
    except (ValueError, RecursionError):  # a circular or very deep structure from an in-process bot
        text = f"<a {type(action).__name__} that is not JSON>"
    return text if len(text) <= MAX_SENT_CHARS else text[: MAX_SENT_CHARS - 3] + "..."
