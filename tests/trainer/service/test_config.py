"""The training config (shared/training/config.py, the trainer's Args): the API schema describes
every field, what the API checks names the trainer's own action sets, teachers and opponents, the
trainer builds what the API stores and the runs it trains itself past the API's bounds, and config
changes merge and clear as docs/trainer-service.md says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from services.gateway.training.schemas import TrainingRunCreate
from services.trainer import ppo
from services.trainer.curriculum import Stage
from shared.config import Settings
from shared.training import changes
from shared.training.config import (
    MUTABLE_FIELDS,
    RESUME_FIELDS,
    ConfigChange,
    NetShapeConfig,
    RewardWeightsConfig,
    TrainingConfig,
)


def _models(model: type[BaseModel]) -> list[type[BaseModel]]:
    """`model` and every config model nested in it."""
    found = [model]
    for field in model.model_fields.values():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            found += _models(kind)
    return found


@pytest.mark.parametrize("request_model", [TrainingRunCreate, ConfigChange])
def test_the_api_schema_describes_every_config_field_with_its_docstring(
    request_model: type[BaseModel],
) -> None:
    document = request_model.model_json_schema()
    schemas = document["$defs"] | {request_model.__name__: document}
    config = TrainingConfig if request_model is TrainingRunCreate else ConfigChange
    for model in _models(config):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring"
            described = schemas[model.__name__]["properties"][name].get("description")
            assert described == field.description, f"{model.__name__}.{name}"


def test_what_may_change_names_fields_of_the_config() -> None:
    assert set(MUTABLE_FIELDS) <= set(TrainingConfig.model_fields)
    assert set(RESUME_FIELDS) <= set(TrainingConfig.model_fields)
    assert not set(MUTABLE_FIELDS) & set(RESUME_FIELDS)


def test_the_patterns_name_the_trainers_action_sets_and_teachers() -> None:
    """The API validates action sets and teachers by pattern (it does not import the trainer)."""
    from services.trainer.actions import ACTION_SETS, DEFAULT_ACTION_SET
    from services.trainer.imitation import BUILTIN_TEACHERS
    from shared.training.config import ACTION_SET_PATTERN, TEACHER_PATTERN

    assert f"^({'|'.join(ACTION_SETS)})$" == ACTION_SET_PATTERN
    assert TrainingConfig().action_set == DEFAULT_ACTION_SET
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
    from shared.training.config import EVALUATION_OPPONENTS, TrainingEvaluationConfig

    assert tuple(name for name, _ in opponents(TrainingEvaluationConfig())) == EVALUATION_OPPONENTS


def test_a_resolved_config_builds_the_same_args() -> None:
    config = TrainingConfig.model_validate(
        {"num_envs": 32, "rewards": {"win": 5}, "stage": "runner", "target_kl": 0.02, "shape": {"hidden": 32}}
    )
    args = ppo.args_from_dict(config.resolved())
    assert args == config
    assert args.rewards.win == 5
    assert args.rewards.lead == RewardWeightsConfig().lead
    assert args.stage == Stage.RUNNER
    assert ppo.args_to_dict(args) == config.resolved()


def test_the_trainer_builds_its_own_runs_past_the_apis_bounds() -> None:
    """A run trained here may race more than a request may ask of the service, and imitate a
    checkpoint file; an unknown name is still refused."""
    beyond: dict[str, Any] = {"num_envs": 131_072, "teacher": "runs/first/latest.pt", "stage": "imitate"}
    with pytest.raises(ValidationError) as refused:
        TrainingConfig.model_validate(beyond)
    assert {error["loc"] for error in refused.value.errors()} == {("num_envs",), ("teacher",)}
    args = ppo.args_from_dict(beyond | {"shape": {"hidden": 32}})
    assert (args.num_envs, args.teacher, args.stage) == (131_072, "runs/first/latest.pt", Stage.IMITATE)
    assert args.shape == NetShapeConfig(hidden=32)
    with pytest.raises(TypeError, match="learning_rat"):
        ppo.args_from_dict({"learning_rat": 0.1})
    with pytest.raises(TypeError, match="widht"):
        ppo.args_from_dict({"shape": {"widht": 3}})


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
