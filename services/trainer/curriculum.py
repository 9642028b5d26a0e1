"""The curriculum: stages with their opponent mixes and exit conditions on measured metrics.

    imitate    DAgger on a teacher (runner and blocker)  exit: imitation_steps steps in the stage
    solo       against idle pods: learn to race          exit: checkpoints / 100 turns >= solo_exit_rate
    runner     the scripted runner and blocker, 50:50    exit: win rates against both >= their targets
    self_play  the current policy half, the built-ins    exit: the league holds >= league_entry_size policies
    league     self, league and the scripted bots; last stage

A run starts in `solo` (from scratch) or `imitate` (with a teacher: `Args.teacher`), and `imitate`
goes on to `runner`. The scripted built-ins play at least half of the races until the win targets
against them hold in training, then self-play and the league take over, with the built-ins kept as
anchors. A stage switches automatically when its exit condition holds (over at least
`min_episodes` races of the last iteration, once the races have played `settle_turns` turns since
they last restarted), or by hand through the run's config (`stage`).
"""

from __future__ import annotations

from typing import Any

import torch

from services.trainer.opponents import OpponentKind
from shared.states import TrainingStage
from shared.training.config import CurriculumConfig

Stage = TrainingStage
"""The curriculum's stages (in shared.states, so that the API and the database know them too)."""


OPPONENT_MIX: dict[Stage, dict[OpponentKind, float]] = {
    Stage.IMITATE: {OpponentKind.RUNNER: 0.5, OpponentKind.BLOCKER: 0.5},
    Stage.SOLO: {OpponentKind.IDLE: 1.0},
    Stage.RUNNER: {OpponentKind.RUNNER: 0.5, OpponentKind.BLOCKER: 0.5},
    Stage.SELF_PLAY: {OpponentKind.SELF: 0.5, OpponentKind.RUNNER: 0.25, OpponentKind.BLOCKER: 0.25},
    Stage.LEAGUE: {
        OpponentKind.SELF: 0.4,
        OpponentKind.LEAGUE: 0.2,
        OpponentKind.RUNNER: 0.2,
        OpponentKind.BLOCKER: 0.2,
    },
}
"""Share of races against each kind of opponent, per stage: the built-ins play at least half of
the races until their win targets hold (`runner` exit), and 40% after, so they stay measured."""

SEARCH_STAGES = frozenset({Stage.IMITATE, Stage.SELF_PLAY, Stage.LEAGUE})
"""Where builtin:search drives the first `search_opponent.races` races (`draw_opponents`): once the
scripted built-ins are beaten, the strongest built-in is the next goal; in the imitate stage, so
that expert iteration labels the states of races against it too."""


def _at_least(metrics: dict[str, Any], key: str, target: float) -> bool:
    value = metrics.get(key)
    return value is not None and value >= target


def next_stage(
    stage: Stage, metrics: dict[str, Any], league_size: int, args: CurriculumConfig
) -> Stage | None:
    """The stage to switch to after an iteration with these metrics, or None to stay."""
    if not args.auto:
        return None
    if stage == Stage.IMITATE:
        return Stage.RUNNER if metrics.get("stage_steps", 0) >= args.imitation_steps else None
    if metrics.get("episodes", 0) < args.min_episodes:
        return None
    if stage == Stage.SOLO and metrics.get("checkpoints_per_100_turns", 0.0) >= args.solo_exit_rate:
        return Stage.RUNNER
    if (
        stage == Stage.RUNNER
        and _at_least(metrics, "win_rate_runner", args.runner_exit_win_rate)
        and _at_least(metrics, "win_rate_blocker", args.blocker_exit_win_rate)
    ):
        return Stage.SELF_PLAY
    if stage == Stage.SELF_PLAY and league_size >= args.league_entry_size:
        return Stage.LEAGUE
    return None


def draw_opponents(
    stage: Stage,
    count: int,
    league_slots: int,
    generator: torch.Generator,
    device: torch.device,
    search_races: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`count` opponents from the stage's mix: (kinds, league slots in [0, league_slots)); in the
    `SEARCH_STAGES` the first `search_races` are builtin:search's, always the same rows, so that
    each stays with its search worker."""
    mix = dict(OPPONENT_MIX[stage])
    if league_slots == 0 and OpponentKind.LEAGUE in mix:
        mix[OpponentKind.SELF] = mix.get(OpponentKind.SELF, 0.0) + mix.pop(OpponentKind.LEAGUE)
    kinds = torch.tensor([int(k) for k in mix], device=device)
    weights = torch.tensor(list(mix.values()), dtype=torch.float32, device=device)
    picks = torch.multinomial(weights, count, replacement=True, generator=generator)
    slots = torch.randint(max(1, league_slots), (count,), generator=generator, device=device)
    drawn = kinds[picks]
    if stage in SEARCH_STAGES and search_races:
        drawn[:search_races] = int(OpponentKind.SEARCH)
    return drawn, slots
