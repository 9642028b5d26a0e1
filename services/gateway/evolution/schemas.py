"""What the evolution API accepts and returns. The run config is shared.evolution.EvolutionConfig
(the worker reads the same model back), so a bad field is a 422 that names it."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from services.gateway.users.schemas import NAME_PATTERN
from shared.evolution import EvolutionConfig
from shared.states import EvolutionEventKind, JobStatus, LlmCallStatus, LlmRole, ProgramOrigin, ProgramStatus

__all__ = ["EvolutionConfig"]

EVENTS_PAGE_MAX = 1000
CALLS_PAGE_MAX = 200


class EvolutionRunCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=NAME_PATTERN, examples=["racer-evo"])
    game: str = Field(min_length=1, max_length=32, examples=["podracing"], description="podracing or battle")
    config: EvolutionConfig = Field(
        default_factory=EvolutionConfig,
        description="any field of EvolutionConfig; the rest take their defaults",
        examples=[{"limits": {"max_generations": 5, "max_cost_usd": 1.0}, "llm": {"base_url": None}}],
    )
    api_key: SecretStr | None = Field(
        default=None,
        min_length=1,
        max_length=1024,
        json_schema_extra={"writeOnly": True},
        description="the key of your own `config.llm.base_url` (required with it, refused otherwise): "
        "stored encrypted with the run, never returned (`has_api_key` says whether one was given). "
        "The platform's own keys are only used with its endpoints (`config.llm.endpoint`)",
    )


class EvolutionRunOut(BaseModel):
    id: uuid.UUID
    name: str
    game: str
    owner_id: uuid.UUID
    status: JobStatus = Field(description="its job's status")
    error: str | None = Field(description="why the run failed, when it did")
    generation: int = Field(description="the generation being worked on")
    best_program: str | None = Field(description='the best program\'s name ("p12")')
    best_fitness: float | None
    spent_usd: float
    tokens: int
    llm_calls: int
    elapsed_s: float = Field(description="seconds spent in chunks")
    termination_reason: str | None
    bot_id: uuid.UUID | None = Field(description="the hosted bot promoted programs become versions of")
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class EvolutionRunDetail(EvolutionRunOut):
    parameters: dict[str, Any] = Field(description="the parameters the root may change, as they stand")
    config: dict[str, Any] = Field(description="the run's EvolutionConfig (never the key)")
    has_api_key: bool = Field(description="an LLM key was saved with the run")
    max_generations: int
    max_cost_usd: float | None = Field(description="the money budget (null: none)")
    max_tokens: int | None


class GenerationOut(BaseModel):
    number: int
    started_at: datetime
    closed_at: datetime | None
    stats: dict[str, Any] = Field(description="best, median and mean fitness overall and per island, counts")
    selected: list[str] = Field(description="the programs the root selected as next parents")
    reasoning: str | None


class ProgramOut(BaseModel):
    name: str = Field(description='"p<seq>"')
    id: uuid.UUID
    seq: int
    generation: int
    island: int
    origin: ProgramOrigin
    status: ProgramStatus
    parent: str | None
    fitness: float | None
    nash_fitness: float | None
    stage: str | None
    descriptors: dict[str, Any]
    cell: list[int] | None = Field(description="[x, y] in the MAP-Elites grid")
    focus: str | None
    explanation: str | None
    error: str | None
    created_at: datetime
    evaluated_at: datetime | None


class ProgramDetail(ProgramOut):
    code: str
    diff: str | None = Field(description="unified diff against the parent")
    metrics: dict[str, Any]
    feedback: dict[str, Any]
    parent_fitness: float | None
    inspirations: list[str]
    children: list[str]


class LineageNode(BaseModel):
    name: str
    generation: int
    island: int
    fitness: float | None
    status: ProgramStatus
    origin: ProgramOrigin
    parent: str | None


class Lineage(BaseModel):
    nodes: list[LineageNode]
    best: str | None


class GridCell(BaseModel):
    x: int
    y: int
    name: str = Field(description="the cell's elite")
    fitness: float | None
    island: int
    programs: int = Field(description="evaluated programs that fell in this cell")


class Grid(BaseModel):
    bins: int
    descriptors: list[str] = Field(description="the x and y descriptors' names")
    cells: list[GridCell]
    islands: int
    occupancy: dict[str, int] = Field(description="island -> cells its evaluated programs fill")
    cells_filled: int


class LlmCallOut(BaseModel):
    id: uuid.UUID
    key: str
    role: LlmRole
    model: str
    generation: int
    status: LlmCallStatus
    failure: str | None
    prompt_tokens: int
    completion_tokens: int
    usage_estimated: bool
    cost_usd: float
    latency_ms: float
    attempts: int
    error: str | None
    messages: int = Field(description="how many messages the prompt had")
    tool_calls: int
    answer_preview: str | None = Field(description="the answer's first 300 characters")
    created_at: datetime


class LlmCallDetail(LlmCallOut):
    prompt: list[Any] = Field(description="the prompt's messages")
    answer: str | None
    tool_call_list: list[Any]
    rejected_tool_calls: list[Any]


class EventOut(BaseModel):
    id: int
    kind: EvolutionEventKind
    generation: int
    data: dict[str, Any]
    created_at: datetime


class EventsPage(BaseModel):
    run_id: uuid.UUID
    items: list[EventOut]
    next_after: int = Field(description="pass as `after` next time (the last id seen)")
    status: JobStatus = Field(description="the run's status now (a page polls until it is final)")


class SpendLineOut(BaseModel):
    role: LlmRole
    model: str
    calls: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


class SpendOut(BaseModel):
    lines: list[SpendLineOut]
    total_usd: float
    tokens: int
    calls: int
    budget_usd: float | None
    budget_tokens: int | None


class PayoffCellOut(BaseModel):
    opponent: str
    wins: int
    draws: int
    losses: int
    games: int
    win_rate: float | None = Field(description="(wins + draws / 2) / games")


class PayoffRow(BaseModel):
    program: str
    generation: int
    fitness: float | None
    nash_fitness: float = Field(description="its expected win rate against the opponents' mixture")
    cells: list[PayoffCellOut]


class PayoffOut(BaseModel):
    opponents: list[str]
    rows: list[PayoffRow] = Field(description="programs, best Nash fitness first")
    mixture: dict[str, float] = Field(description="the opponents' maximin mixture")
    value: float = Field(description="the meta-game's value (win rate - 0.5)")
