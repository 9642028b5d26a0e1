"""How much evaluation a program gets, and how its matches are played.

One frozen model, so an evolution run can store it (model_dump) and every chunk of the run
evaluates programs the same way.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.config import Settings
from shared.evolution.config import DEFAULT_FITNESS_WEIGHTS


class EvaluationSettings(BaseModel):
    """The evaluation cascade's knobs: match counts per stage, match rules, turn limits, fitness."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    smoke_turns: int = Field(20, ge=1, le=500)
    """Turns of the smoke run against the first built-in bot (sorted by name)."""
    quick_matches: int = Field(3, ge=0, le=50)
    """Matches against the built-in bots: round-robin over their names (sorted), seats alternating;
    the default plays each of three built-ins once. 0 skips the stage."""
    tournament_matches: int = Field(10, ge=0, le=100)
    """Matches against the tournament's opponents (the live fleet, or local bots); 0 skips it."""
    match_config: dict[str, Any] = Field(default_factory=dict)
    """Game config overrides applied to every evaluation match (e.g. {"time_limit_s": 10})."""
    turn_timeout_ms: int | None = Field(None, ge=10, le=60_000)
    """Per-turn limit for local matches; None: the platform's (ARENA_TURN_TIMEOUT_MS). Tournament
    matches on the queue always run under the workers' own settings."""
    first_turn_timeout_ms: int | None = Field(None, ge=10, le=60_000)
    """The first turn's limit (bots warm up); None: the platform's."""
    max_consecutive_failures: int | None = Field(None, ge=1)
    """Failed turns in a row before a bot forfeits a local match; None: the platform's."""
    fitness_weights: dict[str, dict[str, float]] = Field(
        default_factory=lambda: {game: dict(w) for game, w in DEFAULT_FITNESS_WEIGHTS.items()}
    )
    """Per game, component -> weight; battle: 0.2 win rate + 0.8 damage share."""
    min_quick_win_rate: float = Field(0.0, ge=0.0, le=1.0)
    """Win rate (draws half) the quick matches must reach to enter the tournament; 0: always."""
    jobs: int = Field(1, ge=1, le=16)
    """Local matches played at once (on one event loop; see matches.LocalExecutor)."""
    tournament_deadline_s: float = Field(900.0, gt=0)
    """How long the tournament waits for queued matches; unfinished ones count as errors."""
    match_deadline_s: float = Field(300.0, gt=0)
    """Wall-clock cap of one local match: it then ends with the current standings."""
    grid_bins: int = Field(5, ge=2, le=20)
    """Bins per side of the MAP-Elites grid the program's descriptors are placed in (the run's
    search.grid_bins)."""

    def runner_settings(self, base: Settings) -> Settings:
        """The platform's settings with this evaluation's turn limits (for local matches)."""
        update: dict[str, Any] = {}
        if self.turn_timeout_ms is not None:
            update["turn_timeout_ms"] = self.turn_timeout_ms
        if self.first_turn_timeout_ms is not None:
            update["first_turn_timeout_ms"] = self.first_turn_timeout_ms
        if self.max_consecutive_failures is not None:
            update["max_consecutive_failures"] = self.max_consecutive_failures
        return base.model_copy(update=update) if update else base

    def weights(self, game: str) -> dict[str, float]:
        return dict(self.fitness_weights.get(game) or {"win_rate": 1.0})
