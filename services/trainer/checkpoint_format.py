"""What a training checkpoint file holds and how it is read: its format number, the run's
arguments as JSON values and back, and the loader that refuses anything else. Apart from the
training loop (`ppo.py`) so that whoever only reads checkpoints (the export) does not import it."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

import torch
from pydantic import BaseModel

from shared.training.config import TrainingConfig

CHECKPOINT_FORMAT = 2
"""2: categorical action head (1, the Gaussian head, cannot be loaded into it)."""


def args_to_dict(args: TrainingConfig) -> dict[str, Any]:
    """Every field as JSON values: what a checkpoint keeps and the run's row shows."""
    return args.model_dump(mode="json")


def args_from_dict(data: Mapping[str, Any]) -> TrainingConfig:
    """The run's arguments from a dict (a checkpoint's, a run's stored config, the command line's);
    missing keys take their defaults, an unknown one is a TypeError.

    Only names and nesting are checked, not the bounds: they are what the API lets a request ask of
    the service's workers, while a run trained here may race more (131,072 races on one GPU,
    docs/trainer.md) and imitate a checkpoint file."""
    return _built(TrainingConfig, data)


ModelT = TypeVar("ModelT", bound=BaseModel)


def _built(model: type[ModelT], data: Mapping[str, Any]) -> ModelT:
    """`model` from `data` without validation, its nested models and enums built from their values."""
    unknown = sorted(set(data) - set(model.model_fields))
    if unknown:
        raise TypeError(f"{model.__name__} has no field {', '.join(unknown)}")
    values = dict(data)
    for name, value in data.items():
        kind = model.model_fields[name].annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel) and isinstance(value, Mapping):
            values[name] = _built(kind, value)
        elif isinstance(kind, type) and issubclass(kind, Enum):
            values[name] = kind(value)
    return model.model_construct(**values)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint's contents (tensors on the CPU); raises ValueError for anything else."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise ValueError(f"{path} is not a training checkpoint: {exc}") from exc
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not a training checkpoint (format {CHECKPOINT_FORMAT})")
    return state
