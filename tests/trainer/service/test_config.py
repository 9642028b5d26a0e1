"""The API's mirror of the trainer's Args stays the same as Args (names, nesting, defaults, stages,
what may change), and config changes merge and clear as docs/trainer-service.md says."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from services.trainer import ppo
from services.trainer.curriculum import CurriculumArgs, Stage
from services.trainer.policy import NetShape
from services.trainer.reference_eval import EvaluationArgs
from services.trainer.rewards import RewardWeights
from shared.config import Settings
from shared.states import TrainingStage
from shared.training import changes
from shared.training.config import (
    MUTABLE_FIELDS,
    CurriculumConfig,
    NetShapeConfig,
    RewardWeightsConfig,
    TrainingConfig,
    TrainingEvaluationConfig,
)


def _flat(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


def test_the_config_models_mirror_args_field_for_field() -> None:
    pairs = [
        (ppo.Args, TrainingConfig),
        (NetShape, NetShapeConfig),
        (RewardWeights, RewardWeightsConfig),
        (CurriculumArgs, CurriculumConfig),
        (EvaluationArgs, TrainingEvaluationConfig),
    ]
    for dataclass, model in pairs:
        assert [f.name for f in dataclasses.fields(dataclass)] == list(model.model_fields), dataclass.__name__
    ours, theirs = _flat(TrainingConfig().resolved()), _flat(ppo.args_to_dict(ppo.Args()))
    differ = {key: (ours[key], theirs[key]) for key in ours if ours[key] != theirs[key]}
    assert not differ, f"defaults differ from Args ((ours, Args)): update shared/training/config.py: {differ}"
    assert [s.value for s in Stage] == [s.value for s in TrainingStage]
    assert MUTABLE_FIELDS == ppo.MUTABLE_FIELDS


def test_the_patterns_name_the_trainers_action_sets_and_teachers() -> None:
    """The API validates action sets and teachers by pattern (it does not import the trainer)."""
    from services.trainer.actions import ACTION_SETS
    from services.trainer.imitation import BUILTIN_TEACHERS
    from shared.training.config import ACTION_SET_PATTERN, TEACHER_PATTERN

    assert f"^({'|'.join(ACTION_SETS)})$" == ACTION_SET_PATTERN
    assert (
        "^builtin:(" + "|".join(t.removeprefix("builtin:") for t in BUILTIN_TEACHERS) + ")$"
        == TEACHER_PATTERN
    )
    with pytest.raises(ValidationError, match="needs a teacher"):
        TrainingConfig.model_validate({"stage": "imitate"})
    with pytest.raises(ValidationError, match="teacher"):
        TrainingConfig.model_validate({"teacher": "/etc/passwd"})
    config = TrainingConfig.model_validate({"stage": "imitate", "teacher": "builtin:blocker"})
    assert ppo.args_from_dict(config.resolved()).teacher == "builtin:blocker"


def test_the_api_knows_the_evaluations_opponents_in_the_order_they_are_played() -> None:
    from services.trainer.reference_eval import opponents
    from shared.training.config import EVALUATION_OPPONENTS

    assert tuple(name for name, _ in opponents(EvaluationArgs())) == EVALUATION_OPPONENTS


def test_a_resolved_config_builds_the_same_args() -> None:
    config = TrainingConfig.model_validate(
        {"num_envs": 32, "rewards": {"win": 5}, "stage": "runner", "target_kl": 0.02, "shape": {"hidden": 32}}
    )
    args = ppo.args_from_dict(config.resolved())
    assert args.num_envs == 32 and args.rewards.win == 5 and args.rewards.lead == RewardWeights().lead
    assert args.stage == Stage.RUNNER and args.shape.hidden == 32 and args.target_kl == 0.02
    assert ppo.args_to_dict(args) == config.resolved()


def test_changes_merge_and_only_what_was_applied_is_cleared() -> None:
    pending = changes.merge({}, {"learning_rate": 0.001, "rewards": {"win": 5.0}})
    pending = changes.merge(pending, {"rewards": {"lead": 0.5}, "ent_coef": 0.01})
    assert pending == {"learning_rate": 0.001, "rewards": {"win": 5.0, "lead": 0.5}, "ent_coef": 0.01}

    applied = {"learning_rate": 0.001, "rewards": {"win": 5.0}}
    assert changes.not_applied(pending, applied) == {"rewards": {"lead": 0.5}, "ent_coef": 0.01}
    newer = changes.merge(pending, {"learning_rate": 0.002})
    assert changes.not_applied(newer, pending) == {"learning_rate": 0.002}, "a newer value survives"
    assert changes.not_applied(pending, pending) == {}


def test_a_chunk_must_leave_room_within_its_soft_time_limit(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="training_chunk_seconds"):
        Settings(dev_mode=True, training_chunk_seconds=301, job_chunk_soft_time_limit_s=600)
    assert Settings(dev_mode=True, training_chunk_seconds=300).training_chunk_seconds == 300
    assert Settings(dev_mode=True, data_dir=tmp_path).training_checkpoints_path() == tmp_path / "training"
    chosen = Settings(dev_mode=True, training_checkpoint_dir=tmp_path / "ckpt")
    assert chosen.training_checkpoints_path() == tmp_path / "ckpt"
