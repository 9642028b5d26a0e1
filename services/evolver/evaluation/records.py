"""What an evaluation asks for (MatchSpec) and what it gets back (MatchRecord), whichever executor
played the match. Plain data, JSON round-trippable, with no heavy imports: fitness and payoff
code reads records without pulling in the sandbox or the database."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

BUILTIN_PREFIX = "builtin:"
BOT_PREFIX = "bot:"
FILE_PREFIX = "file:"


class Outcome(StrEnum):
    """The candidate's result in one match: first alone, first together, or behind."""

    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"

    @property
    def points(self) -> float:
        """1 for a win, 1/2 for a draw, 0 for a loss."""
        return {Outcome.WIN: 1.0, Outcome.DRAW: 0.5, Outcome.LOSS: 0.0}[self]


def outcome_of(ranks: list[int], seat: int) -> Outcome:
    """The outcome for `seat` from the game's ranks (0 is first; equal ranks drew)."""
    best = min(ranks)
    if ranks[seat] != best:
        return Outcome.LOSS
    return Outcome.DRAW if ranks.count(best) > 1 else Outcome.WIN


def derive_seed(seed: int, *parts: object) -> int:
    """A match seed (53 bits, as the platform's) derived from the evaluation seed and a label."""
    text = ":".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 11


@dataclass(frozen=True)
class MatchSpec:
    """One match to play: the candidate against `opponent` in seat `candidate_seat`.

    Opponent keys: "builtin:<name>" (a game's built-in bot), "bot:<uuid>" (a bot of the fleet,
    queue only), "file:<path>" (a local hosted-bot file, local only).
    """

    opponent: str
    seed: int
    candidate_seat: int = 0
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Identifies the match within one candidate's evaluation (used to avoid duplicates)."""
        return f"{self.opponent}|{self.seed}|{self.candidate_seat}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MatchRecord:
    """One played (or failed) match, from the candidate's side."""

    opponent: str
    seat: int
    outcome: Outcome
    seed: int = 0
    candidate_metrics: dict[str, float] = field(default_factory=dict)
    opponent_metrics: dict[str, float] = field(default_factory=dict)
    turns: int = 0
    errors: int = 0
    timeouts: int = 0
    forfeited: bool = False
    error_samples: list[str] = field(default_factory=list)
    """The candidate's failed turns ("turn 3: RuntimeError: ..."), a few, never secrets."""
    latency_p50_ms: float | None = None
    latency_p99_ms: float | None = None
    match_id: str | None = None
    failure: str | None = None
    """Set when the match itself could not be played (failed, unfinished at the deadline, unknown
    opponent): such a record counts as an error, and is left out of win rates and fitness."""
    end_reason: str | None = None
    game_seconds: float | None = None
    """Game time played (battle), for rates per minute; None where the game has no clock."""
    valid_turns: int | None = None
    """Smoke runs only: turns the candidate answered with an action the game read cleanly."""
    trace: list[str] | None = None
    """A few lines about this match (set on the worst match of an evaluation)."""

    @property
    def played(self) -> bool:
        return self.failure is None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["outcome"] = str(self.outcome)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchRecord:
        fields = dict(data)
        fields["outcome"] = Outcome(fields["outcome"])
        return cls(**fields)

    def summary_lines(self, max_samples: int = 3) -> list[str]:
        """A compact trace: opponent, seat, outcome, turns, metrics, first error samples."""
        lines = [
            f"vs {self.opponent} in seat {self.seat}: {self.outcome}"
            + (f" ({self.end_reason})" if self.end_reason else "")
            + f" after {self.turns} turns",
        ]
        if self.failure:
            lines.append(f"match failed: {self.failure}")
        if self.candidate_metrics:
            shown = ", ".join(f"{k}={_short(v)}" for k, v in sorted(self.candidate_metrics.items()))
            lines.append(f"your metrics: {shown}")
        if self.opponent_metrics:
            shown = ", ".join(f"{k}={_short(v)}" for k, v in sorted(self.opponent_metrics.items()))
            lines.append(f"opponent metrics: {shown}")
        if self.errors or self.timeouts or self.forfeited:
            lines.append(
                f"errors={self.errors} timeouts={self.timeouts}" + (" forfeited" if self.forfeited else "")
            )
        lines.extend(f"error: {sample}" for sample in self.error_samples[:max_samples])
        return lines


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
