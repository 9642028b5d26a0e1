"""Matches API: challenges, listings with results, replays."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response, status

from services.gateway.deps import CurrentUser, DbSession, MaybeUser, SettingsDep
from services.gateway.matches import service
from services.gateway.matches.schemas import MatchCreate, MatchOut
from services.gateway.openapi import (
    INVALID_PARAMS,
    JSON_BODY,
    KEY_OPTIONAL,
    KEY_REQUIRED,
    OPTIONAL_KEY_EXTRA,
    error,
    not_found,
    responses,
)
from services.gateway.pagination import Page, Pagination
from shared.states import MatchKind, MatchStatus

router = APIRouter(prefix="/matches", tags=["matches"])


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=MatchOut,
    summary="Challenge: play bots against each other now",
    responses=responses(
        {
            400: error(
                "The game cannot be played as asked: unknown game, wrong number of bots, a bot "
                "twice, or a bot of another game."
            ),
        },
        KEY_REQUIRED,
        {
            403: error("A rated challenge asked by a non-admin, or none of the bots is yours."),
            404: error("One of the bots does not exist."),
            409: error("One of the bots is not active (inactive or suspended)."),
        },
        JSON_BODY,
        {422: error("The config is not valid for the game.")},
        {
            429: error(
                "Over the per-user challenge limit.",
                {"Retry-After": "seconds until the limit's window ends"},
            ),
            503: error(
                "The match queue or the rate limiter is unreachable; try again later.",
                {"Retry-After": "seconds after which trying again is worth it"},
            ),
        },
    ),
)
def create_challenge(
    body: MatchCreate, user: CurrentUser, session: DbSession, settings: SettingsDep
) -> MatchOut:
    """Challenge: play the given bots against each other now. You must own at least one of them.
    Challenges are unrated (only admins may ask for a rated one) and limited per user
    (ARENA_CHALLENGE_RATE_LIMIT per ARENA_CHALLENGE_RATE_WINDOW_S; over it: 429 with Retry-After)."""
    match = service.create_challenge(
        session, settings, user, body.game, body.bot_ids, body.seed, body.config, body.rated
    )
    return service.match_views(session, [service.get_match(session, match.id, user)], user)[0]


@router.get(
    "",
    response_model=Page[MatchOut],
    summary="List matches",
    responses=responses(KEY_OPTIONAL, INVALID_PARAMS),
    openapi_extra=OPTIONAL_KEY_EXTRA,
)
def list_matches(
    session: DbSession,
    viewer: MaybeUser,
    page: Pagination,
    game: Annotated[str | None, Query(max_length=32)] = None,
    bot_id: uuid.UUID | None = None,
    status: MatchStatus | None = None,
    kind: MatchKind | None = None,
) -> dict[str, Any]:
    """Matches, newest first. No key needed; bot owners also see their bots' error samples, and an
    evolution run's owner (and admins) its evaluation matches, which no one else sees.
    `total` counts up to 10,000 matches; past that it says 10,000 and `total_exact` is false."""
    found = service.list_matches(session, game, bot_id, status, kind, page.limit, page.offset, viewer=viewer)
    # Plain dicts: validated once against the response model, never built as models first.
    return {
        "items": service.match_dicts(session, found.matches, viewer),
        "total": found.total,
        "total_exact": found.exact,
        "limit": page.limit,
        "offset": page.offset,
    }


@router.get(
    "/{match_id}",
    response_model=MatchOut,
    summary="Show a match with its results",
    responses=responses(
        KEY_OPTIONAL,
        not_found("No match has this id, or it is an evolution run's evaluation match and not yours."),
        INVALID_PARAMS,
    ),
    openapi_extra=OPTIONAL_KEY_EXTRA,
)
def get_match(match_id: uuid.UUID, session: DbSession, viewer: MaybeUser) -> MatchOut:
    """One match with its results: ranks, scores, metrics, rating changes, errors, latency. An
    evolution run's evaluation match is its owner's and admins' only: 404 for anyone else."""
    return service.match_views(session, [service.get_match(session, match_id, viewer)], viewer)[0]


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header takes gzip (named, or `*`, with a q-value above 0)."""
    for item in accept_encoding.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        quality = params.strip().lower()
        if quality.startswith("q="):
            try:
                return float(quality[2:]) > 0
            except ValueError:
                return False
        return True
    return False


@router.get(
    "/{match_id}/replay",
    summary="Download a match's replay",
    responses={
        200: {"content": {"application/json": {}, "application/gzip": {}}},
        **responses(
            KEY_OPTIONAL,
            not_found(
                "No match has this id (or none you may see: an evolution run's evaluation match is "
                "its owner's and admins' only), or the match has no replay "
                "(not played yet, or it failed before one was stored)."
            ),
            {410: error("The replay was stored, but its replay storage no longer holds it.")},
            INVALID_PARAMS,
            {
                503: error(
                    "Replay storage is unreachable (or not configured here); try again later.",
                    {"Retry-After": "seconds after which trying again is worth it"},
                )
            },
        ),
    },
    openapi_extra=OPTIONAL_KEY_EXTRA,
)
def get_replay(
    match_id: uuid.UUID,
    session: DbSession,
    request: Request,
    settings: SettingsDep,
    viewer: MaybeUser,
    compressed: Annotated[bool, Query(description="1: the stored gzip bytes instead of JSON")] = False,
) -> Response:
    """The match's replay: seed, config, every player's raw actions, frames, events and result.
    JSON, sent as the stored gzip bytes with `Content-Encoding: gzip` to clients that accept gzip
    (browsers do, and inflate it themselves): about a quarter of the bytes, and no work here."""
    blob = service.replay_blob(session, match_id, settings, viewer)
    if compressed:
        return Response(
            blob,
            media_type="application/gzip",
            headers={"Content-Disposition": f'attachment; filename="replay-{match_id}.json.gz"'},
        )
    if accepts_gzip(request.headers.get("accept-encoding", "")):
        return Response(
            blob,
            media_type="application/json",
            headers={"Content-Encoding": "gzip", "Vary": "Accept-Encoding"},
        )
    return Response(
        service.replay_json_bytes(blob), media_type="application/json", headers={"Vary": "Accept-Encoding"}
    )
