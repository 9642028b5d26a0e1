"""What an evolution run may be configured with (pydantic, bounded), so the gateway refuses a bad
request with a 422 naming the field, and the evolver worker reads the same model back from the
run row. The API key is never part of it (see `shared.evolution.service.create_run`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.botclient.errors import EndpointRefused
from shared.botclient.ssrf import parse_endpoint
from shared.config import ModelPrice
from shared.states import ParentSelection

MAX_SEED_CHARS = 100_000
FITNESS_COMPONENTS: dict[str, tuple[str, ...]] = {
    "battle": ("win_rate", "kill_rate", "damage_share"),
    "podracing": ("win_rate", "progress"),
}
"""The fitness components each game's evaluation measures (services/evolver/evaluation/fitness.py)."""
DEFAULT_FITNESS_WEIGHTS: dict[str, dict[str, float]] = {
    "battle": {"win_rate": 0.2, "damage_share": 0.8},
    "podracing": {"win_rate": 0.9, "progress": 0.1},
}
"""Per game, the weight of each fitness component for a new run, which stores them: a run keeps its
weights when these change. Battle leans on the damage share: a win is one bit per match, the share
says how the fight went, and nine matches of it rank close programs better
(scripts/bench_evolver_fitness.py)."""
BUILTIN_ROOT_MODEL = "arena-builtin-root"
BUILTIN_CHILD_MODEL = "arena-builtin-child"


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


PriceOverride = ModelPrice
"""USD per million tokens, for a model the built-in price table does not know (or prices differently
from this provider). A run's own prices apply to its own base URL only, never to an operator's
endpoint (whose prices the operator sets)."""


class LlmConfig(_Config):
    """Which endpoint and models the root and the children use: the built-in operator (neither
    `endpoint` nor `base_url`), one of the operator's endpoints by name, or the run's own base URL
    (which needs the run's own key)."""

    endpoint: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="the name of one of the operator's model endpoints (GET /api/v1/evolution/endpoints)",
    )
    base_url: str | None = Field(
        default=None,
        max_length=2048,
        description="the run's own OpenAI-compatible base URL (…/v1); the run must bring its own key",
    )
    root_model: str = Field(default=BUILTIN_ROOT_MODEL, min_length=1, max_length=128)
    child_model: str = Field(default=BUILTIN_CHILD_MODEL, min_length=1, max_length=128)
    root_max_tokens: int = Field(default=2_000, ge=64, le=64_000)
    child_max_tokens: int = Field(default=8_000, ge=256, le=128_000)
    timeout_s: float = Field(default=120.0, gt=0, le=1_800, description="per attempt")
    max_attempts: int = Field(
        default=4, ge=1, le=10, description="per call, with backoff on 429/5xx/timeouts"
    )
    prices: dict[str, PriceOverride] = Field(
        default_factory=dict, max_length=16, description="with a base_url only: prices of its models"
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return str(parse_endpoint(value))
        except EndpointRefused as exc:
            raise ValueError(exc.message.replace("endpoint", "base_url", 1)) from None

    @model_validator(mode="after")
    def _one_source(self) -> LlmConfig:
        if self.endpoint is not None and self.base_url is not None:
            raise ValueError("name an operator endpoint (endpoint) or give your own base_url, not both")
        if self.endpoint is not None and self.prices:
            raise ValueError("prices belong to a base_url of your own; the operator prices its endpoints")
        return self

    @property
    def builtin(self) -> bool:
        return self.base_url is None and self.endpoint is None


class LimitsConfig(_Config):
    """Hard limits the system enforces whatever the root decides."""

    max_generations: int = Field(default=10, ge=1, le=1_000)
    max_children_per_generation: int = Field(default=4, ge=1, le=64)
    max_wall_s: float = Field(default=3_600.0, gt=0, le=30 * 86_400, description="time spent in chunks")
    max_cost_usd: float | None = Field(default=5.0, ge=0, le=100_000, description="None: no money cap")
    max_tokens: int | None = Field(default=None, ge=0, le=10**10, description="None: no token cap")
    max_root_turns_per_generation: int = Field(
        default=0, ge=0, le=1_000, description="0: 4 x children + 8; beyond it the system advances"
    )

    def root_turns(self) -> int:
        return self.max_root_turns_per_generation or 4 * self.max_children_per_generation + 8


class EvolutionEvaluationConfig(_Config):
    """The evaluation cascade (docs/evolver.md): smoke run, quick matches, tournament."""

    smoke_turns: int = Field(default=20, ge=1, le=500)
    quick_matches: int = Field(default=3, ge=0, le=12)
    tournament_matches: int = Field(default=10, ge=0, le=30)
    tournament: str = Field(
        default="fleet",
        pattern="^(fleet|builtins)$",
        description="fleet: rated-off matches against the live fleet on the matches queue; "
        "builtins: against the built-in bots, in the evolver's process",
    )
    match_config: dict[str, Any] = Field(default_factory=dict, description="game config for every match")
    match_seeds: str = Field(
        default="run",
        pattern="^(run|generation)$",
        description="run: every program plays the same matches (seeds and seats), so fitnesses compare "
        "across the whole run; generation: each generation draws new ones",
    )
    rematch: bool = Field(
        default=False,
        description="racing: each generation, the programs kept as parents play that generation's "
        "matches too and are judged on all their matches, and the run ends with a last round for "
        "its leaders; needs match_seeds generation",
    )
    tournament_timeout_s: float = Field(default=600.0, gt=0, le=3_600)
    jobs: int = Field(default=1, ge=1, le=16, description="local matches played at once")
    fitness_weights: dict[str, float] | None = Field(
        default=None,
        max_length=8,
        description="fitness component -> weight (battle: win_rate, kill_rate, damage_share; podracing: "
        "win_rate, progress); none: the game's defaults, which the run then stores",
    )

    @field_validator("fitness_weights")
    @classmethod
    def _weights(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        if value is None:
            return None
        if any(weight < 0 for weight in value.values()):
            raise ValueError("fitness weights cannot be negative")
        if not any(weight > 0 for weight in value.values()):
            raise ValueError("at least one fitness weight must be positive")
        return value

    @model_validator(mode="after")
    def _rematch_needs_new_matches(self) -> EvolutionEvaluationConfig:
        if self.rematch and self.match_seeds != "generation":
            raise ValueError(
                "rematch needs match_seeds 'generation' (with 'run' a rematch would replay the same matches)"
            )
        return self


class SearchConfig(_Config):
    """The program database: islands, the MAP-Elites grid and sampling."""

    islands: int = Field(default=3, ge=1, le=16)
    grid_bins: int = Field(default=5, ge=2, le=20)
    exploration_ratio: float = Field(default=0.3, ge=0, le=1)
    migration_interval: int = Field(default=3, ge=1, le=50)
    child_temperature: float = Field(default=0.8, ge=0, le=2)
    inspirations: int = Field(default=2, ge=0, le=3)
    parent_selection: ParentSelection = Field(
        default=ParentSelection.NASH, description="what exploitation ranks parents by: nash or fitness"
    )
    constants_table: int = Field(
        default=150,
        ge=0,
        le=400,
        description=(
            "recent evaluated programs whose fitness and named constants a child's prompt lists "
            "(0: none); the built-in child screens its steps with a surrogate fitted on them"
        ),
    )


class EvolutionConfig(_Config):
    """Everything a run is asked to do."""

    seeds: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="seed programs (decide contract); empty: the game's built-in weak seed",
    )
    llm: LlmConfig = Field(default_factory=LlmConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    evaluation: EvolutionEvaluationConfig = Field(default_factory=EvolutionEvaluationConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    promotion_threshold: float = Field(
        default=0.6, ge=0, le=1, description="fitness a new best must reach to join the ladder"
    )
    bot_name: str | None = Field(default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    random_seed: int = Field(default=0, ge=0, lt=2**53)
    chunk_seconds: float = Field(default=120.0, ge=1, le=540, description="work per chunk before it commits")

    @field_validator("seeds")
    @classmethod
    def _seed_sizes(cls, value: list[str]) -> list[str]:
        for index, source in enumerate(value):
            if not source.strip():
                raise ValueError(f"seed {index} is empty")
            if len(source) > MAX_SEED_CHARS:
                raise ValueError(f"seed {index} has {len(source)} characters; at most {MAX_SEED_CHARS}")
        return value

    def initial_parameters(self) -> dict[str, Any]:
        """The parameters the root may change (services.evolver.contract.MUTABLE_PARAMETERS)."""
        return {
            "exploration_ratio": self.search.exploration_ratio,
            "quick_matches": self.evaluation.quick_matches,
            "tournament_matches": self.evaluation.tournament_matches,
            "child_temperature": self.search.child_temperature,
            "migration_interval": self.search.migration_interval,
        }
