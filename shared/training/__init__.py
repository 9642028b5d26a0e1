"""The training domain: training runs (created by the gateway, worked by the trainer worker in
chunks on the `training` queue), their config changes, metrics, checkpoints and exports. Plain
functions over a Session that raise `TrainingError`s; nothing here imports torch. See
docs/trainer-service.md.

The config and the errors load with the package; the service functions (database, queue) on the
first use of one of their names, so that the trainer's command line reads the config
(`shared.training.config`, its `Args`) without a database, a queue or their settings.
"""

import importlib
from typing import TYPE_CHECKING

from shared.training.config import (
    DEVICE_PATTERN,
    MUTABLE_FIELDS,
    RESUME_FIELDS,
    ConfigChange,
    CurriculumConfig,
    NetShapeConfig,
    RewardWeightsConfig,
    TrainingConfig,
    TrainingEvaluationConfig,
)
from shared.training.errors import (
    CheckpointNotFound,
    NoRaceYet,
    NothingToExport,
    RunNotFound,
    RunStateError,
    TrainingError,
    UntrainableGame,
)

if TYPE_CHECKING:
    from shared.training.service import (
        TASK_TRAIN_CHUNK,
        TRAINABLE_GAMES,
        TRAINING,
        ExportedBot,
        announce,
        change_config,
        checkpoints,
        create_run,
        default_bot_name,
        evaluations,
        export_checkpoint,
        get_run,
        latest_checkpoint,
        latest_metrics,
        latest_race,
        list_runs,
        metrics,
        resume_run,
        stop_run,
    )

__all__ = [
    "DEVICE_PATTERN",
    "MUTABLE_FIELDS",
    "RESUME_FIELDS",
    "TASK_TRAIN_CHUNK",
    "TRAINABLE_GAMES",
    "TRAINING",
    "CheckpointNotFound",
    "ConfigChange",
    "CurriculumConfig",
    "ExportedBot",
    "NetShapeConfig",
    "NoRaceYet",
    "NothingToExport",
    "RewardWeightsConfig",
    "RunNotFound",
    "RunStateError",
    "TrainingConfig",
    "TrainingError",
    "TrainingEvaluationConfig",
    "UntrainableGame",
    "announce",
    "change_config",
    "checkpoints",
    "create_run",
    "default_bot_name",
    "evaluations",
    "export_checkpoint",
    "get_run",
    "latest_checkpoint",
    "latest_metrics",
    "latest_race",
    "list_runs",
    "metrics",
    "resume_run",
    "stop_run",
]


def __getattr__(name: str) -> object:
    """A name of the service layer (in `__all__`), imported on its first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("shared.training.service"), name)
