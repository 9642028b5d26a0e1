"""What can go wrong when training runs are created, changed or exported, without any transport:
each error carries a `message` for the person who asked; the gateway maps each class to an HTTP
status in services/gateway/errors.py."""

from __future__ import annotations

import uuid


class TrainingError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunNotFound(TrainingError):
    """No such run, or one the caller may not see (only its owner and admins may)."""

    def __init__(self, run_id: uuid.UUID) -> None:
        super().__init__(f"training run {run_id} not found")
        self.run_id = run_id


class CheckpointNotFound(TrainingError):
    def __init__(self, run_id: uuid.UUID, checkpoint_id: uuid.UUID) -> None:
        super().__init__(f"training run {run_id} has no checkpoint {checkpoint_id}")


class RunStateError(TrainingError):
    """The run's status forbids what was asked (stop a finished run, resume a running one...)."""


class NothingToExport(TrainingError):
    """No checkpoint yet, or the checkpoint's policy could not be exported as a bot."""


class NoRaceYet(TrainingError):
    """The run has no showcase race yet: none comes before its first checkpoint."""


class UntrainableGame(TrainingError):
    def __init__(self, game: str, games: tuple[str, ...]) -> None:
        super().__init__(f"the trainer cannot train {game!r} bots; it trains: {', '.join(games)}")
        self.game = game
