"""What a training run is configured with: one pydantic model per group of settings, one field each
with its default, its bounds and a docstring (the API schema's description).

The trainer uses these models as its `Args` (services/trainer/ppo.py); the gateway validates
requests with them without importing the trainer (torch). The bounds are what a request may ask
of the service's workers: `TrainingConfig(...)` and `model_validate` check them, while the trainer
builds its own runs (the command line, a checkpoint) without them (`ppo.args_from_dict`), so that
one's own GPU may race more than the service allows and a run may imitate a checkpoint file.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from shared.states import TrainingStage

DEVICE_PATTERN = r"^(auto|cpu|cuda(:[0-9]{1,2})?)$"
"""auto (CUDA when the worker has it, else its CPU), cpu, cuda, or cuda:N (the N-th GPU)."""
MAX_TOTAL_STEPS = 10**12
"""A budget in steps beyond it is a typo."""
MAX_SECONDS = 10**8
"""Above three years: a budget beyond it is a typo."""
ACTION_SET_PATTERN = r"^(r5t3|r5t3s3|r7t5|r3t2)$"
"""services.trainer.actions.ACTION_SETS (a test keeps them equal)."""
TEACHER_PATTERN = r"^builtin:(runner|blocker|search|lookahead)$"
"""The built-in teachers (services.trainer.imitation.BUILTIN_TEACHERS; builtin:search and
builtin:lookahead are searches that improve on the student's own policy: expert iteration). A run
created through the API cannot name a file on the worker; `arena train --imitate` can."""
MAX_ROLLOUT_STEPS = 2**22
"""num_envs x num_steps: a rollout of 4M steps already takes gigabytes (on the GPU when there is one)."""

LearningRate = Annotated[float, Field(gt=0, le=1)]
"""PPO's learning rate, in the config and in a change to it."""
EntropyCoefficient = Annotated[float, Field(ge=0, le=10)]
"""The entropy bonus's weight, in the config and in a change to it."""


class _Config(BaseModel):
    """Unknown fields, NaN and infinities are refused; each field's docstring is its description in the
    API schema; a config never changes in place (`model_copy(update=...)` makes the changed one)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True, frozen=True)


class NetShapeConfig(_Config):
    """Layer widths of the policy and critic networks, stored in checkpoints so that export rebuilds
    the same network."""

    encoder_hidden: Annotated[int, Field(ge=1, le=1024)] = 32
    """Width of the hidden layer of the encoder that embeds each other pod."""
    embedding: Annotated[int, Field(ge=1, le=1024)] = 16
    """Width of an other pod's embedding (and of their max-pooled context)."""
    hidden: Annotated[int, Field(ge=1, le=4096)] = 64
    """Width of the head's two hidden layers."""


class RewardWeightsConfig(_Config):
    """Weights of the reward terms (docs/trainer.md); every one may change while a run trains."""

    lead: Annotated[float, Field(ge=-1000, le=1000)] = 1.0
    """Per race length of change in (own best pod's progress - the opponent's best pod's)."""
    win: Annotated[float, Field(ge=-1000, le=1000)] = 1.0
    """Won (+) or lost (-) race, at its end."""
    progress: Annotated[float, Field(ge=-1000, le=1000)] = 0.0
    """Shaping: per 1,000 map units of a pod's own progress along the track."""
    checkpoint: Annotated[float, Field(ge=-1000, le=1000)] = 0.0
    """Shaping: per checkpoint passed."""
    team_spirit: Annotated[float, Field(ge=0, le=1)] = 0.3
    """Share of the teammate's shaping reward in each pod's."""
    blocker_progress: Annotated[float, Field(ge=-1000, le=1000)] = 0.3
    """How much a blocker's own progress counts in the progress shaping (the runner's counts 1)."""
    runner_contact: Annotated[float, Field(ge=-1000, le=1000)] = 0.0
    """Shaping: penalty per turn the runner touches an enemy pod."""
    blocker_contact: Annotated[float, Field(ge=-1000, le=1000)] = 0.0
    """Shaping: bonus per turn the blocker touches the enemy runner."""
    blocker_hinder: Annotated[float, Field(ge=-1000, le=1000)] = 0.0
    """Shaping: penalty per 1,000 units of the enemy runner's progress, for the blocker."""

    def shaped(self) -> bool:
        """Whether any shaping term is on (they cost a few kernels per turn)."""
        return any(
            (self.progress, self.checkpoint, self.runner_contact, self.blocker_contact, self.blocker_hinder)
        )


class CurriculumConfig(_Config):
    """When the curriculum moves a run to its next stage (services/trainer/curriculum.py)."""

    auto: bool = True
    """Advance stages when their exit condition holds."""
    imitation_steps: Annotated[int, Field(ge=0, le=MAX_TOTAL_STEPS)] = 2_000_000
    """Environment steps of DAgger before the imitate stage hands over to PPO (runner stage)."""
    solo_exit_rate: Annotated[float, Field(ge=0, le=1000)] = 8.0
    """Checkpoints passed by both pods per 100 race turns that end the solo stage."""
    runner_exit_win_rate: Annotated[float, Field(ge=0, le=1)] = 0.95
    """Win rate against the scripted runner that (with the blocker's) ends the runner stage."""
    blocker_exit_win_rate: Annotated[float, Field(ge=0, le=1)] = 0.75
    """Win rate against the scripted blocker that (with the runner's) ends the runner stage."""
    league_entry_size: Annotated[int, Field(ge=1, le=1000)] = 4
    """League size that ends the self-play stage."""
    min_episodes: Annotated[int, Field(ge=0, le=10**9)] = 32
    """Races an iteration must finish before its metrics may end a stage."""
    settle_turns: Annotated[int, Field(ge=0, le=10**6)] = 400
    """Race turns after the races (re)start (a resume, a stage switch) before an exit is checked:
    the first races to finish are the short ones, mostly won, and their win rate says little."""


class SearchOpponentConfig(_Config):
    """`builtin:search` as a training opponent (services/trainer/search_opponents.py): it drives
    player 1 in the first `races` races of the imitate, self_play and league stages, deciding in
    worker processes while the learner computes its own turn (docs/trainer.md, "Search in the mix").
    Its `iterations` and `workers` also set the search teacher's (teacher builtin:search)."""

    races: Annotated[int, Field(ge=0, le=4096)] = 0
    """Races (of num_envs) against builtin:search in the imitate, self_play and league stages; 0: none.
    Each costs one search decision a turn, about 1 ms per 8 plans on one CPU core."""
    iterations: Annotated[int, Field(ge=1, le=1000)] = 60
    """Plans the search scores per decision (an iteration cap, not a clock: reproducible, and the
    same opponent on every machine); 60 is the evaluation's setting."""
    min_iterations: Annotated[int, Field(ge=0, le=1000)] = 0
    """0: every race's search scores `iterations` plans. Otherwise each race row's search opponent
    scores its own fixed count, drawn log-uniformly from min_iterations to iterations (seeded by the
    run's seed and the row), so the policy meets searches of several strengths rather than learning
    one setting's habits; the search teacher keeps `iterations`."""
    workers: Annotated[int, Field(ge=1, le=64)] = 1
    """Worker processes the search's decisions are spread over (one CPU core each; never more
    than the machine's cores)."""

    @model_validator(mode="after")
    def _spread_is_a_range(self) -> SearchOpponentConfig:
        if self.min_iterations > self.iterations:
            raise PydanticCustomError(
                "search_spread_reversed",
                "search_opponent.min_iterations ({low}) cannot exceed search_opponent.iterations ({high})",
                {"low": self.min_iterations, "high": self.iterations},
            )
        return self


class LookaheadConfig(_Config):
    """The lookahead teacher (teacher builtin:lookahead, services/trainer/lookahead.py): every
    action of each of the student's pods played in a copy of the race, then the student's own most
    likely actions for `horizon` turns; the actions' values become soft labels."""

    horizon: Annotated[int, Field(ge=1, le=200)] = 20
    """Turns each copy is played. Against the shipped policy, 20 turns without the critic won 32/32
    races and changed 3% of its moves, 6 turns with the critic 28/32 changing 10.5% (docs/trainer.md,
    "Expert iteration by lookahead, measured"): over a few turns the critic's noise rivals the
    actions' effect."""
    temperature: Annotated[float, Field(ge=0, le=10)] = 0.01
    """The labels are the policy's distribution reweighted by exp(value / temperature), the value in
    reward units (a race's lead is 0..1); 0: the best action only. With the shipped policy the
    expert changes 3.0% of its moves at 0.01 and 6.8% at 0.002, and wins as often: at 0.002 the
    student's entropy rose and its races slowed (docs/trainer.md, "Expert iteration by lookahead,
    measured")."""
    soft_labels: bool = False
    """Train on that distribution itself; false: on its most likely action. Soft labels carry the
    policy's own spread into the student, and over rounds of expert iteration its entropy grew
    (docs/trainer.md, "Expert iteration by lookahead, measured")."""
    refresh_iterations: Annotated[int, Field(ge=0, le=10**6)] = 0
    """Rollouts after which the policy improved upon becomes the student again; 0: the student as
    the imitate stage found it, for the whole stage (a new `--imitate` round takes a new one)."""
    bootstrap: bool = False
    """Add the critic's value where a copy still races after `horizon` turns."""


EVALUATION_OPPONENTS = ("builtin:runner", "builtin:blocker", "builtin:search")
"""Who an evaluation races, in the order it plays and shows them (services.trainer.reference_eval;
a test keeps them equal)."""


class TrainingEvaluationConfig(_Config):
    """The trainer service's evaluation table: every few chunks, the checkpoint's exported bot races
    the built-in runner, blocker and search bots in the reference engine (docs/trainer.md,
    "Evaluation"). The bounds keep one evaluation within minutes: it runs inside a chunk."""

    every_chunks: Annotated[int, Field(ge=0, le=10_000)] = 5
    """Evaluate after every N-th chunk of the run (and after its last one, when the budget is spent);
    0: never. A chunk trains ARENA_TRAINING_CHUNK_SECONDS (2 minutes by default)."""
    races: Annotated[int, Field(ge=0, le=200)] = 20
    """Races against builtin:runner, and as many against builtin:blocker (0: neither)."""
    search_races: Annotated[int, Field(ge=0, le=50)] = 6
    """Races against builtin:search (0: none): the strongest built-in, and the slowest to race."""
    search_iterations: Annotated[int, Field(ge=1, le=1000)] = 60
    """Plans builtin:search scores per decision instead of a clock budget (deterministic): about
    what 10 ms buy on one free CPU core (docs/trainer.md, "Evaluation")."""


class TrainingConfig(_Config):
    """Everything a training run is configured with (the trainer's Args). In a request every field
    is optional: what is left out takes its default."""

    seed: Annotated[int, Field(ge=0, le=2**31 - 1)] = 1
    """Seeds torch and the races."""
    device: Annotated[str, Field(pattern=DEVICE_PATTERN)] = "auto"
    """auto (CUDA when the machine has it, else its CPU), cpu, cuda or cuda:N."""
    total_steps: Annotated[int, Field(ge=1, le=MAX_TOTAL_STEPS)] = 10_000_000
    """Budget in environment steps (race turns of all races); the learning rate anneals over it."""
    time_budget_s: Annotated[float | None, Field(gt=0, le=MAX_SECONDS)] = None
    """Budget in seconds of training (over all chunks and resumes); null: steps only."""
    num_envs: Annotated[int, Field(ge=1, le=16_384)] = 256
    """Races played at once."""
    num_steps: Annotated[int, Field(ge=1, le=4096)] = 128
    """Turns per race per rollout: each iteration learns from num_envs x num_steps x 2 pods."""
    learning_rate: LearningRate = 3e-4
    """PPO's learning rate (Adam's step size) at the start of the run."""
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 at `total_steps`."""
    gamma: Annotated[float, Field(ge=0, le=1)] = 0.995
    """Discount per turn: a race lasts about 200-250 turns, and the win at its end must reach its start."""
    gae_lambda: Annotated[float, Field(ge=0, le=1)] = 0.95
    """GAE's lambda: how far advantages look ahead before trusting the critic."""
    num_minibatches: Annotated[int, Field(ge=1, le=4096)] = 8
    """Minibatches each update epoch splits the rollout into."""
    update_epochs: Annotated[int, Field(ge=1, le=100)] = 4
    """Passes over the rollout per iteration."""
    norm_adv: bool = True
    """Normalise advantages per minibatch."""
    clip_coef: Annotated[float, Field(gt=0, le=10)] = 0.2
    """Policy ratio clip (and value clip when `clip_vloss`)."""
    clip_vloss: bool = True
    """Clip the value loss around the rollout's values, as the policy ratio is clipped."""
    ent_coef: EntropyCoefficient = 0.003
    """Weight of the entropy bonus in the policy loss."""
    vf_coef: Annotated[float, Field(ge=0, le=100)] = 0.5
    """Weight of the value loss."""
    max_grad_norm: Annotated[float, Field(gt=0, le=1000)] = 0.5
    """Clipped separately for the actor and the critic, so value errors never shrink policy steps."""
    target_kl: Annotated[float | None, Field(gt=0, le=100)] = None
    """Stop an iteration's epochs early beyond this approximate KL (null: never)."""
    action_set: Annotated[str, Field(pattern=ACTION_SET_PATTERN)] = "r5t3"
    """The discrete actions per pod (services.trainer.actions.ACTION_SETS)."""
    teacher: Annotated[str | None, Field(pattern=TEACHER_PATTERN)] = None
    """Who the imitate stage copies: builtin:runner or builtin:blocker; for expert iteration
    builtin:search seeded with the student's own policy (with search_opponent's iterations and
    workers) or builtin:lookahead (batched on the training device, with `lookahead`); the command
    line also takes a checkpoint file; null: no imitation."""
    imitation_buffer: Annotated[int, Field(ge=1, le=50_000_000)] = 2_000_000
    """Labelled pod-states DAgger keeps (the oldest leave first)."""
    imitation_lr: Annotated[float, Field(gt=0, le=1)] = 3e-3
    """DAgger's learning rate (constant): supervised steps take larger ones than PPO's."""
    imitation_updates: Annotated[int, Field(ge=1, le=100_000)] = 64
    """DAgger's gradient steps per iteration, each on `imitation_minibatch` states of the aggregate."""
    imitation_minibatch: Annotated[int, Field(ge=1, le=1_000_000)] = 4096
    """Labelled states per DAgger step (and rollout states per step of the critic's warm-up)."""
    imitation_coef: Annotated[float, Field(ge=0, le=1000)] = 1.0
    """Weight of the cross-entropy to the teacher's action in PPO right after the imitate stage."""
    imitation_decay_steps: Annotated[int, Field(ge=1, le=MAX_TOTAL_STEPS)] = 20_000_000
    """Steps after the imitate stage over which that weight decays linearly to 0."""
    critic_warmup_steps: Annotated[int, Field(ge=0, le=MAX_TOTAL_STEPS)] = 500_000
    """Steps after the imitate stage without policy gradient (the critic and the teacher term only):
    the actor waits for advantages from a critic fitted to it."""
    shape: NetShapeConfig = Field(default_factory=NetShapeConfig)
    """Layer widths of the policy and critic networks."""
    rewards: RewardWeightsConfig = Field(default_factory=RewardWeightsConfig)
    """Weights of the reward terms."""
    curriculum: CurriculumConfig = Field(default_factory=CurriculumConfig)
    """When the run moves to its next stage."""
    stage: TrainingStage = TrainingStage.SOLO
    """The stage the run starts in (later changes move the run to that stage); imitate needs a teacher."""
    league_capacity: Annotated[int, Field(ge=1, le=1000)] = 20
    """Frozen policies the league holds; when it is full, the oldest outside the protected top leaves."""
    league_protected: Annotated[int, Field(ge=0, le=1000)] = 5
    """The league's top entries by rating (mu - 3 sigma) that never leave it."""
    league_snapshot_every: Annotated[int, Field(ge=1, le=10**6)] = 10
    """Iterations between two snapshots of the learner joining the league (self-play and league)."""
    league_opponents: Annotated[int, Field(ge=0, le=32)] = 4
    """League members drawn per iteration to play the league's share of races."""
    search_opponent: SearchOpponentConfig = Field(default_factory=SearchOpponentConfig)
    """builtin:search in the self_play and league stages' mix (none by default)."""
    lookahead: LookaheadConfig = Field(default_factory=LookaheadConfig)
    """The lookahead teacher's settings (teacher builtin:lookahead)."""
    evaluation: TrainingEvaluationConfig = Field(default_factory=TrainingEvaluationConfig)
    """The trainer service's evaluation of exported checkpoints against the built-ins (the run
    page's table; the training loop itself ignores it)."""

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

    @model_validator(mode="after")
    def _search_races_fit(self) -> TrainingConfig:
        if self.search_opponent.races > self.num_envs:
            raise PydanticCustomError(
                "search_races_exceed_races",
                "search_opponent.races ({search}) cannot exceed num_envs ({races})",
                {"search": self.search_opponent.races, "races": self.num_envs},
            )
        return self

    def resolved(self) -> dict[str, Any]:
        """Every field, defaults filled in, as JSON values: what a run stores and the worker reads."""
        return self.model_dump(mode="json")


RESUME_FIELDS = (
    "num_envs",
    "num_steps",
    "num_minibatches",
    "update_epochs",
    "imitation_lr",
    "imitation_updates",
    "imitation_minibatch",
    "imitation_coef",
    "imitation_decay_steps",
    "search_opponent",
    "lookahead",
)
"""What may change, besides `MUTABLE_FIELDS`, when a run resumes from a checkpoint (its races
restart anyway): a run trained on a CPU with a thousand races can go on on a GPU with tens of
thousands, and one that goes on by imitating a new teacher sets how."""


class ConfigChange(_Config):
    """A change to a training run's config while it trains: applied at the worker's next iteration
    boundary (never inside an iteration). Only the fields sent change; `rewards` changes only the
    weights it names."""

    learning_rate: LearningRate | None = None
    """The new learning rate (it still anneals when `anneal_lr`)."""
    ent_coef: EntropyCoefficient | None = None
    """The new weight of the entropy bonus."""
    rewards: RewardWeightsConfig | None = None
    """The reward weights to change (the others stay)."""
    stage: TrainingStage | None = None
    """Move the run to this stage."""

    @model_validator(mode="before")
    @classmethod
    def _only_what_may_change(cls, data: Any) -> Any:
        if isinstance(data, dict):
            fixed = sorted(str(key) for key in data if key not in cls.model_fields)
            if fixed:
                raise PydanticCustomError(
                    "immutable_field",
                    "{fields} cannot change while a run trains: only "
                    + _listed(tuple(cls.model_fields), "and")
                    + " can (anything else needs a new run)",
                    {"fields": ", ".join(fixed)},
                )
        return data

    @model_validator(mode="after")
    def _something(self) -> ConfigChange:
        if not self.changes():
            raise PydanticCustomError(
                "empty_change", "nothing to change: send " + _listed(tuple(type(self).model_fields), "or")
            )
        return self

    def changes(self) -> dict[str, Any]:
        """What was sent, without nulls (null: leave as is), as JSON values."""
        data = self.model_dump(mode="json", exclude_unset=True, exclude_none=True)
        if not data.get("rewards", True):
            del data["rewards"]
        return data


MUTABLE_FIELDS = tuple(ConfigChange.model_fields)
"""What may change while a run trains (applied at the next iteration boundary): `ConfigChange`'s
fields."""


def _listed(names: tuple[str, ...], conjunction: str) -> str:
    """The names as one phrase: "a, b and c" (or "a, b or c")."""
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"
