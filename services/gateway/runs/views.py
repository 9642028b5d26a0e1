"""The routes every kind of owned run has, in its own words: list, show, stop and resume.

A kind's views module adds each to its router with one call, in the place the route takes among
its own; the summary, the description and the 409s are the kind's, while the path, the operation
name, the parameters and the 404 are the same for every kind."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic

from fastapi import APIRouter, Query
from pydantic import BaseModel

from services.gateway.deps import CurrentUser, DbSession, SettingsDep
from services.gateway.openapi import INVALID_PARAMS, KEY_REQUIRED, RUN_QUOTAS, Responses, error, responses
from services.gateway.pagination import Page, Pagination
from services.gateway.runs.service import DetailT, OwnedRuns
from shared.states import JobStatus

StatusFilter = Annotated[JobStatus | None, Query(description="only runs in this status")]


def not_found(label: str) -> Responses:
    """The 404 of a route that loads one run: another user's run is as unknown as a missing one."""
    return {
        404: error(
            f"No {label} has this id, or it belongs to another user (only its owner and admins see it).",
            example=f"{label} 0b5e4c9e-8f43-4a8e-9d1a-5a1d2f1f6f10 not found",
        )
    }


@dataclass(frozen=True, slots=True)
class OwnedRunRoutes(Generic[DetailT]):
    """Adds a kind's owned-run routes to its router; `listed` and `detail` are its response models."""

    router: APIRouter
    runs: OwnedRuns[Any, Any, DetailT]
    label: str
    """How an error names one run ("training run")."""
    listed: type[Page[Any]]
    detail: type[DetailT]

    @property
    def not_found(self) -> Responses:
        return not_found(self.label)

    def add_list(self, *, summary: str, description: str) -> None:
        runs = self.runs

        def list_runs(
            user: CurrentUser, session: DbSession, page: Pagination, status: StatusFilter = None
        ) -> Page[Any]:
            return runs.page(session, user, page, status)

        self._add("", "GET", list_runs, self.listed, summary, description, INVALID_PARAMS)

    def add_get(self, *, summary: str, description: str) -> None:
        runs = self.runs

        def get_run(run_id: uuid.UUID, user: CurrentUser, session: DbSession) -> DetailT:
            return runs.detail(session, user, run_id)

        self._add(
            "/{run_id}", "GET", get_run, self.detail, summary, description, self.not_found, INVALID_PARAMS
        )

    def add_stop(self, *, summary: str, description: str, conflict: str) -> None:
        """`conflict`: the 409's description, which says in what states there is nothing to stop."""
        runs = self.runs

        def stop_run(run_id: uuid.UUID, user: CurrentUser, session: DbSession) -> DetailT:
            return runs.stop(session, user, run_id)

        self._add(
            "/{run_id}/stop",
            "POST",
            stop_run,
            self.detail,
            summary,
            description,
            self.not_found,
            INVALID_PARAMS,
            {409: error(conflict)},
        )

    def add_resume(self, *, summary: str, description: str, more: Responses | None = None) -> None:
        """`more`: what the kind's own checks before a resume may answer, besides the quotas."""
        runs = self.runs

        def resume_run(
            run_id: uuid.UUID, user: CurrentUser, session: DbSession, settings: SettingsDep
        ) -> DetailT:
            return runs.resume(session, settings, user, run_id)

        self._add(
            "/{run_id}/resume",
            "POST",
            resume_run,
            self.detail,
            summary,
            description,
            self.not_found,
            INVALID_PARAMS,
            {409: error("The run is queued, running or finished: there is nothing to resume.")},
            RUN_QUOTAS,
            more or {},
        )

    def _add(
        self,
        path: str,
        method: str,
        endpoint: Callable[..., BaseModel],
        model: type[BaseModel],
        summary: str,
        description: str,
        *declared: Responses,
    ) -> None:
        self.router.add_api_route(
            path,
            endpoint,
            methods=[method],
            response_model=model,
            summary=summary,
            description=inspect.cleandoc(description),
            responses=responses(KEY_REQUIRED, *declared),
        )
