"""What a service writes to run a kind of long job: a route (kind, chunk task, queue) and a handler."""

from __future__ import annotations

import threading
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlalchemy.orm import Session

from shared.db.models import Job


@dataclass(frozen=True, slots=True)
class JobRoute:
    """A kind of job and the task that runs its chunks, on which queue.

    Defined in shared/ next to the domain function that creates such jobs, so the creator (the
    gateway) and the reaper can send chunks by name without importing the service."""

    kind: str
    task_name: str
    queue: str


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """What a chunk hands back: the state the next chunk starts from, and whether the job is done."""

    checkpoint: dict[str, Any]
    """Small (JSON, stored on the job row); large state goes to files that this points to."""
    progress: dict[str, Any]
    finished: bool = False
    output: Any = None
    """Anything the handler's `record` needs to write the chunk's own results."""


@dataclass(frozen=True, slots=True)
class ChunkWork:
    """One claimed chunk, as its handler sees it."""

    job_id: uuid.UUID
    kind: str
    chunk: int
    attempt: int
    """1 for the chunk's first claim; more after a crash or a handler error."""
    config: dict[str, Any]
    checkpoint: dict[str, Any]
    progress: dict[str, Any]
    stop_event: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    """Set by the heartbeat while a stop is asked: a handler may end the chunk early (what it
    returns is still committed), or wait on it instead of sleeping."""
    lost_event: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    """Set by the heartbeat when the lease is gone (reaped, taken over): whatever this chunk
    returns is discarded, so a handler may give up early."""

    @property
    def stop_requested(self) -> bool:
        return self.stop_event.is_set()

    @property
    def lease_lost(self) -> bool:
        return self.lost_event.is_set()


class PermanentJobError(Exception):
    """Raised by a handler when running the chunk again cannot help (the job asks for a device this
    worker does not have, its config cannot work): the job fails at once, with this message as its
    error, instead of being retried until its attempts run out. Resuming it tries again."""


class JobHandler(ABC):
    """Runs the chunks of one kind of job. Must be deterministic enough to be run again.

    A chunk may be started more than once (its worker died, or its handler raised), but it is
    committed once: `record` and the new checkpoint are written in one transaction, only while
    the chunk's lease is still held."""

    kind: ClassVar[str]

    @abstractmethod
    def run_chunk(self, work: ChunkWork) -> ChunkResult:
        """The chunk's work, from `work.checkpoint`. No transaction is open meanwhile. Must end well
        within the chunk task's soft time limit (minutes, not hours)."""

    def record(self, session: Session, work: ChunkWork, result: ChunkResult) -> None:  # noqa: ARG002 (default of a hook)
        """The chunk's own writes, in the open transaction that commits its checkpoint."""
        return None

    def on_finished(self, session: Session, job: Job) -> None:  # noqa: ARG002 (default of a hook)
        """Runs once, in the transaction that marks the job finished."""
        return None
