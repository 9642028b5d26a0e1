"""The trainer's environment: `BatchedPodracingEnv` races where player 0 is the learning policy and
player 1 is, race by race, idle, the scripted runner or blocker, the current policy, a frozen
league policy or builtin:search. Everything stays on the device; opponents that are policies run
batched, the search in worker processes that decide while the learner computes its turn.

Each race keeps its opponent until it ends; then a new one is drawn from the stage's mix
(`curriculum.OpponentMix`). Roles (runner / blocker) are tracked with hysteresis per player.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from services.trainer.actions import DEFAULT_ACTION_SET, ActionTable, Kind
from services.trainer.features import RaceView, features, frame_heading, update_runners
from services.trainer.opponents import Commands, OpponentKind, blocker_commands, idle_commands, runner
from services.trainer.rewards import (
    checkpoint_distance,
    lead,
    progress,
    shaping_rewards,
    touching,
    winning_rewards,
)
from services.trainer.search_opponents import SearchOpponents
from shared.games.podracing.batched_env import AIM_DISTANCE, BatchedPodracingEnv
from shared.games.podracing.engine import RaceConfig
from shared.training.config import RewardWeightsConfig

PolicyFn = Callable[[torch.Tensor], torch.Tensor]
"""Features [n, 2, OBS_DIM] -> action indices [n, 2] (`actions.ActionTable`)."""


@dataclass(frozen=True, slots=True)
class StepResult:
    reward: torch.Tensor
    """[B, 2] player 0's pods."""
    done: torch.Tensor
    """[B] races that ended this turn (already restarted)."""
    outcome: torch.Tensor
    """[B] +1 player 0 won, -1 lost, 0 draw or still running."""
    opponent: torch.Tensor
    """[B] the opponent kind each race was played against."""
    turns: torch.Tensor
    """[B] length of the races that ended."""
    passes: torch.Tensor
    """[B] checkpoints passed by player 0's pods this turn."""


def policy_commands(
    view: RaceView, player: int, actions: torch.Tensor, max_thrust: float, table: ActionTable
) -> Commands:
    """Commands of `player`'s pods from action indices [B, 2] into `table`: aim AIM_DISTANCE
    away along the frame heading plus the action's rotation, with its thrust, SHIELD or BOOST."""
    pods = slice(2 * player, 2 * player + 2)
    direction = frame_heading(view)[:, pods] + table.rotation[actions]
    x, y = view.x[:, pods], view.y[:, pods]
    target = torch.stack(
        (x + torch.cos(direction) * AIM_DISTANCE, y + torch.sin(direction) * AIM_DISTANCE), -1
    )
    kind = table.kind[actions]
    return target, table.thrust[actions] * max_thrust, kind == Kind.BOOST, kind == Kind.SHIELD


def command_rotation(view: RaceView, player: int, target: torch.Tensor) -> torch.Tensor:
    """[B, 2] radians from each of `player`'s pods' frame heading to its command's target."""
    pods = slice(2 * player, 2 * player + 2)
    wanted = torch.atan2(target[..., 1] - view.y[:, pods], target[..., 0] - view.x[:, pods])
    turn = wanted - frame_heading(view)[:, pods]
    return torch.remainder(turn + math.pi, 2.0 * math.pi) - math.pi


class TrainingEnv:
    def __init__(
        self,
        num_envs: int,
        device: torch.device | str = "cpu",
        *,
        seed: int = 0,
        config: RaceConfig | None = None,
        action_set: str = DEFAULT_ACTION_SET,
        search: SearchOpponents | None = None,
    ) -> None:
        self.num_envs = num_envs
        self.search = search
        """Drives the races whose opponent is `OpponentKind.SEARCH` (none may be drawn without it)."""
        self.device = torch.device(device)
        self.config = config or RaceConfig()
        self.table = ActionTable.of(action_set, self.device)
        self.env = BatchedPodracingEnv(
            num_envs, self.device, torch.float32, "idle", config=self.config, seed=seed
        )
        self.races = self.env.races
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed + 1)
        self.runners = torch.zeros(num_envs, 2, dtype=torch.long, device=self.device)
        self.opponent = torch.full((num_envs,), int(OpponentKind.IDLE), dtype=torch.long, device=self.device)
        self.league_slot = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self.view = RaceView.from_races(self.races)
        self.features = torch.zeros(0)
        self._distance = torch.zeros(0)
        self._lead = torch.zeros(0)

    def reset(self, draw: Callable[[int], tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
        """Restart every race; `draw(n)` gives n (opponent kinds, league slots)."""
        self.env.reset()
        self.opponent, self.league_slot = draw(self.num_envs)
        return self._observe()

    def _observe(self) -> torch.Tensor:
        self.view = RaceView.from_races(self.races)
        self.runners = update_runners(self.view, self.runners)
        self.features = features(self.view, self.runners)
        self._distance = checkpoint_distance(self.view)
        self._lead = lead(self.view)
        if self.search is not None:
            searched = (self.opponent == OpponentKind.SEARCH).nonzero().squeeze(1)
            if searched.numel():
                self.search.request(self.races, searched)
        return self.features

    def _opponent_commands(self, learner: PolicyFn, league: list[PolicyFn]) -> Commands:
        races, view = self.races, self.view
        kind = self.opponent
        target, thrust, boost, shield = idle_commands(races, 1)
        target, thrust, boost, shield = target.clone(), thrust.clone(), boost.clone(), shield.clone()

        def put(mask: torch.Tensor, commands: Commands) -> None:
            m = mask[:, None]
            target.copy_(torch.where(m[..., None], commands[0], target))
            thrust.copy_(torch.where(m, commands[1], thrust))
            boost.copy_(torch.where(m, commands[2], boost))
            shield.copy_(torch.where(m, commands[3], shield))

        put(kind == OpponentKind.RUNNER, runner(races, 1))
        put(kind == OpponentKind.BLOCKER, blocker_commands(races, 1))
        searched = kind == OpponentKind.SEARCH
        if self.search is not None and bool(searched.any()):
            put(searched, self.search.commands(races))
        max_thrust = float(self.config.max_thrust)
        groups: list[tuple[torch.Tensor, PolicyFn]] = [(kind == OpponentKind.SELF, learner)]
        groups += [
            ((kind == OpponentKind.LEAGUE) & (self.league_slot == j), fn) for j, fn in enumerate(league)
        ]
        for mask, fn in groups:
            rows = mask.nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            actions = torch.zeros(self.num_envs, 2, dtype=torch.long, device=self.device)
            actions[rows] = fn(self.features[rows, 2:])
            put(mask, policy_commands(view, 1, actions, max_thrust, self.table))
        return target, thrust, boost, shield

    def step(
        self,
        actions: torch.Tensor,
        weights: RewardWeightsConfig,
        learner: PolicyFn,
        league: list[PolicyFn],
        draw: Callable[[int], tuple[torch.Tensor, torch.Tensor]],
    ) -> tuple[torch.Tensor, StepResult]:
        """Play one turn; `actions` [B, 2] (indices) for player 0. Returns the next features and result."""
        own = policy_commands(self.view, 0, actions, float(self.config.max_thrust), self.table)
        theirs = self._opponent_commands(learner, league)
        target = torch.cat((own[0], theirs[0]), 1)
        thrust = torch.cat((own[1], theirs[1]), 1)
        boost = torch.cat((own[2], theirs[2]), 1)
        shield = torch.cat((own[3], theirs[3]), 1)
        before, lead_before = self._distance, self._lead
        played = self.opponent.clone()
        done = self.env.step_commands(target, thrust, boost, shield).clone()
        races = self.races
        passes = races.passes.clone()
        winner = races.episode_winner
        outcome = torch.where(done & (winner == 0), 1, torch.where(done & (winner == 1), -1, 0))
        turns = torch.where(done, races.episode_turns, 0)
        runners = self.runners
        kinds, slots = draw(self.num_envs)
        self.opponent = torch.where(done, kinds, self.opponent)
        self.league_slot = torch.where(done, slots, self.league_slot)
        next_features = self._observe()
        # Idle pods lose by timing out after 100 turns whatever the learner does: no win to learn.
        earned = torch.where(played == OpponentKind.IDLE, 0, outcome)
        reward = winning_rewards(weights, lead_before, self._lead, earned, done)[:, None].expand(-1, 2)
        if weights.shaped():
            gained = progress(before, self.view, passes, done)
            contact = touching(self.view)
            reward = reward + shaping_rewards(weights, 0, gained, passes, contact, runners, done)
        result = StepResult(
            reward=reward,
            done=done,
            outcome=outcome,
            opponent=played,
            turns=turns,
            passes=passes[:, :2].sum(1),
        )
        return next_features, result
