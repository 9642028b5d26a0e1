"""Per-participant figures collected while a match is played: what a bot's owner needs to debug it."""

from __future__ import annotations

from dataclasses import dataclass, field

from shared.botclient import TurnReply

MAX_ERROR_SAMPLES = 5


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


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

    @property
    def latency_p50_ms(self) -> float | None:
        return percentile(self.latencies_ms, 50)

    @property
    def latency_p99_ms(self) -> float | None:
        return percentile(self.latencies_ms, 99)
