"""Evolution runs API: start LLM-driven evolution runs of the evolver service, follow their
generations, programs, lineage, MAP-Elites grid, LLM calls, events, spend and payoff table, stop
and resume them, and download a run as a directory archive. Only a run's owner (or an admin) sees
or changes it; anyone else gets 404."""

from __future__ import annotations

import re
import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status

from services.gateway.bounds import INT32_MAX
from services.gateway.deps import CurrentUser, DbSession, SettingsDep
from services.gateway.evolution import service
from services.gateway.evolution.schemas import (
    CALLS_PAGE_MAX,
    EVENTS_PAGE_MAX,
    EventsPage,
    EvolutionRunCreate,
    EvolutionRunDetail,
    EvolutionRunOut,
    GenerationOut,
    Grid,
    Lineage,
    LlmCallDetail,
    LlmCallOut,
    PayoffOut,
    ProgramDetail,
    ProgramOut,
    SpendOut,
)
from services.gateway.evolution.service import EVOLUTION_RUNS
from services.gateway.openapi import (
    INVALID_PARAMS,
    JSON_BODY,
    KEY_REQUIRED,
    RUN_QUOTAS,
    Responses,
    error,
    responses,
)
from services.gateway.pagination import Page, Pagination
from services.gateway.runs.views import OwnedRunRoutes
from shared import evolution
from shared.evolution.errors import ProgramNotFound
from shared.evolution.rundir import archive_name, run_archive
from shared.states import EvolutionEventKind, LlmRole, ProgramStatus

router = APIRouter(prefix="/evolution/runs", tags=["evolution"])

ROUTES = OwnedRunRoutes(
    router=router,
    runs=EVOLUTION_RUNS,
    label="evolution run",
    listed=Page[EvolutionRunOut],
    detail=EvolutionRunDetail,
)
OWNED_RUN = ROUTES.not_found
RUN_CONFIG: Responses = {
    422: error(
        "A config field is unknown or out of range (`errors` names it, e.g. "
        "`body.config.limits.max_generations`), the game is not one the evolver evolves "
        "(`body.game`), a seed program does not pass the static gate (`body.config.seeds`), the "
        "LLM endpoint is unknown or refused, or the key does not fit the LLM source (`body.api_key`: "
        "your own base URL needs your key, the platform's endpoints take none)."
    ),
    429: error(
        "The run names one of the platform's model endpoints and your allowance on them is used up; "
        "`Retry-After` says when enough of it frees up."
    ),
}
BIGINT_MAX = 2**63 - 1
PROGRAM_NAME = re.compile(r"p?([0-9]{1,12})")
ProgramName = Annotated[str, Path(max_length=24, description='"p12" (or just 12)')]


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=EvolutionRunDetail,
    summary="Start an evolution run",
    responses=responses(KEY_REQUIRED, JSON_BODY, RUN_CONFIG, RUN_QUOTAS),
)
def create_run(
    body: EvolutionRunCreate, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> EvolutionRunDetail:
    """Queue an evolution run of the evolver service. `config` takes any field of EvolutionConfig
    (the rest keep their defaults). The LLM source is the built-in operator (the default), one of
    the platform's endpoints (`config.llm.endpoint`, called with the platform's key within your
    allowance; see GET /evolution/endpoints), or your own `config.llm.base_url` with your own
    `api_key`, which is stored encrypted with the run and never returned."""
    key = body.api_key.get_secret_value() if body.api_key is not None else None
    return EVOLUTION_RUNS.create(
        session,
        settings,
        user,
        lambda: evolution.create_run(
            session, settings, user, name=body.name, game=body.game, config=body.config, api_key=key
        ),
    )


ROUTES.add_list(
    summary="List my evolution runs",
    description="Your evolution runs, newest first (every run for an admin).",
)
ROUTES.add_get(
    summary="Show an evolution run",
    description="""
    Status, generation, the best program and its fitness, spend, tokens, calls, time, why it
    ended, its bot, the root's current parameters and the config (`has_api_key` instead of a key).""",
)
ROUTES.add_stop(
    summary="Stop an evolution run",
    description="A queued run stops at once; a running one at the end of its chunk (its work is committed).",
    conflict="The run is not queued or running: there is nothing to stop.",
)
ROUTES.add_resume(
    summary="Resume an evolution run",
    description="""
    Run a stopped or failed run again from its last checkpoint, or call off a pending stop. A
    run on one of the platform's endpoints needs its owner's allowance left (429 otherwise).""",
    more={
        429: error(
            "The run is on one of the platform's model endpoints and its owner's allowance on "
            "them is used up; `Retry-After` says when enough of it frees up."
        )
    },
)


@router.get(
    "/{run_id}/generations",
    response_model=list[GenerationOut],
    summary="An evolution run's generations",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def list_generations(run_id: uuid.UUID, user: CurrentUser, session: DbSession) -> list[GenerationOut]:
    """Every generation, oldest first: when it ran, its fitness statistics (overall and per island),
    the parents the root selected and its reasoning."""
    run = evolution.get_run(session, user, run_id)
    names = evolution.seq_names(session, run)
    return [service.generation_view(row, names) for row in evolution.generations(session, run)]


@router.get(
    "/{run_id}/programs",
    response_model=Page[ProgramOut],
    summary="An evolution run's programs",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def list_programs(
    run_id: uuid.UUID,
    user: CurrentUser,
    session: DbSession,
    page: Pagination,
    generation: Annotated[int | None, Query(ge=0, le=INT32_MAX, description="only this generation")] = None,
    status: Annotated[ProgramStatus | None, Query(description="only programs in this status")] = None,
) -> Page[ProgramOut]:
    """The programs in the order they were made, without their code (see the program itself)."""
    run = evolution.get_run(session, user, run_id)
    rows, total = evolution.programs(
        session, run, generation=generation, status=status, limit=page.limit, offset=page.offset
    )
    names = evolution.seq_names(session, run)
    return Page(
        items=[service.program_view(r, names) for r in rows],
        total=total,
        limit=page.limit,
        offset=page.offset,
    )


@router.get(
    "/{run_id}/programs/{name}",
    response_model=ProgramDetail,
    summary="One program of an evolution run",
    responses=responses(
        KEY_REQUIRED,
        {404: error("No such run (or not yours), or the run has no program of this name.")},
        INVALID_PARAMS,
    ),
)
def get_program(run_id: uuid.UUID, name: ProgramName, user: CurrentUser, session: DbSession) -> ProgramDetail:
    """Its code, the diff against its parent, metrics, feedback, and its lineage (parent,
    inspirations, children)."""
    run = evolution.get_run(session, user, run_id)
    # Only ASCII digits that fit the column reach the database (no 500 for "p²" or "p" + 30 digits).
    found = PROGRAM_NAME.fullmatch(name.strip())
    if found is None or int(found.group(1)) > INT32_MAX:
        raise ProgramNotFound(run.id, name)
    return service.program_detail(session, run, evolution.program(session, run, name))


@router.get(
    "/{run_id}/lineage",
    response_model=Lineage,
    summary="An evolution run's family tree",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def get_lineage(run_id: uuid.UUID, user: CurrentUser, session: DbSession) -> Lineage:
    """Every program as a node with its generation, island, fitness, status and parent."""
    run = evolution.get_run(session, user, run_id)
    rows, _ = evolution.programs(session, run, limit=100_000)
    return service.lineage(run, rows)


@router.get(
    "/{run_id}/grid",
    response_model=Grid,
    summary="An evolution run's MAP-Elites grid",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def get_grid(run_id: uuid.UUID, user: CurrentUser, session: DbSession) -> Grid:
    """The grid of behaviour descriptors: each filled cell's elite with its fitness, and how many
    cells each island fills."""
    run = evolution.get_run(session, user, run_id)
    rows, _ = evolution.programs(session, run, status=ProgramStatus.EVALUATED, limit=100_000)
    return service.grid(run, rows)


@router.get(
    "/{run_id}/calls",
    response_model=Page[LlmCallOut],
    summary="An evolution run's LLM calls",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def list_calls(
    run_id: uuid.UUID,
    user: CurrentUser,
    session: DbSession,
    role: Annotated[LlmRole | None, Query(description="only the root's or the children's calls")] = None,
    limit: Annotated[int, Query(ge=1, le=CALLS_PAGE_MAX, description="calls per page")] = 50,
    offset: Annotated[int, Query(ge=0, le=INT32_MAX, description="calls to skip")] = 0,
) -> Page[LlmCallOut]:
    """Oldest first, with tokens, cost, latency and status, without the prompts (see one call)."""
    run = evolution.get_run(session, user, run_id)
    rows, total = evolution.llm_calls(session, run, role=role, limit=limit, offset=offset)
    return Page(items=[service.call_view(r) for r in rows], total=total, limit=limit, offset=offset)


@router.get(
    "/{run_id}/calls/{call_id}",
    response_model=LlmCallDetail,
    summary="One LLM call of an evolution run",
    responses=responses(
        KEY_REQUIRED,
        {404: error("No such run (or not yours), or the run has no LLM call with this id.")},
        INVALID_PARAMS,
    ),
)
def get_call(run_id: uuid.UUID, call_id: uuid.UUID, user: CurrentUser, session: DbSession) -> LlmCallDetail:
    """The full prompt (its messages), the answer and the tool calls."""
    run = evolution.get_run(session, user, run_id)
    return service.call_detail(evolution.llm_call(session, run, call_id))


@router.get(
    "/{run_id}/events",
    response_model=EventsPage,
    summary="An evolution run's events",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def list_events(
    run_id: uuid.UUID,
    user: CurrentUser,
    session: DbSession,
    after: Annotated[int, Query(ge=0, le=BIGINT_MAX, description="only events after this id")] = 0,
    limit: Annotated[int, Query(ge=1, le=EVENTS_PAGE_MAX, description="events per page")] = 500,
    kind: Annotated[list[EvolutionEventKind] | None, Query(description="only these kinds")] = None,
) -> EventsPage:
    """The evolution log, oldest first. Poll with `after` = `next_after` of the previous page."""
    run = evolution.get_run(session, user, run_id)
    rows = evolution.events(session, run, after=after, kinds=tuple(kind or ()), limit=limit)
    return EventsPage(
        run_id=run.id,
        items=[service.event_view(r) for r in rows],
        next_after=rows[-1].id if rows else after,
        status=run.job.status,
    )


@router.get(
    "/{run_id}/spend",
    response_model=SpendOut,
    summary="What an evolution run's LLM calls cost",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def get_spend(run_id: uuid.UUID, user: CurrentUser, session: DbSession) -> SpendOut:
    """Calls, tokens and cost per role and model, the totals and the budget."""
    return service.spend_view(session, evolution.get_run(session, user, run_id))


@router.get(
    "/{run_id}/payoff",
    response_model=PayoffOut,
    summary="An evolution run's payoff table and Nash-averaged fitness",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def get_payoff(run_id: uuid.UUID, user: CurrentUser, session: DbSession) -> PayoffOut:
    """Win rates of the evaluated programs against each opponent they met, the opponents' maximin
    mixture of the meta-game (payoff win rate - 0.5), and each program's expected win rate against
    it (its Nash fitness): opponents every program beats weigh nothing."""
    run = evolution.get_run(session, user, run_id)
    rows, _ = evolution.programs(session, run, status=ProgramStatus.EVALUATED, limit=100_000)
    return service.payoff(rows)


@router.get(
    "/{run_id}/export",
    summary="Download an evolution run as a directory archive",
    response_class=Response,
    responses={
        200: {"content": {"application/gzip": {}}, "description": "a .tar.gz of the run's directory"},
        **responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
    },
)
def export_run(run_id: uuid.UUID, user: CurrentUser, session: DbSession) -> Response:
    """The run as files (config, logs, summary, each generation's programs with code, metrics and
    lineage, the child LLM calls, the best program as a bot file) in a .tar.gz. Never any key."""
    run = evolution.get_run(session, user, run_id)
    blob = run_archive(session, run)
    return Response(
        blob,
        media_type="application/gzip",
        headers={"Content-Disposition": f'attachment; filename="{archive_name(run)}.tar.gz"'},
    )
