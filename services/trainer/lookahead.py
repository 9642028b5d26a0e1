"""Lookahead: a batched search on the torch engine that values every action of each of player 0's
pods, for the expert of expert iteration (`imitation.LookaheadTeacher`).

For a batch of B races it makes 2 x A copies of each (A actions in the set, `TorchRaces.repeated`):
in copy (pod p, action a) pod p plays a on the first turn and its teammate the policy's most likely
action; from the second turn on both play the policy's most likely action, for `horizon` turns in
all. Player 1 plays what it plays in the race: the scripted runner or blocker (exact: they are
deterministic), standing still, or, for any policy or search opponent, the policy's most likely
action (self-play's assumption). A copy's value is the training reward summed over those turns
(`rewards.winning_rewards`: the lead gained, +1/-1 for the win), discounted by gamma, plus, with
`bootstrap`, the policy's critic where the copy still races after `horizon` turns. That is a
one-step policy improvement (the rollout algorithm): the action of highest value is at least as
good as the policy's own wherever the values and the model of player 1 are right.

The values of all the actions make the label (`soft_targets`): the policy's own distribution
reweighted by exp(value / temperature), so that the policy keeps its choice where the values
(nearly) tie, which is most states (in half of the shipped policy's, the best two actions' values
are less than 0.002 apart), and changes it where an action is clearly better.

All of it is one batch on the training device: B x 2A races for `horizon` engine steps and
actor calls, then one critic call.
"""

from __future__ import annotations

import torch

from services.trainer.actions import ActionTable
from services.trainer.env import policy_commands
from services.trainer.features import RaceView, features, update_runners
from services.trainer.opponents import Commands, OpponentKind, blocker_commands, idle_commands, runner
from services.trainer.policy import Agent
from services.trainer.rewards import lead, winning_rewards
from shared.games.podracing.torch_engine import TorchRaces
from shared.training.config import RewardWeightsConfig

PODS = 2


def _where(mask: torch.Tensor, chosen: Commands, other: Commands) -> Commands:
    """Per race [N]: `chosen` commands where `mask`, else `other`."""
    m = mask[:, None]
    return (
        torch.where(m[..., None], chosen[0], other[0]),
        torch.where(m, chosen[1], other[1]),
        torch.where(m, chosen[2], other[2]),
        torch.where(m, chosen[3], other[3]),
    )


def opponent_commands(
    table: ActionTable,
    races: TorchRaces,
    view: RaceView,
    policy_actions: torch.Tensor,
    kind: torch.Tensor,
) -> Commands:
    """Player 1's commands in every race by its `OpponentKind` [N]: standing still, the scripted
    runner or blocker, or else (a policy or the search) `policy_actions` [N, 2], the policy's
    most likely actions for player 1's pods."""
    max_thrust = float(races.config.max_thrust)
    commands = policy_commands(view, 1, policy_actions, max_thrust, table)
    commands = _where(kind == OpponentKind.IDLE, idle_commands(races, 1), commands)
    commands = _where(kind == OpponentKind.RUNNER, runner(races, 1), commands)
    return _where(kind == OpponentKind.BLOCKER, blocker_commands(races, 1), commands)


class Lookahead:
    """Values of every action of player 0's pods by rollouts of the student (see the module
    docstring). `agent` is read at every call, so it follows the student as it learns."""

    def __init__(
        self,
        agent: Agent,
        table: ActionTable,
        *,
        horizon: int,
        gamma: float,
        weights: RewardWeightsConfig,
        bootstrap: bool = True,
    ) -> None:
        if horizon < 1:
            raise ValueError("the lookahead horizon must be at least 1 turn")
        self.agent = agent
        self.table = table
        self.horizon = horizon
        self.gamma = gamma
        self.weights = weights
        self.bootstrap = bootstrap
        """Add the critic's value where a copy still races after `horizon` turns."""

    @torch.no_grad()
    def action_values(self, races: TorchRaces, runners: torch.Tensor, opponent: torch.Tensor) -> torch.Tensor:
        """[B, 2, A] the value of each action of each of player 0's pods in `races` (as they are now,
        before their next turn); `runners` [B, 2] are the races' runner pods (`update_runners`) and
        `opponent` [B] the `OpponentKind` of each race's player 1."""
        count = len(self.table)
        plans = PODS * count
        copies = races.repeated(plans)
        size = copies.num_races
        kind = opponent.repeat_interleave(plans)
        roles = runners.repeat_interleave(plans, dim=0)
        plan = torch.arange(size, device=copies.device) % plans
        first_pod, first_action = plan // count, plan % count
        max_thrust = float(copies.config.max_thrust)
        idle = kind == OpponentKind.IDLE

        value = torch.zeros(size, device=copies.device)
        discount = 1.0
        view = RaceView.from_races(copies)
        feats = features(view, roles)
        for turn in range(self.horizon):
            likeliest = self.agent.actor(feats).argmax(-1)  # all four pods in one call
            actions = likeliest[:, :PODS]
            if turn == 0:
                actions = actions.scatter(1, first_pod[:, None], first_action[:, None])
            own = policy_commands(view, 0, actions, max_thrust, self.table)
            theirs = opponent_commands(self.table, copies, view, likeliest[:, PODS:], kind)
            racing = ~copies.finished
            lead_before = lead(view)
            copies.step(
                torch.cat((own[0], theirs[0]), 1),
                torch.cat((own[1], theirs[1]), 1),
                torch.cat((own[2], theirs[2]), 1),
                torch.cat((own[3], theirs[3]), 1),
            )
            ended = copies.just_finished
            won = torch.where(copies.winner == 0, 1, torch.where(copies.winner == 1, -1, 0))
            earned = torch.where(idle, 0, won)  # as in training: no win to learn against idle pods
            view = RaceView.from_races(copies)
            roles = update_runners(view, roles)
            feats = features(view, roles)
            reward = winning_rewards(self.weights, lead_before, lead(view), earned, ended)
            value += discount * torch.where(racing, reward, 0.0)
            discount *= self.gamma
        still = ~copies.finished & self.bootstrap
        value += discount * torch.where(still, self.agent.value(feats[:, :PODS]).mean(-1), 0.0)
        return value.view(-1, PODS, count)


def soft_targets(values: torch.Tensor, temperature: float, prior: torch.Tensor | None = None) -> torch.Tensor:
    """[..., A] a distribution over actions from their values [..., A]: softmax(prior + values /
    temperature), the prior being a policy's log-probabilities (the improvement that stays closest
    to that policy: where the values tie, its own choice wins), or all the mass on the best action
    at temperature 0."""
    if temperature <= 0:
        return torch.nn.functional.one_hot(values.argmax(-1), values.shape[-1]).to(values.dtype)
    logits = values / temperature
    if prior is not None:
        logits = logits + prior
    return torch.softmax(logits, dim=-1)
