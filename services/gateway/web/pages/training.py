"""The training pages' data. Training runs are their owner's (and admins') only, in the API as
here: the pages carry no run data. `/training` and `/training/{id}` are shells that
static/training_list.js and static/training.js fill in the browser from the training API and
`/ws/training/{id}`, with the API key the owner pastes (see docs/web.md, "Training pages").

The server knows only whether a run id exists (for a 404 page) and which charts a run page draws.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.orm import Session

from services.gateway.runs.pages import run_exists
from shared.db.models import TrainingRun
from shared.states import TrainingStage


@dataclass(frozen=True, slots=True)
class Series:
    key: str
    """The metric's key in each iteration's metrics dict."""
    label: str
    color: str


@dataclass(frozen=True, slots=True)
class ChartSpec:
    """One chart of the run page: x is the global step, y one or more metrics."""

    id: str
    title: str
    series: tuple[Series, ...]
    y_min: float | None = None
    y_max: float | None = None
    note: str = ""

    def series_json(self) -> list[dict[str, str]]:
        return [{"key": s.key, "label": s.label, "color": s.color} for s in self.series]


BLUE, ORANGE, GREEN, PURPLE = "#1f5fbf", "#c2410c", "#2e7d32", "#7b1fa2"
RUN_CHARTS: tuple[ChartSpec, ...] = (
    ChartSpec("reward", "Reward", (Series("reward_mean", "mean episode reward", BLUE),)),
    ChartSpec(
        "win_rate",
        "Win rate",
        (
            Series("win_rate_runner", "vs runner", GREEN),
            Series("win_rate_blocker", "vs blocker", ORANGE),
            Series("win_rate_search", "vs search", PURPLE),
        ),
        y_min=0.0,
        y_max=1.0,
        note="training races won, per iteration and built-in",
    ),
    ChartSpec("sps", "Steps per second", (Series("sps", "environment steps / s", BLUE),)),
    ChartSpec("policy_loss", "Policy loss", (Series("policy_loss", "policy loss", BLUE),)),
    ChartSpec("value_loss", "Value loss", (Series("value_loss", "value loss", ORANGE),)),
    ChartSpec("entropy", "Entropy", (Series("entropy", "policy entropy", PURPLE),)),
    ChartSpec("approx_kl", "Approximate KL", (Series("approx_kl", "approx. KL", BLUE),)),
    ChartSpec("clip_fraction", "Clip fraction", (Series("clip_fraction", "clipped ratio share", ORANGE),)),
    ChartSpec("episode_length", "Episode length", (Series("episode_length", "turns per episode", GREEN),)),
    ChartSpec("league_size", "League size", (Series("league_size", "snapshots", PURPLE),), y_min=0.0),
    ChartSpec(
        "checkpoints",
        "Checkpoints per 100 turns",
        (Series("checkpoints_per_100_turns", "both pods", BLUE),),
        y_min=0.0,
        note="the solo stage's exit measure",
    ),
    ChartSpec(
        "imitation",
        "Imitation agreement",
        (Series("imitation_agreement", "same action as the teacher", GREEN),),
        y_min=0.0,
        y_max=1.0,
        note="imitate stage: share of the visited pod-states where the policy's likeliest action is the "
        "teacher's",
    ),
)
"""The run page's charts, in page order (drawn by static/training_charts.js)."""


@dataclass(frozen=True, slots=True)
class RunPage:
    run_id: uuid.UUID
    charts: tuple[ChartSpec, ...]
    stages: tuple[str, ...]


def run_page(session: Session, run_id: uuid.UUID) -> RunPage | None:
    """The shell of run `run_id`'s page; None when no run has this id. One query."""
    if not run_exists(session, TrainingRun.id, run_id):
        return None
    return RunPage(run_id=run_id, charts=RUN_CHARTS, stages=tuple(stage.value for stage in TrainingStage))
