"""The owned-run layer written once: a run is its owner's (and admins'), created under a quota,
listed, shown, stopped and resumed the same way whatever trains or evolves underneath.

A kind hands its domain functions (shared.training, shared.evolution), its quota and its views to
an `OwnedRuns`; its own create body, config changes and read endpoints stay in its package."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel
from sqlalchemy.orm import Session

from services.gateway.pagination import Page, PageParams
from shared import quotas
from shared.config import Settings
from shared.db.models import Job, User
from shared.states import JobStatus


class OwnedRun(Protocol):
    """What every kind's run row has: an owner, a name, a bot, and its long job (shared.jobs)."""

    @property
    def id(self) -> uuid.UUID: ...

    @property
    def name(self) -> str: ...

    @property
    def game(self) -> str: ...

    @property
    def owner_id(self) -> uuid.UUID: ...

    @property
    def bot_id(self) -> uuid.UUID | None: ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def updated_at(self) -> datetime: ...

    @property
    def job(self) -> Job: ...


RunT = TypeVar("RunT", bound=OwnedRun)
OutT = TypeVar("OutT", bound=BaseModel)
DetailT = TypeVar("DetailT", bound=BaseModel)


def owned_fields(run: OwnedRun) -> dict[str, Any]:
    """The fields every kind's run view starts with; its status and times are its job's."""
    job = run.job
    return {
        "id": run.id,
        "name": run.name,
        "game": run.game,
        "owner_id": run.owner_id,
        "status": job.status,
        "error": job.error,
        "bot_id": run.bot_id,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }


def _may_resume(session: Session, settings: Settings, run: Any) -> None:
    """Most kinds need nothing beyond the quota to resume."""


@dataclass(frozen=True, slots=True)
class OwnedRuns(Generic[RunT, OutT, DetailT]):
    """One kind of owned run: how to find, list, stop and resume its rows, and how to show them."""

    quota: quotas.RunKind
    get_run: Callable[[Session, User, uuid.UUID], RunT]
    """The run if the actor owns it or is an admin; the kind's not-found error (a 404) otherwise."""
    list_runs: Callable[[Session, User, JobStatus | None, int, int], tuple[list[RunT], int]]
    stop_run: Callable[[Session, RunT], JobStatus]
    resume_run: Callable[[Session, RunT], JobStatus]
    run_view: Callable[[Session, RunT], OutT]
    run_detail: Callable[[Session, RunT], DetailT]
    may_resume: Callable[[Session, Settings, RunT], None] = _may_resume
    """What the kind checks beyond the quota before a run goes again (raises to refuse)."""

    def create(self, session: Session, settings: Settings, user: User, make: Callable[[], RunT]) -> DetailT:
        """Make a run with `make` once the quota allows one more, and show it as its owner sees it."""
        quotas.check_new_run(session, settings, user, self.quota)
        run = make()
        return self.run_detail(session, self.get_run(session, user, run.id))

    def page(self, session: Session, user: User, page: PageParams, status: JobStatus | None) -> Page[OutT]:
        rows, total = self.list_runs(session, user, status, page.limit, page.offset)
        return Page(
            items=[self.run_view(session, run) for run in rows],
            total=total,
            limit=page.limit,
            offset=page.offset,
        )

    def detail(self, session: Session, user: User, run_id: uuid.UUID) -> DetailT:
        return self.run_detail(session, self.get_run(session, user, run_id))

    def stop(self, session: Session, user: User, run_id: uuid.UUID) -> DetailT:
        run = self.get_run(session, user, run_id)
        self.stop_run(session, run)
        return self.run_detail(session, run)

    def resume(self, session: Session, settings: Settings, user: User, run_id: uuid.UUID) -> DetailT:
        """The quota applies to a run at rest that goes again; a resume that calls off a stop passes."""
        run = self.get_run(session, user, run_id)
        quotas.check_resume(session, settings, user, self.quota, run.job.status)
        self.may_resume(session, settings, run)
        self.resume_run(session, run)
        return self.run_detail(session, run)
