"""Training runs API: create runs of the trainer service, follow their metrics and checkpoints,
stop and resume them, change their config while they train, and export checkpoints as hosted bots.
Only a run's owner (or an admin) sees or changes it; anyone else gets 404."""

from __future__ import annotations

import gzip
import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response, status

from services.gateway.bots.schemas import VersionOut
from services.gateway.bots.service import bot_views, version_view
from services.gateway.bounds import INT32_MAX
from services.gateway.deps import CurrentUser, DbSession, SettingsDep
from services.gateway.matches.views import accepts_gzip
from services.gateway.openapi import (
    BOT_NAME_TAKEN,
    HOSTED_SOURCE,
    INVALID_PARAMS,
    JSON_BODY,
    KEY_REQUIRED,
    RUN_QUOTAS,
    UPLOAD_QUOTA,
    Responses,
    error,
    responses,
)
from services.gateway.pagination import Page, Pagination
from services.gateway.runs.views import OwnedRunRoutes
from services.gateway.training import service
from services.gateway.training.schemas import (
    METRICS_PAGE_MAX,
    CheckpointOut,
    ConfigChange,
    ExportOut,
    ExportRequest,
    MetricsPage,
    TrainingRunCreate,
    TrainingRunDetail,
    TrainingRunOut,
)
from services.gateway.training.service import TRAINING_RUNS
from shared import quotas, training

router = APIRouter(prefix="/training/runs", tags=["training"])

ROUTES = OwnedRunRoutes(
    router=router,
    runs=TRAINING_RUNS,
    label="training run",
    listed=Page[TrainingRunOut],
    detail=TrainingRunDetail,
)
OWNED_RUN = ROUTES.not_found
RACE_NOT_FOUND: Responses = {
    404: error(
        "No training run has this id (or it is another user's), or it has no showcase race yet: "
        "one comes with each checkpoint."
    )
}
RUN_CONFIG: Responses = {
    422: error(
        "A config field is unknown or out of range (`errors` names it, e.g. `body.config.learning_rate`), "
        "or the budget or device contradicts the config."
    )
}


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=TrainingRunDetail,
    summary="Start a training run",
    responses=responses(KEY_REQUIRED, JSON_BODY, RUN_CONFIG, RUN_QUOTAS),
)
def create_run(
    body: TrainingRunCreate, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> TrainingRunDetail:
    """Queue a PPO training run of the trainer service. `config` takes any field of the trainer's
    Args (the rest keep their defaults); `budget` says when it is done; `device` where it trains
    (a run asking for a device the worker lacks fails at once with a clear error)."""
    return TRAINING_RUNS.create(
        session,
        settings,
        user,
        lambda: training.create_run(
            session, user, name=body.name, game=body.game, config=body.resolved_config()
        ),
    )


ROUTES.add_list(
    summary="List my training runs",
    description="Your training runs, newest first (every run for an admin).",
)
ROUTES.add_get(
    summary="Show a training run",
    description="""
    Status, stage, iteration, steps, time, the latest metrics, pending config changes, the latest
    checkpoint, the league table at that checkpoint, and the evaluations of checkpoints against the
    built-in runner, blocker and search bots (newest first).""",
)


@router.get(
    "/{run_id}/race",
    summary="The latest showcase race of a training run's policy",
    responses={
        200: {"content": {"application/json": {}}},
        **responses(KEY_REQUIRED, RACE_NOT_FOUND, INVALID_PARAMS),
    },
)
def get_race(run_id: uuid.UUID, user: CurrentUser, session: DbSession, request: Request) -> Response:
    """A replay (the match replay format) of one race of the newest checkpoint's exported bot
    against the built-in runner, played by the worker at each checkpoint on a new track. Sent as
    the stored gzip bytes with `Content-Encoding: gzip` to clients that accept gzip."""
    blob = training.latest_race(session, training.get_run(session, user, run_id))
    if accepts_gzip(request.headers.get("accept-encoding", "")):
        return Response(
            blob,
            media_type="application/json",
            headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"},
        )
    return Response(gzip.decompress(blob), media_type="application/json", headers={"Vary": "Accept-Encoding"})


@router.get(
    "/{run_id}/metrics",
    response_model=MetricsPage,
    summary="A training run's metrics, iteration by iteration",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def get_metrics(
    run_id: uuid.UUID,
    user: CurrentUser,
    session: DbSession,
    after: Annotated[int, Query(ge=0, le=INT32_MAX, description="only iterations after this one")] = 0,
    limit: Annotated[int, Query(ge=1, le=METRICS_PAGE_MAX, description="iterations per page")] = 500,
) -> MetricsPage:
    """The metrics time series, oldest first: poll with `after` = the last iteration you have."""
    run = training.get_run(session, user, run_id)
    rows = training.metrics(session, run, after, limit)
    return MetricsPage(
        run_id=run.id,
        items=[service.metric_view(row) for row in rows],
        next_after=rows[-1].iteration if len(rows) == limit else None,
    )


ROUTES.add_stop(
    summary="Stop a training run",
    description="""
    A queued run stops at once; a running one finishes its current iteration, saves a checkpoint
    and stops (status `stopping`, then `stopped`). Stopping a stopped run changes nothing.""",
    conflict="The run is finished or failed: there is nothing to stop.",
)
ROUTES.add_resume(
    summary="Resume a training run",
    description="""
    Train a stopped or failed run again from its last checkpoint, or call off a stop that has not
    taken effect yet.""",
)


@router.patch(
    "/{run_id}/config",
    response_model=TrainingRunDetail,
    summary="Change a training run's config while it trains",
    responses=responses(
        KEY_REQUIRED,
        OWNED_RUN,
        JSON_BODY,
        {
            409: error(
                "The run is finished (nothing trains any more), or the change asks for the imitate "
                "stage and the run has no teacher."
            ),
            422: error(
                "A field that cannot change while a run trains (only learning_rate, ent_coef, rewards "
                "and stage can), or a value out of range."
            ),
        },
    ),
)
def change_config(
    run_id: uuid.UUID, body: ConfigChange, user: CurrentUser, session: DbSession
) -> TrainingRunDetail:
    """Change the learning rate, the entropy coefficient, reward weights (only those named) or the
    stage. The worker applies the change at its next iteration boundary, never inside an iteration;
    the metrics of that iteration list it under `config_changes`. A stopped run gets it on resume."""
    run = training.change_config(session, user, run_id, body.changes())
    return service.run_detail(session, run)


@router.get(
    "/{run_id}/checkpoints",
    response_model=Page[CheckpointOut],
    summary="List a training run's checkpoints",
    responses=responses(KEY_REQUIRED, OWNED_RUN, INVALID_PARAMS),
)
def list_checkpoints(
    run_id: uuid.UUID, user: CurrentUser, session: DbSession, page: Pagination
) -> Page[CheckpointOut]:
    """One checkpoint per chunk, newest first, each with its metrics and whether it can be exported."""
    run = training.get_run(session, user, run_id)
    rows, total = training.checkpoints(session, run, page.limit, page.offset)
    return Page(
        items=[service.checkpoint_view(r) for r in rows], total=total, limit=page.limit, offset=page.offset
    )


@router.post(
    "/{run_id}/export",
    status_code=status.HTTP_201_CREATED,
    response_model=ExportOut,
    summary="Export a checkpoint as a hosted bot version",
    responses=responses(
        KEY_REQUIRED,
        {
            404: error("No such run (or not yours), or the run has no checkpoint with this id."),
            409: error("The run has no checkpoint yet, or the checkpoint's policy could not be exported."),
        },
        BOT_NAME_TAKEN,
        JSON_BODY,
        INVALID_PARAMS,
        HOSTED_SOURCE,
        UPLOAD_QUOTA,
    ),
)
def export_run(
    run_id: uuid.UUID,
    user: CurrentUser,
    session: DbSession,
    settings: SettingsDep,
    body: ExportRequest | None = None,
) -> ExportOut:
    """Register a checkpoint (default: the latest) as a new version of the run's hosted bot, owned
    by the run's owner; the first export creates the bot. The code passes the hosted-bot gate like
    any upload, and the new version joins the ladder."""
    request = body or ExportRequest()
    run = training.get_run(session, user, run_id)
    quotas.check_new_version(session, settings, user)
    exported = training.export_checkpoint(
        session, settings, run, checkpoint_id=request.checkpoint_id, bot_name=request.bot_name
    )
    version = version_view(exported.bot, exported.version)
    return ExportOut(
        bot=bot_views(session, [exported.bot], settings)[0],
        version=VersionOut(**version.model_dump(exclude={"source"})),
        checkpoint_id=exported.checkpoint.id,
        bot_created=exported.created,
    )
