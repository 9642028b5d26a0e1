"""PPO self-play on the batched podracing engine, with an imitation warm start, readable top to bottom.

One iteration: play `num_steps` turns in `num_envs` races (both of player 0's pods are samples
of the same policy), compute advantages with GAE, then update. In the `imitate` stage the update
is DAgger: a teacher labels every state the student visited (the teacher drives the first round),
and `imitation_updates` cross-entropy steps are taken on the aggregate of labelled states, with
the critic fitted on the same rollouts (its warm-up). Otherwise it is PPO: `update_epochs` passes
of clipped policy and value losses over shuffled minibatches, plus, after an imitation stage, a
cross-entropy to the teacher's action whose weight decays to 0 (and a few critic-only iterations
first). `Trainer` keeps the state between iterations (so a service can run it in chunks, stop it,
change its config at an iteration boundary and resume it from a checkpoint file), and
`Trainer.iterate` is the algorithm.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from services.trainer.checkpoint_format import CHECKPOINT_FORMAT as CHECKPOINT_FORMAT
from services.trainer.checkpoint_format import args_from_dict as args_from_dict
from services.trainer.checkpoint_format import args_to_dict as args_to_dict
from services.trainer.checkpoint_format import load_checkpoint as load_checkpoint
from services.trainer.curriculum import Stage, draw_opponents, next_stage
from services.trainer.env import PolicyFn, StepResult, TrainingEnv
from services.trainer.features import OBS_DIM
from services.trainer.imitation import (
    LOOKAHEAD_TEACHER,
    SEARCH_TEACHER,
    BuiltinTeacher,
    LabelledStates,
    LookaheadTeacher,
    PolicyTeacher,
    SearchTeacher,
    Teacher,
    soft_cross_entropy,
)
from services.trainer.league import League, LeagueEntry
from services.trainer.opponents import OpponentKind
from services.trainer.policy import Agent, DeepSets, action_count, entropy, sample_action
from services.trainer.search_opponents import SearchOpponents
from shared.games.podracing.engine import PODS_PER_PLAYER
from shared.training.config import MUTABLE_FIELDS as MUTABLE_FIELDS
from shared.training.config import RESUME_FIELDS as RESUME_FIELDS
from shared.training.config import TrainingConfig

log = logging.getLogger(__name__)

Args = TrainingConfig
"""Everything a run is configured with, one field each with its docstring: the API validates
requests with the same model (shared/training/config.py). `MUTABLE_FIELDS` may change while a run
trains, `RESUME_FIELDS` too when it resumes."""

ADAM_EPS = 1e-5
"""Adam's epsilon, as in OpenAI baselines' PPO and CleanRL's (PyTorch's default is 1e-8)."""
GENERATOR_SEED_OFFSET = 7
"""The trainer's own generator (opponent draws, minibatch orders, DAgger's samples) starts at seed
+ this: a stream apart from torch's global one, which the seed itself starts."""
ADVANTAGE_EPS = 1e-8
"""Keeps normalised advantages finite in a minibatch whose advantages are all equal."""
LEAGUE_SLOTS = 64
"""League members whose races an iteration's tally keeps apart (a request draws at most 32); any
beyond the last share its count."""


class DeviceUnavailable(RuntimeError):
    """The run asks for a device this machine does not have (not worth retrying here)."""


def resolve_device(name: str) -> torch.device:
    """The torch device for a run's `device` setting on this machine."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as exc:
        raise DeviceUnavailable(f"unknown device {name!r}: use auto, cpu, cuda or cuda:N") from exc
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceUnavailable(f"device {name!r} requested but this machine has no CUDA GPU")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceUnavailable(
                f"device {name!r} requested but this machine has {torch.cuda.device_count()} CUDA GPU(s)"
            )
    elif device.type != "cpu":
        raise DeviceUnavailable(f"device {name!r} is not supported: use auto, cpu, cuda or cuda:N")
    return device


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    next_value: torch.Tensor,
    next_done: torch.Tensor,
    gamma: float,
    gae_lambda: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation over a rollout of T steps.

    rewards, values [T, ...]; dones [T, ...] (1 where the observation at t starts a new race);
    next_value, next_done: after the last step. Returns (advantages, returns), both [T, ...]."""
    steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(steps)):
        if t == steps - 1:
            not_done, following = 1.0 - next_done, next_value
        else:
            not_done, following = 1.0 - dones[t + 1], values[t + 1]
        delta = rewards[t] + gamma * following * not_done - values[t]
        last = delta + gamma * gae_lambda * not_done * last
        advantages[t] = last
    return advantages, advantages + values


def explained_variance(values: torch.Tensor, returns: torch.Tensor) -> float:
    """How much of the returns' variance the critic's values explain (1: all; nan: no variance)."""
    b_values, b_returns = values.reshape(-1), returns.reshape(-1)
    variance = b_returns.var()
    if variance.item() == 0:
        return float("nan")
    return (1 - (b_returns - b_values).var() / variance).item()


def _grad_norm_clip(module: nn.Module, max_norm: float) -> None:
    nn.utils.clip_grad_norm_(module.parameters(), max_norm)


@dataclass
class Rollout:
    """One iteration's races, per step, race and pod: [T, B, 2] (obs [T, B, 2, OBS_DIM], dones [T, B])."""

    obs: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    values: torch.Tensor
    targets: torch.Tensor | None
    """[T, B, P, A] the teacher's distributions over the actions on these states (imitate stage,
    or a teacher term in PPO)."""
    tally: _Tally
    seconds: float


class Trainer:
    """A training run's state: agent, optimiser, stage, league, counters; `iterate()` advances it."""

    def __init__(self, args: Args, teacher: Teacher | None = None) -> None:
        self.args = args
        self.device = resolve_device(args.device)
        torch.manual_seed(args.seed)
        self.agent = Agent(args.shape, args.action_set).to(self.device)
        self.optimizer = torch.optim.Adam(self.agent.parameters(), lr=args.learning_rate, eps=ADAM_EPS)
        self.iteration = 0
        self.global_step = 0
        self.stage = args.stage
        self.stage_steps = 0
        """Environment steps since the run entered its current stage."""
        self.imitation_end_step: int | None = None
        """The step at which the imitate stage ended (the teacher term decays from there)."""
        if args.stage == Stage.IMITATE and args.teacher is None:
            raise ValueError("the imitate stage needs a teacher (Args.teacher)")
        self.teacher = teacher or (self._load_teacher(args.teacher) if args.teacher else None)
        self.labelled: LabelledStates | None = None
        self.league = League(args.league_capacity, args.league_protected)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(args.seed + GENERATOR_SEED_OFFSET)
        searching = args.search_opponent
        if searching.races > args.num_envs:
            raise ValueError(f"search_opponent.races ({searching.races}) exceeds num_envs ({args.num_envs})")
        if searching.min_iterations > searching.iterations:
            raise ValueError(
                f"search_opponent.min_iterations ({searching.min_iterations}) exceeds "
                f"search_opponent.iterations ({searching.iterations})"
            )
        self.search = (
            SearchOpponents(
                workers=searching.workers,
                iterations=searching.iterations,
                min_iterations=searching.min_iterations,
                seed=args.seed,
            )
            if searching.races
            else None
        )
        self.env = TrainingEnv(
            args.num_envs, self.device, seed=args.seed, action_set=args.action_set, search=self.search
        )
        self._league_fns: list[PolicyFn] = []
        self._league_drawn: list[LeagueEntry] = []
        self._next_obs: torch.Tensor | None = None
        self._next_done = torch.zeros(args.num_envs, device=self.device)
        self.turns_since_restart = 0
        """Race turns played since all races last (re)started (a resume, a stage switch)."""
        self.elapsed_s = 0.0
        """Training wall time over all chunks and resumes."""

    def _load_teacher(self, spec: str) -> Teacher:
        """A built-in, the lookahead or the search improving on the student (expert iteration), or a
        checkpoint's policy (same action set)."""
        if spec == LOOKAHEAD_TEACHER:
            return LookaheadTeacher(self.args.lookahead, gamma=self.args.gamma, weights=self.args.rewards)
        if spec == SEARCH_TEACHER:
            searching = self.args.search_opponent
            return SearchTeacher(
                workers=searching.workers,
                iterations=searching.iterations,
                seed=self.args.seed,
                shape=self.args.shape,
                action_set=self.args.action_set,
            )
        if spec.startswith("builtin:"):
            return BuiltinTeacher(spec)
        state = load_checkpoint(Path(spec))
        teacher_args = args_from_dict(dict(state["args"]))
        if teacher_args.action_set != self.args.action_set:
            raise ValueError(
                f"the teacher {spec} plays the action set {teacher_args.action_set!r}, "
                f"the student {self.args.action_set!r}"
            )
        actor = {k.removeprefix("actor."): v for k, v in state["agent"].items() if k.startswith("actor.")}
        return PolicyTeacher(spec, actor, teacher_args.shape, self.args.action_set, self.device)

    # ------------------------------------------------------------ config

    @property
    def finished(self) -> bool:
        """The budget is spent: steps, or wall time when the run has a time budget."""
        budget_s = self.args.time_budget_s
        return self.global_step >= self.args.total_steps or (
            budget_s is not None and self.elapsed_s >= budget_s
        )

    def apply_changes(self, changes: dict[str, Any]) -> None:
        """Change learning rate, entropy coefficient, reward weights or stage; call between iterations."""
        unknown = set(changes) - set(MUTABLE_FIELDS)
        if unknown:
            raise ValueError(f"cannot change {sorted(unknown)} while a run trains")
        merged = args_to_dict(self.args) | changes
        if isinstance(changes.get("rewards"), dict):
            merged["rewards"] = self.args.rewards.model_dump() | changes["rewards"]
        new = args_from_dict(merged)
        if new.stage != self.stage and "stage" in changes:
            if new.stage == Stage.IMITATE and self.teacher is None:
                log.warning(
                    "iteration %d: no teacher to imitate; the stage stays %s", self.iteration, self.stage
                )
                new = new.model_copy(update={"stage": self.args.stage})
            else:
                self._switch(new.stage, "by hand")
        self.args = new

    def _switch(self, stage: Stage, why: str) -> None:
        log.info("iteration %d: stage %s -> %s (%s)", self.iteration, self.stage, stage, why)
        if self.stage == Stage.IMITATE:
            self.imitation_end_step = self.global_step
            self.labelled = None
        self.stage = stage
        self.stage_steps = 0
        self._next_obs = None  # restart the races with the new stage's opponents

    def draw(self, count: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`count` opponents (kinds, league slots) from the current stage's mix."""
        return draw_opponents(
            self.stage,
            count,
            len(self._league_fns),
            self.generator,
            self.device,
            self.args.search_opponent.races,
        )

    def close(self) -> None:
        """Stop what the run started besides torch: the search opponents' and teacher's processes."""
        if self.search is not None:
            self.search.close()
        if self.teacher is not None:
            self.teacher.close()

    def _actor_fn(self, weights: dict[str, torch.Tensor]) -> PolicyFn:
        actor = DeepSets(action_count(self.args.action_set), self.args.shape).to(self.device)
        actor.load_state_dict(weights)
        actor.eval()

        @torch.no_grad()
        def act(obs: torch.Tensor) -> torch.Tensor:
            return sample_action(actor(obs), self.generator)

        return act

    def teacher_weight(self) -> float:
        """Weight of the cross-entropy to the teacher in PPO: imitation_coef after the imitate
        stage, decaying linearly to 0 over imitation_decay_steps; none for a teacher too dear to
        label PPO's states (`Teacher.labels_during_ppo`)."""
        if self.teacher is None or not self.teacher.labels_during_ppo:
            return 0.0
        if self.imitation_end_step is None or self.stage == Stage.IMITATE:
            return 0.0
        since = self.global_step - self.imitation_end_step
        return self.args.imitation_coef * max(0.0, 1.0 - since / max(1, self.args.imitation_decay_steps))

    def critic_warming(self) -> bool:
        """Right after the imitate stage only the critic learns, so the first policy gradients use
        values of the imitated policy rather than a critic still catching up with the new reward."""
        if self.imitation_end_step is None or self.stage == Stage.IMITATE:
            return False
        return self.global_step - self.imitation_end_step < self.args.critic_warmup_steps

    # --------------------------------------------------------- iteration

    def iterate(self) -> dict[str, Any]:
        """One iteration: rollout, advantages, update (DAgger in the imitate stage, else PPO), then
        the bookkeeping (counters, league, curriculum). Returns its metrics."""
        started = time.perf_counter()
        learning_rate = self._begin_iteration()
        imitating = self.stage == Stage.IMITATE
        rollout = self._rollout(teacher_drives=imitating and self.stage_steps == 0)
        advantages, returns = self._advantages(rollout)
        if imitating:
            losses = self._imitation_update(rollout, returns)
        else:
            losses = self._ppo_update(rollout, advantages, returns)
        metrics = self._count(rollout, returns, learning_rate, started) | losses
        metrics |= rollout.tally.metrics(self.args.num_steps * self.args.num_envs)
        self._rate_league(rollout.tally)
        metrics["league_size"] = len(self.league)
        self._snapshot()
        self._follow_curriculum(metrics)
        metrics["next_stage"] = str(self.stage)
        return metrics

    def _begin_iteration(self) -> float:
        """Draw this iteration's league opponents, (re)start the races if needed, set the learning rate."""
        args = self.args
        self._league_drawn = self.league.sample(args.league_opponents, self.generator)
        self._league_fns = [self._actor_fn(entry.actor) for entry in self._league_drawn]
        if self._next_obs is None:
            self._next_obs = self.env.reset(self.draw)
            self._next_done = torch.zeros(args.num_envs, device=self.device)
            self.turns_since_restart = 0
        lr = args.learning_rate
        if args.anneal_lr:
            lr *= max(0.0, 1.0 - self.global_step / max(1, args.total_steps))
        if self.stage == Stage.IMITATE:
            lr = args.imitation_lr
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        return lr

    def _rollout(self, *, teacher_drives: bool) -> Rollout:
        """`num_steps` turns of every race, into storage preallocated on the device. The student
        samples player 0's actions (or the teacher plays them: the first DAgger round)."""
        args, agent, env, device = self.args, self.agent, self.env, self.device
        T, B, P = args.num_steps, args.num_envs, PODS_PER_PLAYER
        label = self.teacher is not None and (self.stage == Stage.IMITATE or self.teacher_weight() > 0)
        obs = torch.zeros(T, B, P, OBS_DIM, device=device)
        actions = torch.zeros(T, B, P, dtype=torch.long, device=device)
        targets = torch.zeros(T, B, P, len(env.table), device=device) if label else None
        logprobs = torch.zeros(T, B, P, device=device)
        rewards = torch.zeros(T, B, P, device=device)
        dones = torch.zeros(T, B, device=device)
        values = torch.zeros(T, B, P, device=device)
        tally = _Tally(device)
        if self.teacher is not None and label:
            self.teacher.follow(agent)  # expert iteration: the searches improve on the student now

        def learner(features: torch.Tensor) -> torch.Tensor:
            return agent.sample(features)

        assert self._next_obs is not None
        next_obs, next_done = self._next_obs, self._next_done
        started = time.perf_counter()
        for step in range(T):
            obs[step] = next_obs[:, :P]  # player 0's pods come first
            dones[step] = next_done
            played: torch.Tensor | None = None
            if targets is not None:
                assert self.teacher is not None
                targets[step] = self.teacher.targets(env)
                played = targets[step].argmax(-1) if teacher_drives else None
            with torch.no_grad():
                action, logprob, _, value = agent.act(obs[step], played)
            actions[step], logprobs[step], values[step] = action, logprob, value
            next_obs, result = env.step(action, args.rewards, learner, self._league_fns, self.draw)
            rewards[step] = result.reward
            next_done = result.done.to(torch.float32)
            tally.add(result, env.league_slot)
        self._next_obs, self._next_done = next_obs, next_done
        seconds = time.perf_counter() - started
        return Rollout(obs, actions, logprobs, rewards, dones, values, targets, tally, seconds)

    def _advantages(self, rollout: Rollout) -> tuple[torch.Tensor, torch.Tensor]:
        """Every pod's own GAE; a race's end ends both of its pods' episodes."""
        assert self._next_obs is not None
        with torch.no_grad():
            next_value = self.agent.value(self._next_obs[:, :PODS_PER_PLAYER])
            return compute_gae(
                rollout.rewards,
                rollout.values,
                rollout.dones[..., None].expand_as(rollout.rewards),
                next_value,
                self._next_done[:, None].expand_as(next_value),
                self.args.gamma,
                self.args.gae_lambda,
            )

    def _value_loss(
        self, new_value: torch.Tensor, values: torch.Tensor, returns: torch.Tensor
    ) -> torch.Tensor:
        """Value loss, clipped around the rollout's values when `clip_vloss`."""
        if not self.args.clip_vloss:
            return 0.5 * ((new_value - returns) ** 2).mean()
        clip = self.args.clip_coef
        clipped_value = values + torch.clamp(new_value - values, -clip, clip)
        return 0.5 * torch.max((new_value - returns) ** 2, (clipped_value - returns) ** 2).mean()

    def _step(self, loss: torch.Tensor) -> None:
        self.optimizer.zero_grad()
        torch.autograd.backward(loss)
        _grad_norm_clip(self.agent.actor, self.args.max_grad_norm)
        _grad_norm_clip(self.agent.critic, self.args.max_grad_norm)
        self.optimizer.step()

    def _ppo_update(
        self, rollout: Rollout, advantages: torch.Tensor, returns: torch.Tensor
    ) -> dict[str, Any]:
        """Minibatch epochs of clipped policy loss, value loss, entropy bonus and teacher term."""
        args, agent = self.args, self.agent
        b_obs = rollout.obs.reshape(-1, OBS_DIM)
        b_actions, b_logprobs = rollout.actions.reshape(-1), rollout.logprobs.reshape(-1)
        b_advantages, b_returns, b_values = (
            advantages.reshape(-1),
            returns.reshape(-1),
            rollout.values.reshape(-1),
        )
        actions_count = len(self.env.table)
        b_targets = rollout.targets.reshape(-1, actions_count) if rollout.targets is not None else None
        teacher_w = self.teacher_weight() if b_targets is not None else 0.0
        actor_w = 0.0 if self.critic_warming() else 1.0
        batch = b_obs.shape[0]
        minibatch = max(1, batch // args.num_minibatches)
        clip_fracs: list[float] = []
        zero = torch.zeros((), device=self.device)
        pg_loss = v_loss = entropy_loss = teacher_loss = approx_kl = old_approx_kl = zero
        for _epoch in range(args.update_epochs):
            order = torch.randperm(batch, device=self.device, generator=self.generator)
            for start in range(0, batch, minibatch):
                idx = order[start : start + minibatch]
                log_p = agent.log_probs(b_obs[idx])
                new_value = agent.value(b_obs[idx])
                log_ratio = log_p.gather(-1, b_actions[idx, None]).squeeze(-1) - b_logprobs[idx]
                ratio = log_ratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-log_ratio).mean()
                    approx_kl = ((ratio - 1) - log_ratio).mean()
                    clip_fracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                adv = b_advantages[idx]
                if args.norm_adv:
                    adv = (adv - adv.mean()) / (adv.std() + ADVANTAGE_EPS)
                pg_loss = torch.max(
                    -adv * ratio, -adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                ).mean()
                v_loss = self._value_loss(new_value, b_values[idx], b_returns[idx])
                entropy_loss = entropy(log_p).mean()
                if b_targets is not None and teacher_w > 0:
                    teacher_loss = soft_cross_entropy(log_p, b_targets[idx])
                rl_loss = pg_loss - args.ent_coef * entropy_loss
                self._step(actor_w * rl_loss + teacher_w * teacher_loss + v_loss * args.vf_coef)
            if args.target_kl is not None and approx_kl.item() > args.target_kl:
                break
        return {
            "policy_loss": pg_loss.item(),
            "value_loss": v_loss.item(),
            "entropy": entropy_loss.item(),
            "approx_kl": approx_kl.item(),
            "old_approx_kl": old_approx_kl.item(),
            "clip_fraction": sum(clip_fracs) / max(1, len(clip_fracs)),
            "teacher_weight": teacher_w,
            "teacher_loss": teacher_loss.item(),
            "critic_only": actor_w == 0.0,
        }

    def _imitation_update(self, rollout: Rollout, returns: torch.Tensor) -> dict[str, Any]:
        """DAgger: add the rollout's labelled states to the aggregate, then `imitation_updates`
        steps of cross-entropy to the teacher on states drawn from the aggregate, with the value
        loss on as many of the rollout's states (the critic's warm-up, on the student's own races
        from the second round)."""
        args, agent = self.args, self.agent
        assert rollout.targets is not None
        b_obs = rollout.obs.reshape(-1, OBS_DIM)
        b_targets = rollout.targets.reshape(-1, rollout.targets.shape[-1])
        b_returns, b_values = returns.reshape(-1), rollout.values.reshape(-1)
        with torch.no_grad():
            agreement = (agent.actor(b_obs).argmax(-1) == b_targets.argmax(-1)).float().mean().item()
        if self.labelled is None:
            self.labelled = LabelledStates(args.imitation_buffer, OBS_DIM, b_targets.shape[-1], self.device)
        self.labelled.add(b_obs, b_targets)
        zero = torch.zeros((), device=self.device)
        ce_loss = v_loss = entropy_loss = zero
        for _ in range(args.imitation_updates):
            states, targets = self.labelled.sample(args.imitation_minibatch, self.generator)
            log_p = agent.log_probs(states)
            ce_loss = soft_cross_entropy(log_p, targets)
            with torch.no_grad():
                entropy_loss = entropy(log_p).mean()
            idx = torch.randint(
                b_obs.shape[0], (args.imitation_minibatch,), generator=self.generator, device=self.device
            )
            v_loss = self._value_loss(agent.value(b_obs[idx]), b_values[idx], b_returns[idx])
            self._step(ce_loss + v_loss * args.vf_coef)
        return {
            "policy_loss": ce_loss.item(),
            "value_loss": v_loss.item(),
            "entropy": entropy_loss.item(),
            "imitation_loss": ce_loss.item(),
            "imitation_agreement": agreement,
            "labelled_states": self.labelled.size,
            "teacher_drove": self.stage_steps == 0,
        }

    def _count(
        self, rollout: Rollout, returns: torch.Tensor, learning_rate: float, started: float
    ) -> dict[str, Any]:
        """Count the iteration's steps and time; its metrics that do not come from the update."""
        args = self.args
        explained = explained_variance(rollout.values, returns)
        steps = args.num_steps * args.num_envs
        self.iteration += 1
        self.global_step += steps
        self.stage_steps += steps
        seconds = time.perf_counter() - started
        self.elapsed_s += seconds
        return {
            "iteration": self.iteration,
            "global_step": self.global_step,
            "stage": str(self.stage),
            "stage_steps": self.stage_steps,
            "learning_rate": learning_rate,
            "ent_coef": args.ent_coef,
            "reward_mean": rollout.rewards.mean().item(),
            "explained_variance": explained,
            "sps": round(steps / seconds),
            "rollout_sps": round(steps / rollout.seconds),
            "seconds": seconds,
            "elapsed_s": self.elapsed_s,
        }

    def _rate_league(self, tally: _Tally) -> None:
        """Rate the league members drawn this iteration by their races against the learner."""
        for slot, entry in enumerate(self._league_drawn):
            wins, losses, draws = tally.league_results(slot)
            if wins + losses + draws:
                self.league.record(entry, wins, losses, draws)

    def _snapshot(self) -> None:
        """In self-play and league, every `league_snapshot_every` iterations a copy of the learner joins."""
        if self.stage not in (Stage.SELF_PLAY, Stage.LEAGUE):
            return
        if self.iteration % self.args.league_snapshot_every == 0:
            self.league.add(f"it{self.iteration}", self.iteration, self.agent.actor.state_dict())

    def _follow_curriculum(self, metrics: dict[str, Any]) -> None:
        """Switch to the next stage when the current one's exit condition holds, once the races
        have settled since they last restarted."""
        self.turns_since_restart += self.args.num_steps
        if self.turns_since_restart < self.args.curriculum.settle_turns:
            return
        following = next_stage(self.stage, metrics, len(self.league), self.args.curriculum)
        if following is not None:
            self._switch(following, "exit condition met")

    def run(
        self,
        *,
        max_seconds: float | None = None,
        max_iterations: int | None = None,
        on_iteration: Callable[[dict[str, Any]], None] | None = None,
        before_iteration: Callable[[], dict[str, Any] | None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> list[dict[str, Any]]:
        """Iterate until the budget, `max_seconds`, `max_iterations` or `should_stop()`.

        `before_iteration` may return config changes, applied before the iteration starts."""
        history: list[dict[str, Any]] = []
        started = time.monotonic()
        while not self.finished:
            if max_iterations is not None and len(history) >= max_iterations:
                break
            if max_seconds is not None and history and time.monotonic() - started >= max_seconds:
                break
            if should_stop is not None and should_stop():
                break
            if before_iteration is not None:
                changes = before_iteration()
                if changes:
                    self.apply_changes(changes)
            metrics = self.iterate()
            history.append(metrics)
            if on_iteration is not None:
                on_iteration(metrics)
        return history

    # -------------------------------------------------------- checkpoints

    def save(self, path: Path) -> None:
        """Write the whole state to `path` atomically (a crash never leaves half a checkpoint).

        DAgger's labelled states are not kept (hundreds of MB): a run resumed in the imitate
        stage aggregates afresh. A policy teacher's weights are, so the file it came from may go."""
        state = {
            "format": CHECKPOINT_FORMAT,
            "args": args_to_dict(self.args),
            "agent": self.agent.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "iteration": self.iteration,
            "global_step": self.global_step,
            "stage": str(self.stage),
            "stage_steps": self.stage_steps,
            "imitation_end_step": -1 if self.imitation_end_step is None else self.imitation_end_step,
            "league": self.league.state(),
            "elapsed_s": self.elapsed_s,
            "torch_rng": torch.get_rng_state(),
            "generator": self.generator.get_state(),
        }
        if isinstance(self.teacher, PolicyTeacher):
            state["teacher_actor"] = self.teacher.state
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        torch.save(state, partial)
        partial.replace(path)

    @classmethod
    def load(
        cls,
        path: Path,
        device: str | None = None,
        changes: dict[str, Any] | None = None,
        imitate: str | None = None,
    ) -> Trainer:
        """A trainer from a checkpoint (races restart; everything else continues).

        `changes` may name `MUTABLE_FIELDS` and `RESUME_FIELDS`. `imitate` names a new teacher
        (as `Args.teacher`) and puts the run in the imitate stage (DAgger from the run's policy,
        e.g. to distil a stronger checkpoint into it)."""
        state = load_checkpoint(path)
        data = dict(state["args"])
        if device is not None:
            data["device"] = device
        changes = dict(changes or {})
        for name in RESUME_FIELDS:
            if name in changes:
                data[name] = changes.pop(name)
        if imitate is not None:
            data["teacher"] = imitate
        args = args_from_dict(data)
        teacher: Teacher | None = None
        if "teacher_actor" in state and args.teacher is not None and imitate is None:
            teacher = PolicyTeacher(
                args.teacher, state["teacher_actor"], args.shape, args.action_set, resolve_device(args.device)
            )
        trainer = cls(args, teacher)
        trainer.agent.load_state_dict(state["agent"])
        trainer.optimizer.load_state_dict(state["optimizer"])
        trainer.iteration = int(state["iteration"])
        trainer.global_step = int(state["global_step"])
        trainer.stage = Stage(state["stage"])
        trainer.stage_steps = int(state["stage_steps"])
        end = int(state["imitation_end_step"])
        trainer.imitation_end_step = None if end < 0 else end
        trainer.league = League.from_state(state["league"])
        trainer.elapsed_s = float(state["elapsed_s"])
        torch.set_rng_state(state["torch_rng"])
        saved = state["generator"]
        if saved.numel() == trainer.generator.get_state().numel():
            trainer.generator.set_state(saved)
        else:
            # Saved on another kind of device (a CPU generator's state is not a CUDA one's):
            # go on with a fresh stream, still a function of the run's seed and iteration.
            trainer.generator.manual_seed(trainer.args.seed + GENERATOR_SEED_OFFSET + trainer.iteration)
        if changes:
            trainer.apply_changes(changes)
        if imitate is not None and trainer.stage != Stage.IMITATE:
            trainer._switch(Stage.IMITATE, f"imitating {imitate}")
        return trainer


class _Tally:
    """Per-iteration counts of finished races, by opponent kind, and checkpoint passes."""

    def __init__(self, device: torch.device) -> None:
        kinds = len(OpponentKind)
        self.wins = torch.zeros(kinds, dtype=torch.long, device=device)
        self.losses = torch.zeros(kinds, dtype=torch.long, device=device)
        self.races = torch.zeros(kinds, dtype=torch.long, device=device)
        self.turns = torch.zeros((), dtype=torch.long, device=device)
        self.passes = torch.zeros((), dtype=torch.long, device=device)
        self.league_wins = torch.zeros(LEAGUE_SLOTS, dtype=torch.long, device=device)
        self.league_losses = torch.zeros(LEAGUE_SLOTS, dtype=torch.long, device=device)
        self.league_races = torch.zeros(LEAGUE_SLOTS, dtype=torch.long, device=device)

    def add(self, result: StepResult, league_slot: torch.Tensor) -> None:
        done = result.done
        kind = result.opponent
        ones = done.long()
        self.races.index_add_(0, kind, ones)
        self.wins.index_add_(0, kind, (result.outcome > 0).long() & ones)
        self.losses.index_add_(0, kind, (result.outcome < 0).long() & ones)
        self.turns += result.turns.sum()
        self.passes += result.passes.sum()
        league = (kind == OpponentKind.LEAGUE) & done
        slot = league_slot.clamp(max=LEAGUE_SLOTS - 1)
        self.league_races.index_add_(0, slot, league.long())
        self.league_wins.index_add_(0, slot, (league & (result.outcome > 0)).long())
        self.league_losses.index_add_(0, slot, (league & (result.outcome < 0)).long())

    def league_results(self, slot: int) -> tuple[int, int, int]:
        wins, losses = int(self.league_wins[slot]), int(self.league_losses[slot])
        return wins, losses, int(self.league_races[slot]) - wins - losses

    def metrics(self, env_steps: int) -> dict[str, Any]:
        races = self.races.tolist()
        wins = self.wins.tolist()
        total = sum(races)
        out: dict[str, Any] = {
            "episodes": total,
            "episode_length": (int(self.turns) / total) if total else None,
            "win_rate": (sum(wins) / total) if total else None,
            "checkpoints_per_100_turns": 100.0 * int(self.passes) / env_steps,
        }
        for kind in OpponentKind:
            name = kind.name.lower()
            out[f"win_rate_{name}"] = wins[kind] / races[kind] if races[kind] else None
            out[f"episodes_{name}"] = races[kind]
        return out


def default_checkpoint_name(iteration: int) -> str:
    return f"ckpt-{iteration:06d}.pt"
