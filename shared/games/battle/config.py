"""Battle configuration: every rule constant lives here so matches are reproducible from (seed, config)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SIGNAL_WORDS: tuple[str, ...] = ("none", "enemy", "attack", "retreat", "help", "hold", "flank", "regroup")
"""The whole signal vocabulary; anything else is ignored and counted as invalid."""

MAP_NAMES: tuple[str, ...] = ("random", "open", "pillars", "corridors", "bunkers")
NAMED_MAP_SIZE = (40.0, 26.0)
"""The arena the hand-made maps are drawn for (shared.games.battle.maps checks the same)."""

# The cost of a config as a whole. Each field is bounded on its own above, but their product is
# what holds a worker: the estimate below is the runner's CPU time for a whole match, priced for
# a full table (COST_PLAYERS) and for the worst case the constants were measured on (every unit
# seeing every other on an open arena with the longest order history, all alive: each unit's
# observation then lists 79 others and 20 histories of 64 orders). Measured on the reference
# engine in CPU time on one core (scripts/bench_battle_config.py prints the per-turn cost of these
# configs): 0.2 ms per unit per turn with the default config, up to 2.1 ms at 80 units in full
# sight with the longest histories, for observations (perception, JSON) and reading orders;
# about 0.35 us per unit per physics tick; about 1 ms per bot per turn for the signed HTTP
# exchange. The constants take the worst of these, rounded up.
COST_PLAYERS = 4
"""The most bots a battle seats: a config is priced for a full table, whoever is seated."""
COST_PER_UNIT_TURN_S = 2.5e-3
COST_PER_UNIT_TICK_S = 1.0e-6
COST_PER_BOT_TURN_S = 1.0e-3
MAX_MATCH_COST_S = 120.0
"""The most runner CPU time one match may be estimated to take: a match then finishes well within
its deadline (ARENA_MATCH_SOFT_TIME_LIMIT_S, 900 s by default) even on a busy worker."""
MAX_TURNS = 3000
"""Decision turns per match (600 s at the default 5 Hz): every turn is an HTTP exchange per bot,
so the turn count also bounds how long slow (but not failing) bots can hold a worker."""


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
    memory_limit_bytes: int = Field(2048, ge=0, le=8192, description="kept within the replay's action cap")
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
        if self.map != "random" and (self.map_width, self.map_height) != NAMED_MAP_SIZE:
            width, height = NAMED_MAP_SIZE
            raise ValueError(f"map {self.map!r} is drawn for a {width:g} x {height:g} arena")
        if self.turns > MAX_TURNS:
            raise ValueError(
                f"time_limit_s * physics_hz / ticks_per_turn gives {self.turns} decision turns;"
                f" at most {MAX_TURNS} are allowed"
            )
        if self.estimated_cost_s > MAX_MATCH_COST_S:
            raise ValueError(
                f"config too costly to play: estimated cost {self.estimated_cost_s:.0f} s of runner time"
                f" per match, limit {MAX_MATCH_COST_S:.0f} s (lower units_per_player, time_limit_s or"
                " physics_hz, or raise ticks_per_turn)"
            )
        return self

    @property
    def turns(self) -> int:
        """Decision turns in a match that runs to its time limit."""
        return math.ceil(self.time_limit_ticks / self.ticks_per_turn)

    @property
    def estimated_cost_s(self) -> float:
        """Runner CPU seconds for a whole match at a full table; see MAX_MATCH_COST_S."""
        units = COST_PLAYERS * self.units_per_player
        per_turn = units * COST_PER_UNIT_TURN_S + COST_PLAYERS * COST_PER_BOT_TURN_S
        return self.turns * per_turn + self.time_limit_ticks * units * COST_PER_UNIT_TICK_S

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
