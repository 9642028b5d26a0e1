"""Owned runs written once: a row of some kind (training, evolution) that its owner and admins may
see, with a long job (shared.jobs) whose status is the run's, found, listed, stopped and resumed the
same way whatever the job's chunks do.

A kind declares an `OwnedRunKind` over its model (a `shared.db.models.OwnedRunMixin`) with its name
and its errors, and keeps only what is its own: creating a run, its config, what its chunks write.
The gateway's `services.gateway.runs` builds the API on these functions.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from shared.db.models import Job, OwnedRunMixin, User
from shared.jobs.store import JobNotFound, JobStateError, enqueue_job, resume_job, stop_job
from shared.states import JobStatus, UserRole

RunT = TypeVar("RunT", bound=OwnedRunMixin)


def may_see(actor: User, run: OwnedRunMixin) -> bool:
    return run.owner_id == actor.id or actor.role == UserRole.ADMIN


def _refresh(session: Session, run: OwnedRunMixin) -> JobStatus:
    """The job's status as committed (stop_job and resume_job write in their own sessions)."""
    session.refresh(run)
    session.refresh(run.job)
    return run.job.status


def _no_announcement(run: OwnedRunMixin, status: JobStatus) -> None:
    """Most kinds publish nothing when a run stops or resumes."""


@dataclass(frozen=True, slots=True)
class OwnedRunKind(Generic[RunT]):
    """One kind of owned run: its model, the name its messages call a run by, and its errors."""

    model: type[RunT]
    noun: str
    """How messages name a run: "training run" -> "training run <id> is finished: ..."."""
    not_found: Callable[[uuid.UUID], Exception]
    """The kind's error for a run that does not exist or that the actor may not see (a 404)."""
    state_error: Callable[[str], Exception]
    """The kind's error for a run whose status forbids what was asked (a 409), from its message."""
    finished: Callable[[RunT], str]
    """Why a finished run cannot be resumed, in the kind's words."""
    log: logging.Logger
    announce: Callable[[RunT, JobStatus], None] = _no_announcement
    """Called with the new status after a stop or a resume (training publishes it on its topic)."""

    def get_run(self, session: Session, actor: User, run_id: uuid.UUID, *, lock: bool = False) -> RunT:
        """The run if `actor` owns it or is an admin; the kind's not-found error otherwise (whether
        or not it exists). `lock` holds the run's row until the transaction ends."""
        query = select(self.model).where(self.model.id == run_id).options(selectinload(self.model.job))
        if lock:
            query = query.with_for_update(of=self.model)
        run = session.scalars(query.execution_options(populate_existing=True)).one_or_none()
        if run is None or not may_see(actor, run):
            raise self.not_found(run_id)
        return run

    def list_runs(
        self, session: Session, actor: User, status: JobStatus | None, limit: int, offset: int
    ) -> tuple[list[RunT], int]:
        """The actor's runs (every run for an admin), newest first, and how many there are."""
        query = select(self.model).join(Job, Job.id == self.model.job_id)
        if actor.role != UserRole.ADMIN:
            query = query.where(self.model.owner_id == actor.id)
        if status is not None:
            query = query.where(Job.status == status)
        total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
        rows = session.scalars(
            query.options(selectinload(self.model.job))
            .order_by(self.model.created_at.desc(), self.model.id)
            .limit(limit)
            .offset(offset)
        ).all()
        return list(rows), total

    def stop_run(self, session: Session, run: RunT) -> JobStatus:
        """Stop a queued run at once, a running one at its chunk's end (its work is committed first).
        Stopping a stopped or stopping run changes nothing."""
        try:
            status = stop_job(run.job_id)
        except JobNotFound:
            raise self.not_found(run.id) from None
        except JobStateError:
            current = _refresh(session, run)
            raise self.state_error(
                f"{self.noun} {run.id} is {current}: only a queued or running run can be stopped"
            ) from None
        _refresh(session, run)
        self.announce(run, status)
        return status

    def resume_run(self, session: Session, run: RunT) -> JobStatus:
        """Run a stopped or failed run again from its last checkpoint, or call off a pending stop."""
        current = _refresh(session, run)
        if current in (JobStatus.QUEUED, JobStatus.RUNNING):
            raise self.state_error(f"{self.noun} {run.id} is {current} already: nothing to resume")
        if current == JobStatus.FINISHED:
            raise self.state_error(self.finished(run))
        try:
            status = resume_job(run.job_id)
        except JobNotFound:
            raise self.not_found(run.id) from None
        except JobStateError:
            current = _refresh(session, run)
            raise self.state_error(f"{self.noun} {run.id} is {current}: it cannot be resumed") from None
        _refresh(session, run)
        self.announce(run, status)
        return status

    def enqueue_quietly(self, run: RunT, job: Job) -> None:
        """Send a new run's first chunk after the commit; if the broker is down the job stays queued
        and the reaper sends the chunk again later (ARENA_JOB_RESEND_AFTER_S), so the request that
        created the run still succeeds."""
        try:
            enqueue_job(job)
        except Exception as exc:
            self.log.error(
                "%s %s: could not send its chunk (the reaper will resend it): %s", self.noun, run.id, exc
            )
