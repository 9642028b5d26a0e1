"""The training domain: training runs (created by the gateway, worked by the trainer worker in
chunks on the `training` queue), their config changes, metrics, checkpoints and exports. Plain
functions over a Session that raise `TrainingError`s; nothing here imports torch. See
docs/trainer-service.md.
"""

from shared.training.config import (
    DEVICE_PATTERN,
    MUTABLE_FIELDS,
    ConfigChange,
    CurriculumConfig,
    NetShapeConfig,
    RewardWeightsConfig,
    TrainingConfig,
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
    "UntrainableGame",
    "announce",
    "change_config",
    "checkpoints",
    "create_run",
    "default_bot_name",
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
