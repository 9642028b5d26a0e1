"""Teachers for imitation: who labels the states the student visits, and the labelled states kept.

A teacher gives, for player 0's pods in every race of a `TrainingEnv`, the action of the student's
action set it would play: a built-in (`builtin:runner`, `builtin:blocker`: their vectorised
commands, `opponents.py`, mapped to the nearest action, `actions.nearest_actions`) or a trained
policy (a checkpoint's actor: its argmax, when it has the same action set). All of it is batched
on the training device, so labelling costs about one opponent's move per turn.

Expert iteration has two teachers that improve on the student itself. `builtin:lookahead`
(`lookahead.py`) is batched on the device too: it plays every action of each pod in copies of the
race, then the policy's own moves, and labels with the action the values favour (or, with
`lookahead.soft_labels`, a distribution over the actions: `Teacher.targets`). `builtin:search` is
the other: the search bot with the
student's own current policy as its prior (the hybrid bot), in worker processes
(`search_opponents.py`), so each label is the first move of a plan the search scores at least as
high as the policy's own plan. The trainer hands it the student's weights every iteration
(`SearchTeacher.follow`); a decision at 60 plans costs 17 to 19 ms of a core
(scripts/measure_prior_agreement.py).

DAgger (Ross et al., 2011) in `ppo.Trainer`: the teacher drives the first round, the student from
the second; every visited state is labelled by the teacher and kept in `LabelledStates`, and the
student is trained on the aggregate by cross-entropy to the teacher's distribution (all of it on
one action unless the lookahead's labels are soft).
"""

from __future__ import annotations

import copy
from typing import Protocol

import torch
import torch.nn.functional as F

from services.trainer.actions import nearest_actions
from services.trainer.env import TrainingEnv, command_rotation
from services.trainer.export import export_agent
from services.trainer.lookahead import Lookahead, soft_targets
from services.trainer.opponents import Commands, blocker_commands, runner
from services.trainer.policy import Agent, DeepSets, action_count, deterministic_action
from services.trainer.search_opponents import SearchOpponents
from shared.games.podracing.torch_engine import TorchRaces
from shared.training.config import LookaheadConfig, NetShapeConfig, RewardWeightsConfig

BATCHED_TEACHERS = ("builtin:runner", "builtin:blocker")
"""The built-ins that have a vectorised copy (`opponents.py`), labelling on the device."""
SEARCH_TEACHER = "builtin:search"
LOOKAHEAD_TEACHER = "builtin:lookahead"
BUILTIN_TEACHERS = (*BATCHED_TEACHERS, SEARCH_TEACHER, LOOKAHEAD_TEACHER)
"""Every built-in teacher (shared.training.config.TEACHER_PATTERN; a test keeps them equal)."""


class Teacher(Protocol):
    """Who labels the student's states. The teachers below subclass it for its defaults: a teacher
    that needs nothing of the student and holds no processes, cheap enough for PPO's teacher term."""

    name: str
    labels_during_ppo: bool = True
    """Whether PPO after the imitate stage may ask for labels (its decaying teacher term)."""

    def labels(self, env: TrainingEnv) -> torch.Tensor:
        """[B, 2] the teacher's action for player 0's pods in the env's current states."""
        ...

    def targets(self, env: TrainingEnv) -> torch.Tensor:
        """[B, 2, A] the teacher's distribution over the actions for player 0's pods, what the
        student learns (by default all of it on the teacher's action)."""
        return F.one_hot(self.labels(env), len(env.table)).to(torch.float32)

    def follow(self, agent: Agent) -> None:  # noqa: ARG002 (most teachers need no student)
        """The student now, before a rollout the teacher labels (the prior of the searches)."""
        return None

    def close(self) -> None:
        """Stop what the teacher started besides torch."""
        return None


class BuiltinTeacher(Teacher):
    """A scripted built-in's commands, as the nearest action of the student's set."""

    def __init__(self, name: str) -> None:
        if name not in BATCHED_TEACHERS:
            raise ValueError(
                f"no batched copy of {name}: the batched built-in teachers are {', '.join(BATCHED_TEACHERS)}"
            )
        self.name = name
        self._commands = runner if name == "builtin:runner" else blocker_commands

    def commands(self, races: TorchRaces) -> Commands:
        return self._commands(races, 0)

    def labels(self, env: TrainingEnv) -> torch.Tensor:
        return nearest_labels(env, self.commands(env.races))


def nearest_labels(env: TrainingEnv, commands: Commands) -> torch.Tensor:
    """[B, 2] player 0's commands in every race as the nearest actions of the student's set."""
    target, thrust, boost, shield = commands
    view = env.view
    rotation = command_rotation(view, 0, target.to(view.x.dtype))
    share = thrust.to(view.x.dtype) / float(env.config.max_thrust)
    return nearest_actions(env.table, rotation, share, shield, boost)


class SearchTeacher(Teacher):
    """The search bot seeded with the student's policy (expert iteration's expert), deciding for
    player 0 in every race in `workers` processes; `follow` gives it the student's current weights."""

    name = SEARCH_TEACHER
    labels_during_ppo = False
    """A search decision per race and turn: too dear for every PPO state."""

    def __init__(
        self, *, workers: int, iterations: int, seed: int, shape: NetShapeConfig, action_set: str
    ) -> None:
        self.shape = shape
        self.action_set = action_set
        self.searchers = SearchOpponents(workers=workers, iterations=iterations, seed=seed, player=0)

    def follow(self, agent: Agent) -> None:
        """Use the student's actor as the search's prior from the next labels on."""
        source = export_agent(
            agent.actor,
            self.shape,
            source="the student in expert iteration",
            action_set=self.action_set,
            hybrid=True,
        )
        self.searchers.use_prior(source)

    def labels(self, env: TrainingEnv) -> torch.Tensor:
        rows = torch.arange(env.num_envs, device=env.races.device)
        self.searchers.request(env.races, rows)
        return nearest_labels(env, self.searchers.commands(env.races))

    def close(self) -> None:
        self.searchers.close()


class LookaheadTeacher(Teacher):
    """A policy improved by lookahead (`lookahead.Lookahead`), batched on the device: from the values
    of every action of each pod, the most likely action of that policy's own distribution
    reweighted by the values (`lookahead.soft_targets`; with `soft_labels`, that distribution).

    The policy improved upon is a frozen copy of the student, taken when the teacher first labels
    and again every `refresh_iterations` rollouts: a teacher that moved with every update of the
    student followed it into collapse (docs/trainer.md, "Expert iteration by lookahead")."""

    name = LOOKAHEAD_TEACHER
    labels_during_ppo = False
    """2 x A races played `horizon` turns per race and turn: too dear for every PPO state."""

    def __init__(self, config: LookaheadConfig, *, gamma: float, weights: RewardWeightsConfig) -> None:
        self.config = config
        self.gamma = gamma
        self.weights = weights
        self.reference: Agent | None = None
        self.rollouts = 0

    def follow(self, agent: Agent) -> None:
        refresh = self.config.refresh_iterations
        if self.reference is None or (refresh > 0 and self.rollouts % refresh == 0):
            self.reference = copy.deepcopy(agent).eval()
            self.reference.requires_grad_(False)
        self.rollouts += 1

    def values(self, env: TrainingEnv) -> torch.Tensor:
        """[B, 2, A] the value of every action of player 0's pods in the env's races."""
        if self.reference is None:
            raise RuntimeError("the lookahead teacher improves on a student: call follow(agent) first")
        lookahead = Lookahead(
            self.reference,
            env.table,
            horizon=self.config.horizon,
            gamma=self.gamma,
            weights=self.weights,
            bootstrap=self.config.bootstrap,
        )
        return lookahead.action_values(env.races, env.runners, env.opponent)

    @torch.no_grad()
    def targets(self, env: TrainingEnv) -> torch.Tensor:
        values = self.values(env)
        assert self.reference is not None  # values() raises without one
        prior = self.reference.log_probs(env.features[:, :2])
        targets = soft_targets(values, self.config.temperature, prior)
        if self.config.soft_labels:
            return targets
        return F.one_hot(targets.argmax(-1), targets.shape[-1]).to(targets.dtype)

    def labels(self, env: TrainingEnv) -> torch.Tensor:
        return self.targets(env).argmax(-1)


class PolicyTeacher(Teacher):
    """A trained actor (same features, same action set): its most likely action."""

    def __init__(
        self,
        name: str,
        actor: dict[str, torch.Tensor],
        shape: NetShapeConfig,
        action_set: str,
        device: torch.device,
    ) -> None:
        self.name = name
        self.state = {key: value.detach().cpu().clone() for key, value in actor.items()}
        self.actor = DeepSets(action_count(action_set), shape).to(device)
        self.actor.load_state_dict(self.state)
        self.actor.eval()

    @torch.no_grad()
    def labels(self, env: TrainingEnv) -> torch.Tensor:
        return deterministic_action(self.actor, env.features[:, :2])


class LabelledStates:
    """The aggregate DAgger trains on: features and the teacher's distributions over the actions
    (half precision: probabilities need no more), a ring of at most `capacity` pod-states on the
    device (the oldest leave first)."""

    def __init__(self, capacity: int, obs_dim: int, actions: int, device: torch.device) -> None:
        self.obs = torch.zeros(capacity, obs_dim, device=device)
        self.targets = torch.zeros(capacity, actions, dtype=torch.float16, device=device)
        self.size = 0
        self._next = 0

    def add(self, obs: torch.Tensor, targets: torch.Tensor) -> None:
        capacity = self.obs.shape[0]
        obs, targets = obs[-capacity:], targets[-capacity:]
        index = (self._next + torch.arange(obs.shape[0], device=obs.device)) % capacity
        self.obs[index] = obs
        self.targets[index] = targets.to(self.targets.dtype)
        self._next = (self._next + obs.shape[0]) % capacity
        self.size = min(capacity, self.size + obs.shape[0])

    def sample(self, count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """`count` states drawn with replacement: features [count, obs] and targets [count, A]."""
        index = torch.randint(self.size, (count,), generator=generator, device=generator.device)
        return self.obs[index], self.targets[index].to(torch.float32)


def soft_cross_entropy(log_p: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy from the student's log-probabilities [N, A] to target distributions [N, A]."""
    return -(targets * log_p).sum(-1).mean()
