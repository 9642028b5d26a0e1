"""Battle configuration: every rule constant lives here so matches are reproducible from (seed, config)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SIGNAL_WORDS: tuple[str, ...] = ("none", "enemy", "attack", "retreat", "help", "hold", "flank", "regroup")
"""The whole signal vocabulary; anything else is ignored and counted as invalid."""

MAP_NAMES: tuple[str, ...] = ("random", "open", "pillars", "corridors", "bunkers")


class BattleConfig(BaseModel):
    """Rules of one battle match. Units are metres, seconds and radians unless a name says otherwise."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    map: Literal["random", "open", "pillars", "corridors", "bunkers"] = "random"
    map_width: float = Field(40.0, ge=20.0, le=120.0, description="arena width (m); a multiple of 4")
    map_height: float = Field(26.0, ge=14.0, le=80.0, description="arena height (m); a multiple of 2")
    obstacle_density: float = Field(0.14, ge=0.0, le=0.3, description="share of cells a random map fills")
    units_per_player: int = Field(3, ge=1, le=20)
    time_limit_s: float = Field(60.0, gt=0.0, le=600.0)
    physics_hz: int = Field(120, ge=30, le=480)
    ticks_per_turn: int = Field(24, ge=1, le=240, description="physics ticks per decision turn (5 Hz)")
    control_every: int = Field(4, ge=1, le=24, description="ticks between turning/firing updates")
    frame_hz: int = Field(10, ge=1, le=60, description="replay frames per second of game time")

    unit_radius: float = Field(0.5, gt=0.1, le=1.5)
    unit_hp: float = Field(100.0, gt=0.0)
    max_speed: float = Field(4.0, gt=0.0, le=20.0)
    acceleration: float = Field(14.0, gt=0.0, le=200.0)
    turn_rate: float = Field(math.radians(270.0), gt=0.0, le=50.0, description="rad/s")
    fire_cooldown_s: float = Field(0.6, ge=0.05, le=10.0)
    aim_tolerance: float = Field(math.radians(4.0), ge=0.0, le=math.pi, description="rad; fires within it")
    projectile_speed: float = Field(18.0, gt=1.0, le=30.0, description="capped so shots cannot tunnel")
    projectile_damage: float = Field(20.0, gt=0.0)
    projectile_ttl_s: float = Field(1.1, gt=0.0, le=10.0)
    projectile_radius: float = Field(0.1, gt=0.0, le=0.5)
    dodge_speed: float = Field(8.0, gt=0.0, le=40.0, description="sideways burst (m/s)")
    dodge_cooldown_s: float = Field(2.0, ge=0.0, le=30.0)
    fov_deg: float = Field(120.0, gt=0.0, le=360.0)
    sensor_range: float = Field(18.0, gt=0.0, le=200.0)
    friendly_fire: bool = True
    memory_limit_bytes: int = Field(2048, ge=0, le=65536)
    history_length: int = Field(12, ge=0, le=64)

    @model_validator(mode="after")
    def _check(self) -> BattleConfig:
        if abs(self.map_width / 4 - round(self.map_width / 4)) > 1e-9:
            raise ValueError("map_width must be a multiple of 4 (the map grid is mirrored in 2 m cells)")
        if abs(self.map_height / 2 - round(self.map_height / 2)) > 1e-9:
            raise ValueError("map_height must be a multiple of 2")
        # One tick of projectile travel must stay well below the thinnest obstacle it can hit.
        if self.projectile_speed / self.physics_hz > 2 * (self.projectile_radius + 0.1):
            raise ValueError("projectile_speed / physics_hz too large: projectiles would tunnel")
        return self

    @property
    def dt(self) -> float:
        return 1.0 / self.physics_hz

    @property
    def time_limit_ticks(self) -> int:
        return round(self.time_limit_s * self.physics_hz)

    @property
    def frame_every(self) -> int:
        return max(1, round(self.physics_hz / self.frame_hz))

    @property
    def cooldown_ticks(self) -> int:
        return max(1, round(self.fire_cooldown_s * self.physics_hz))

    @property
    def dodge_cooldown_ticks(self) -> int:
        return round(self.dodge_cooldown_s * self.physics_hz)

    @property
    def ttl_ticks(self) -> int:
        return max(1, round(self.projectile_ttl_s * self.physics_hz))
