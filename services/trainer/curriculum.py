"""The curriculum: stages with their opponent mixes and exit conditions on measured metrics.

    solo       against idle pods: learn to race          exit: checkpoints / 100 turns >= solo_exit_rate
    runner     the scripted runner (and some blocker)    exit: wins against the runner >= runner_exit_win_rate
    self_play  mostly the current policy                 exit: the league holds >= league_entry_size policies
    league     80% latest self / 20% league, plus the scripted bots as anchors; last stage

A stage switches automatically when its exit condition holds (over at least `min_episodes` races of
the last iteration, once the races have played `settle_turns` turns since they last restarted), or
by hand through the run's config (`stage`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import torch

from services.trainer.opponents import OpponentKind


class Stage(StrEnum):
    SOLO = "solo"
    RUNNER = "runner"
    SELF_PLAY = "self_play"
    LEAGUE = "league"

    def following(self) -> Stage | None:
        order = list(Stage)
        index = order.index(self)
        return order[index + 1] if index + 1 < len(order) else None


OPPONENT_MIX: dict[Stage, dict[OpponentKind, float]] = {
    Stage.SOLO: {OpponentKind.IDLE: 1.0},
    Stage.RUNNER: {OpponentKind.RUNNER: 0.7, OpponentKind.BLOCKER: 0.3},
    Stage.SELF_PLAY: {OpponentKind.SELF: 0.6, OpponentKind.RUNNER: 0.2, OpponentKind.BLOCKER: 0.2},
    Stage.LEAGUE: {
        OpponentKind.SELF: 0.64,
        OpponentKind.LEAGUE: 0.16,
        OpponentKind.RUNNER: 0.1,
        OpponentKind.BLOCKER: 0.1,
    },
}
"""Share of races against each kind of opponent, per stage (self:league = 80:20 in the league)."""


@dataclass(frozen=True, slots=True)
class CurriculumArgs:
    auto: bool = True
    """Advance stages when their exit condition holds."""
    solo_exit_rate: float = 8.0
    """Checkpoints passed by both pods per 100 race turns that end the solo stage."""
    runner_exit_win_rate: float = 0.85
    """Win rate against the scripted runner that ends the runner stage."""
    league_entry_size: int = 4
    """League size that ends the self-play stage."""
    min_episodes: int = 32
    """Races an iteration must finish before its metrics may end a stage."""
    settle_turns: int = 400
    """Race turns after the races (re)start (a resume, a stage switch) before an exit is checked:
    the first races to finish are the short ones, mostly won, and their win rate says little."""


def next_stage(stage: Stage, metrics: dict[str, Any], league_size: int, args: CurriculumArgs) -> Stage | None:
    """The stage to switch to after an iteration with these metrics, or None to stay."""
    if not args.auto or metrics.get("episodes", 0) < args.min_episodes:
        return None
    if stage == Stage.SOLO and metrics.get("checkpoints_per_100_turns", 0.0) >= args.solo_exit_rate:
        return Stage.RUNNER
    win_rate = metrics.get("win_rate_runner")
    if stage == Stage.RUNNER and win_rate is not None and win_rate >= args.runner_exit_win_rate:
        return Stage.SELF_PLAY
    if stage == Stage.SELF_PLAY and league_size >= args.league_entry_size:
        return Stage.LEAGUE
    return None


def draw_opponents(
    stage: Stage, count: int, league_slots: int, generator: torch.Generator, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """`count` opponents from the stage's mix: (kinds, league slots in [0, league_slots))."""
    mix = dict(OPPONENT_MIX[stage])
    if league_slots == 0 and OpponentKind.LEAGUE in mix:
        mix[OpponentKind.SELF] = mix.get(OpponentKind.SELF, 0.0) + mix.pop(OpponentKind.LEAGUE)
    kinds = torch.tensor([int(k) for k in mix], device=device)
    weights = torch.tensor(list(mix.values()), dtype=torch.float32, device=device)
    picks = torch.multinomial(weights, count, replacement=True, generator=generator)
    slots = torch.randint(max(1, league_slots), (count,), generator=generator, device=device)
    return kinds[picks], slots
