"""What a training run may be configured with, as pydantic models that mirror the trainer's `Args`
(services/trainer/ppo.py) field for field, with the same defaults and with bounds.

The gateway validates requests with them without importing the trainer (torch), and the worker
builds its `Args` from the dict they produce. tests/trainer/test_config_schema.py keeps them equal
to `Args` (names, nesting and defaults), so a field added to `Args` must be added here too.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from shared.states import TrainingStage

DEVICE_PATTERN = r"^(auto|cpu|cuda(:[0-9]{1,2})?)$"
"""auto (CUDA when the worker has it, else its CPU), cpu, cuda, or cuda:N (the N-th GPU)."""
MUTABLE_FIELDS = ("learning_rate", "ent_coef", "rewards", "stage")
"""What may change while a run trains (services.trainer.ppo.MUTABLE_FIELDS, kept equal by a test)."""
MAX_TOTAL_STEPS = 10**12
MAX_SECONDS = 10**8
"""Above three years: a budget beyond it is a typo."""
ACTION_SET_PATTERN = r"^(r5t3|r5t3s3|r7t5|r3t2)$"
"""services.trainer.actions.ACTION_SETS (a test keeps them equal)."""
TEACHER_PATTERN = r"^builtin:(runner|blocker)$"
"""The built-ins with a batched copy (services.trainer.imitation.BUILTIN_TEACHERS). A run created
through the API cannot name a file on the worker; `arena train --imitate` can."""
MAX_ROLLOUT_STEPS = 2**22
"""num_envs x num_steps: a rollout of 4M steps already takes gigabytes (on the GPU when there is one)."""


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class NetShapeConfig(_Config):
    """Layer widths of the policy and critic networks."""

    encoder_hidden: int = Field(default=32, ge=1, le=1024)
    embedding: int = Field(default=16, ge=1, le=1024)
    hidden: int = Field(default=64, ge=1, le=4096)


class RewardWeightsConfig(_Config):
    """Weights of the reward terms (docs/trainer.md); every one may change while a run trains."""

    lead: float = Field(
        default=1.0,
        ge=-1000,
        le=1000,
        description="per race length of change in (own best pod's progress - the opponent's best pod's)",
    )
    win: float = Field(default=1.0, ge=-1000, le=1000, description="won (+) or lost (-) race, at its end")
    progress: float = Field(
        default=0.0, ge=-1000, le=1000, description="shaping: per 1,000 map units of a pod's progress"
    )
    checkpoint: float = Field(default=0.0, ge=-1000, le=1000, description="shaping: per checkpoint passed")
    team_spirit: float = Field(default=0.3, ge=0, le=1, description="share of the teammate's shaping reward")
    blocker_progress: float = Field(
        default=0.3, ge=-1000, le=1000, description="how much a blocker's own progress counts in the shaping"
    )
    runner_contact: float = Field(
        default=0.0,
        ge=-1000,
        le=1000,
        description="shaping: penalty per turn the runner touches an enemy pod",
    )
    blocker_contact: float = Field(
        default=0.0,
        ge=-1000,
        le=1000,
        description="shaping: bonus per turn the blocker touches the enemy runner",
    )
    blocker_hinder: float = Field(
        default=0.0,
        ge=-1000,
        le=1000,
        description="shaping: penalty per 1,000 units of the enemy runner's progress, for the blocker",
    )


class CurriculumConfig(_Config):
    """When the curriculum moves a run to its next stage."""

    auto: bool = Field(default=True, description="advance stages when their exit condition holds")
    imitation_steps: int = Field(
        default=2_000_000, ge=0, le=MAX_TOTAL_STEPS, description="steps of DAgger before PPO takes over"
    )
    solo_exit_rate: float = Field(default=8.0, ge=0, le=1000)
    runner_exit_win_rate: float = Field(default=0.95, ge=0, le=1)
    blocker_exit_win_rate: float = Field(default=0.75, ge=0, le=1)
    league_entry_size: int = Field(default=4, ge=1, le=1000)
    min_episodes: int = Field(default=32, ge=0, le=10**9)
    settle_turns: int = Field(
        default=400, ge=0, le=10**6, description="turns after the races restart before an exit is checked"
    )


EVALUATION_OPPONENTS = ("builtin:runner", "builtin:blocker", "builtin:search")
"""Who an evaluation races, in the order it plays and shows them (services.trainer.reference_eval;
a test keeps them equal)."""


class TrainingEvaluationConfig(_Config):
    """The trainer service's evaluation table: every few chunks, the checkpoint's exported bot races
    the built-in runner, blocker and search bots in the reference engine (docs/trainer.md,
    "Evaluation"). The bounds keep one evaluation within minutes: it runs inside a chunk."""

    every_chunks: int = Field(
        default=5,
        ge=0,
        le=10_000,
        description="evaluate after every N-th chunk and after the last one; 0: never",
    )
    races: int = Field(
        default=20,
        ge=0,
        le=200,
        description="races against builtin:runner, and as many against builtin:blocker",
    )
    search_races: int = Field(default=6, ge=0, le=50, description="races against builtin:search")
    search_iterations: int = Field(
        default=60,
        ge=1,
        le=1000,
        description="plans builtin:search scores per decision, instead of a clock budget (deterministic); "
        "60 is about what 10 ms buy on one free CPU core",
    )


class TrainingConfig(_Config):
    """The trainer's Args. In a request every field is optional: what is left out takes its default."""

    seed: int = Field(default=1, ge=0, le=2**31 - 1)
    device: str = Field(default="auto", pattern=DEVICE_PATTERN, description="auto, cpu, cuda or cuda:N")
    total_steps: int = Field(default=10_000_000, ge=1, le=MAX_TOTAL_STEPS, description="budget in env steps")
    time_budget_s: float | None = Field(
        default=None, gt=0, le=MAX_SECONDS, description="budget in seconds of training; null: steps only"
    )
    num_envs: int = Field(default=256, ge=1, le=16_384, description="races played at once")
    num_steps: int = Field(default=128, ge=1, le=4096, description="turns per race per rollout")
    learning_rate: float = Field(default=3e-4, gt=0, le=1)
    anneal_lr: bool = True
    gamma: float = Field(default=0.995, ge=0, le=1)
    gae_lambda: float = Field(default=0.95, ge=0, le=1)
    num_minibatches: int = Field(default=8, ge=1, le=4096)
    update_epochs: int = Field(default=4, ge=1, le=100)
    norm_adv: bool = True
    clip_coef: float = Field(default=0.2, gt=0, le=10)
    clip_vloss: bool = True
    ent_coef: float = Field(default=0.003, ge=0, le=10)
    vf_coef: float = Field(default=0.5, ge=0, le=100)
    max_grad_norm: float = Field(default=0.5, gt=0, le=1000)
    target_kl: float | None = Field(default=None, gt=0, le=100)
    action_set: str = Field(
        default="r5t3", pattern=ACTION_SET_PATTERN, description="discrete actions per pod"
    )
    teacher: str | None = Field(
        default=None,
        pattern=TEACHER_PATTERN,
        description="the built-in the imitate stage copies (the command line also takes a checkpoint file)",
    )
    imitation_buffer: int = Field(
        default=2_000_000, ge=1, le=50_000_000, description="labelled pod-states kept"
    )
    imitation_lr: float = Field(default=3e-3, gt=0, le=1, description="DAgger's learning rate")
    imitation_updates: int = Field(
        default=64, ge=1, le=100_000, description="DAgger's gradient steps per iteration"
    )
    imitation_minibatch: int = Field(default=4096, ge=1, le=1_000_000)
    imitation_coef: float = Field(
        default=1.0, ge=0, le=1000, description="teacher term's weight after imitation"
    )
    imitation_decay_steps: int = Field(default=20_000_000, ge=1, le=MAX_TOTAL_STEPS)
    critic_warmup_steps: int = Field(default=500_000, ge=0, le=MAX_TOTAL_STEPS)
    shape: NetShapeConfig = Field(default_factory=NetShapeConfig)
    rewards: RewardWeightsConfig = Field(default_factory=RewardWeightsConfig)
    curriculum: CurriculumConfig = Field(default_factory=CurriculumConfig)
    stage: TrainingStage = Field(default=TrainingStage.SOLO, description="the stage the run starts in")
    league_capacity: int = Field(default=20, ge=1, le=1000)
    league_protected: int = Field(default=5, ge=0, le=1000)
    league_snapshot_every: int = Field(default=10, ge=1, le=10**6)
    league_opponents: int = Field(default=4, ge=0, le=32)
    evaluation: TrainingEvaluationConfig = Field(
        default_factory=TrainingEvaluationConfig,
        description="the evaluation of checkpoints against the built-ins (the run page's table)",
    )

    @model_validator(mode="after")
    def _imitation_has_a_teacher(self) -> TrainingConfig:
        if self.stage == TrainingStage.IMITATE and self.teacher is None:
            raise PydanticCustomError(
                "imitate_without_teacher", "the imitate stage needs a teacher, e.g. builtin:blocker", {}
            )
        return self

    @model_validator(mode="after")
    def _rollout_fits(self) -> TrainingConfig:
        steps = self.num_envs * self.num_steps
        if steps > MAX_ROLLOUT_STEPS:
            raise PydanticCustomError(
                "rollout_too_large",
                "num_envs x num_steps is {steps} environment steps per iteration; at most {limit} fit "
                "a rollout in memory",
                {"steps": steps, "limit": MAX_ROLLOUT_STEPS},
            )
        return self

    def resolved(self) -> dict[str, Any]:
        """Every field, defaults filled in, as JSON values: what a run stores and the worker reads."""
        return self.model_dump(mode="json")


class ConfigChange(_Config):
    """A change to a training run's config while it trains: applied at the worker's next iteration
    boundary (never inside an iteration). Only the fields sent change; `rewards` changes only the
    weights it names."""

    learning_rate: float | None = Field(default=None, gt=0, le=1)
    ent_coef: float | None = Field(default=None, ge=0, le=10)
    rewards: RewardWeightsConfig | None = None
    stage: TrainingStage | None = Field(default=None, description="move the run to this stage")

    @model_validator(mode="before")
    @classmethod
    def _only_what_may_change(cls, data: Any) -> Any:
        if isinstance(data, dict):
            fixed = sorted(str(key) for key in data if key not in MUTABLE_FIELDS)
            if fixed:
                raise PydanticCustomError(
                    "immutable_field",
                    "{fields} cannot change while a run trains: only learning_rate, ent_coef, rewards "
                    "and stage can (anything else needs a new run)",
                    {"fields": ", ".join(fixed)},
                )
        return data

    @model_validator(mode="after")
    def _something(self) -> ConfigChange:
        if not self.changes():
            raise PydanticCustomError(
                "empty_change", "nothing to change: send learning_rate, ent_coef, rewards or stage"
            )
        return self

    def changes(self) -> dict[str, Any]:
        """What was sent, without nulls (null: leave as is), as JSON values."""
        data = self.model_dump(mode="json", exclude_unset=True, exclude_none=True)
        if not data.get("rewards", True):
            del data["rewards"]
        return data
