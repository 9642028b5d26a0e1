"""Validated match configuration: what a match request may set, with bounds that keep races sane."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.games.podracing.engine import RaceConfig


class PodracingConfig(BaseModel):
    """Podracing options; unknown keys are rejected so that typos do not silently change a match."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    laps: int = Field(3, ge=1, le=10, description="Laps to race.")
    checkpoints_min: int = Field(3, ge=2, le=8, description="Fewest checkpoints on a generated track.")
    checkpoints_max: int = Field(8, ge=2, le=8, description="Most checkpoints on a generated track.")
    max_thrust: int = Field(100, ge=0, le=200, description="Highest ordinary thrust.")
    boost_per_team: bool = Field(False, description="One BOOST per player instead of one per pod.")
    max_turns: int = Field(500, ge=1, le=5000, description="Turn limit; then progress decides.")
    timeout_turns: int = Field(
        100, ge=1, le=1000, description="Turns a player may go without passing a checkpoint."
    )
    max_collisions_per_turn: int = Field(
        64, ge=1, le=1000, description="Safety cap on collisions resolved in one turn."
    )

    @model_validator(mode="after")
    def _check_range(self) -> PodracingConfig:
        if self.checkpoints_min > self.checkpoints_max:
            raise ValueError("checkpoints_min must not exceed checkpoints_max")
        return self

    def to_race_config(self) -> RaceConfig:
        return RaceConfig(**self.model_dump())
