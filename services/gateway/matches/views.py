"""Matches API: challenges, listings with results, replays."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from services.gateway.deps import CurrentUser, DbSession, MaybeUser, SettingsDep
from services.gateway.matches import service
from services.gateway.matches.schemas import MatchCreate, MatchOut
from services.gateway.pagination import Page, Pagination
from shared.states import MatchKind, MatchStatus

router = APIRouter(prefix="/matches", tags=["matches"])


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=MatchOut,
    responses={
        403: {"description": "a rated challenge asked by a non-admin, or none of the bots is yours"},
        429: {"description": "over the per-user challenge limit; see the Retry-After header"},
    },
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
    return service.match_views(session, [service.get_match(session, match.id)], user)[0]


@router.get("", response_model=Page[MatchOut])
def list_matches(
    session: DbSession,
    viewer: MaybeUser,
    page: Pagination,
    game: Annotated[str | None, Query(max_length=32)] = None,
    bot_id: uuid.UUID | None = None,
    status: MatchStatus | None = None,
    kind: MatchKind | None = None,
) -> Page[MatchOut]:
    """Matches, newest first. No key needed; bot owners also see their bots' error samples."""
    matches, total = service.list_matches(session, game, bot_id, status, kind, page.limit, page.offset)
    return Page(
        items=service.match_views(session, matches, viewer), total=total, limit=page.limit, offset=page.offset
    )


@router.get("/{match_id}", response_model=MatchOut)
def get_match(match_id: uuid.UUID, session: DbSession, viewer: MaybeUser) -> MatchOut:
    """One match with its results: ranks, scores, metrics, rating changes, errors, latency."""
    return service.match_views(session, [service.get_match(session, match_id)], viewer)[0]


@router.get(
    "/{match_id}/replay",
    responses={200: {"content": {"application/json": {}, "application/gzip": {}}}},
)
def get_replay(
    match_id: uuid.UUID,
    session: DbSession,
    compressed: Annotated[bool, Query(description="1: the stored gzip bytes instead of JSON")] = False,
) -> Response:
    """The match's replay: seed, config, every player's raw actions, frames, events and result."""
    blob = service.replay_blob(session, match_id)
    if compressed:
        return Response(
            blob,
            media_type="application/gzip",
            headers={"Content-Disposition": f'attachment; filename="replay-{match_id}.json.gz"'},
        )
    return Response(service.replay_json_bytes(blob), media_type="application/json")
