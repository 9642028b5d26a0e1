"""Challenges, match listings and replays. Match creation itself is shared.matches (the ladder and
the evolver use it too); the gateway adds ownership rules and turns rows into API views. Every
match read here goes through shared.matches.visible_to: an evolution run's evaluation matches are
its owner's and admins' only, and unknown (404, never listed) to everyone else."""

from __future__ import annotations

import gzip
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import RowMapping, func, select
from sqlalchemy.orm import Session

from services.gateway import rate_limit
from services.gateway.deps import is_admin
from services.gateway.errors import ApiError, not_found
from services.gateway.matches.schemas import MatchOut
from shared.config import Settings
from shared.db.models import Bot, BotVersion, Match, MatchParticipant, Replay, User
from shared.logging_throttle import LogThrottle
from shared.matches import create_match, enqueue_match, get_visible_match, visible_to
from shared.ratings import ordinal
from shared.replay_store import ReplayMissing, ReplayStoreError, load_replay
from shared.states import MatchKind, MatchStatus

log = logging.getLogger("services.gateway.matches")
_queue_down_log = LogThrottle()
"""Every challenge fails alike while the queue is down: said once a minute, with the count."""

API_PREFIX = "/api/v1"


UNRATED_CHALLENGES = (
    "challenges you start are unrated: ratings only move in ladder matches, where the platform picks "
    "the opponents, seed and config (a chosen seed, config or sparring partner could otherwise buy "
    "rating). Only admins can start rated challenges; leave 'rated' out or send false"
)


def create_challenge(
    session: Session,
    settings: Settings,
    user: User,
    game: str,
    bot_ids: list[uuid.UUID],
    seed: int | None,
    config: dict[str, Any] | None,
    rated: bool,
) -> Match:
    """Queue a match; the caller must own one of the bots (admins may pit any bots).

    For everyone but admins a challenge counts against the per-user rate limit (every attempt, so a
    flood of bad requests is limited too) and can never be rated: not against someone else's bot
    (the forced-rating attack), and not between your own bots either (a sparring bot built to lose
    would feed the other wins)."""
    if not is_admin(user):
        rate_limit.hit(
            settings.redis_url,
            "challenges",
            user.id,
            settings.challenge_rate_limit,
            settings.challenge_rate_window_s,
        )
        if rated:
            raise ApiError(403, UNRATED_CHALLENGES)
    match = create_match(
        session,
        game=game,
        bot_ids=bot_ids,
        kind=MatchKind.CHALLENGE,
        rated=rated,
        seed=seed,
        config=config,
        requested_by_id=user.id,
    )
    if not is_admin(user):
        owners = set(session.scalars(select(Bot.owner_id).where(Bot.id.in_(bot_ids))))
        if user.id not in owners:
            session.rollback()
            raise ApiError(403, "you can only challenge with at least one of your own bots in the match")
    session.commit()
    try:
        enqueue_match(match.id)
    except Exception as exc:
        kind = type(exc).__name__
        _queue_down_log.log(log, logging.ERROR, kind, "cannot queue match %s: %s", match.id, exc)
        match.status = MatchStatus.FAILED
        match.error = "the match queue was unreachable when the match was created"
        session.commit()
        raise ApiError(
            503, "the match was stored but the match queue is unreachable; try again later"
        ) from None
    return match


def get_match(session: Session, match_id: uuid.UUID, viewer: User | None) -> Match:
    """The match if `viewer` may see it; 404 otherwise, the same whether it exists or not."""
    match = get_visible_match(session, viewer, match_id)
    if match is None:
        raise not_found(f"match {match_id}")
    return match


COUNT_LIMIT = 10_000
"""A match list counts its matches up to here: an exact count reads every row that matches the
filters, and with millions of matches that would cost more than the page itself."""

MATCH_FIELDS = (
    Match.id,
    Match.game,
    Match.kind,
    Match.rated,
    Match.status,
    Match.seed,
    Match.config,
    Match.attempts,
    Match.queued_at,
    Match.started_at,
    Match.finished_at,
    Match.turns,
    Match.end_reason,
    Match.error,
)
"""What a match view shows of the match's own row."""

PARTICIPANT_FIELDS = (
    MatchParticipant.match_id,
    MatchParticipant.slot,
    MatchParticipant.bot_id,
    MatchParticipant.rank,
    MatchParticipant.score,
    MatchParticipant.metrics,
    MatchParticipant.mu_before,
    MatchParticipant.sigma_before,
    MatchParticipant.mu_after,
    MatchParticipant.sigma_after,
    MatchParticipant.errors,
    MatchParticipant.timeouts,
    MatchParticipant.forfeited,
    MatchParticipant.latency_p50_ms,
    MatchParticipant.latency_p99_ms,
    MatchParticipant.error_samples,
    Bot.name.label("bot_name"),
    Bot.owner_id,
    User.name.label("owner_name"),
    BotVersion.number.label("version"),
)
"""A participant's row with its bot's name and owner and its version's number, in one query."""


class MatchFields(Protocol):
    """A match as its view reads it: an ORM `Match` or a row of `MATCH_FIELDS`."""

    @property
    def id(self) -> uuid.UUID: ...
    @property
    def game(self) -> str: ...
    @property
    def kind(self) -> MatchKind: ...
    @property
    def rated(self) -> bool: ...
    @property
    def status(self) -> MatchStatus: ...
    @property
    def seed(self) -> int: ...
    @property
    def config(self) -> dict[str, Any] | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def queued_at(self) -> datetime: ...
    @property
    def started_at(self) -> datetime | None: ...
    @property
    def finished_at(self) -> datetime | None: ...
    @property
    def turns(self) -> int | None: ...
    @property
    def end_reason(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class MatchList:
    matches: Sequence[MatchFields]
    """The page's matches as rows of `MATCH_FIELDS` (no ORM objects: a page is read, not changed)."""
    total: int
    """How many matches the filters select, or `COUNT_LIMIT` when there are more."""
    exact: bool
    """False when `total` stopped at `COUNT_LIMIT`, or was not counted (`count=False`)."""


def list_matches(
    session: Session,
    game: str | None,
    bot_id: uuid.UUID | None,
    status: str | None,
    kind: str | None,
    limit: int,
    offset: int,
    *,
    viewer: User | None = None,
    count: bool = True,
) -> MatchList:
    """A page of the matches `viewer` may see (None: anonymous, so only public ones), newest first,
    read through the (game,) created_at, id indexes; without `count` the total is not counted (it
    is the page's length)."""
    query = select(*MATCH_FIELDS).where(visible_to(viewer))
    if game:
        query = query.where(Match.game == game)
    if status:
        query = query.where(Match.status == status)
    if kind:
        query = query.where(Match.kind == kind)
    if bot_id:
        query = query.where(
            Match.id.in_(select(MatchParticipant.match_id).where(MatchParticipant.bot_id == bot_id))
        )
    rows: list[MatchFields] = list(
        session.execute(query.order_by(Match.created_at.desc(), Match.id.desc()).limit(limit).offset(offset))
    )
    if not count:
        return MatchList(rows, len(rows), False)
    counted = query.with_only_columns(Match.id).limit(COUNT_LIMIT + 1).subquery()
    total = session.scalar(select(func.count()).select_from(counted)) or 0
    return MatchList(rows, min(total, COUNT_LIMIT), total <= COUNT_LIMIT)


def match_views(session: Session, matches: Sequence[MatchFields], viewer: User | None) -> list[MatchOut]:
    """Views for several matches (see `match_dicts`), validated into models for the pages."""
    return [MatchOut.model_validate(view) for view in match_dicts(session, matches, viewer)]


def match_dicts(
    session: Session, matches: Sequence[MatchFields], viewer: User | None
) -> list[dict[str, Any]]:
    """Views for several matches as plain dicts in `MatchOut`'s shape, with two more queries
    whatever their number: the participants with their bots, owners and versions, and the
    replays' sizes. Plain rows and dicts, validated once where they are answered: a page of 50
    matches costs a few milliseconds, where ORM objects and models built one by one cost 15."""
    match_ids = [m.id for m in matches]
    if not match_ids:
        return []
    participants: dict[uuid.UUID, list[dict[str, Any]]] = {match_id: [] for match_id in match_ids}
    rows = session.execute(
        select(*PARTICIPANT_FIELDS)
        .outerjoin(Bot, Bot.id == MatchParticipant.bot_id)
        .outerjoin(User, User.id == Bot.owner_id)
        .outerjoin(BotVersion, BotVersion.id == MatchParticipant.bot_version_id)
        .where(MatchParticipant.match_id.in_(match_ids))
        .order_by(MatchParticipant.slot)
    )
    admin = viewer is not None and is_admin(viewer)
    for row in rows.mappings():
        participants[row["match_id"]].append(_participant(row, viewer, admin))
    replays = {
        row.match_id: row
        for row in session.execute(
            select(Replay.match_id, Replay.frames, Replay.size_bytes).where(Replay.match_id.in_(match_ids))
        )
    }
    views = []
    for match in matches:
        replay = replays.get(match.id)
        views.append(
            {
                "id": match.id,
                "game": match.game,
                "kind": match.kind,
                "rated": match.rated,
                "status": match.status,
                "seed": match.seed,
                "config": match.config or {},
                "attempts": match.attempts,
                "queued_at": match.queued_at,
                "started_at": match.started_at,
                "finished_at": match.finished_at,
                "turns": match.turns,
                "end_reason": match.end_reason,
                "error": match.error,
                "participants": participants[match.id],
                "replay_url": f"{API_PREFIX}/matches/{match.id}/replay" if replay else None,
                "replay_frames": replay.frames if replay else None,
                "replay_bytes": replay.size_bytes if replay else None,
            }
        )
    return views


def _ordinal(mu: float | None, sigma: float | None) -> float | None:
    return None if mu is None or sigma is None else ordinal(mu, sigma)


def _participant(row: RowMapping, viewer: User | None, admin: bool) -> dict[str, Any]:
    """A participant's view from its row of `PARTICIPANT_FIELDS` (a bot deleted since shows "?")."""
    view = dict(row)
    del view["match_id"]
    owner_id = view.pop("owner_id")
    known = view["bot_name"] is not None
    if not known:
        view["bot_name"] = "?"
    if view["owner_name"] is None:
        view["owner_name"] = "?"
    if view["metrics"] is None:
        view["metrics"] = {}
    before = _ordinal(view["mu_before"], view["sigma_before"])
    after = _ordinal(view["mu_after"], view["sigma_after"])
    view["ordinal_change"] = None if before is None or after is None else after - before
    sees_errors = admin or (viewer is not None and known and owner_id == viewer.id)
    view["error_samples"] = list(view["error_samples"] or []) if sees_errors else None
    return view


def replay_blob(session: Session, match_id: uuid.UUID, settings: Settings, viewer: User | None) -> bytes:
    """The stored gzip bytes, wherever the index says they live; or an error that says why not:
    404 (no match `viewer` may see, no replay yet), 410 (stored once, gone from its store now), 503
    (the store is unreachable). Where exactly a replay was looked for goes to the log, not to the
    client."""
    match = get_match(session, match_id, viewer)
    replay = session.get(Replay, match_id)
    if replay is not None:
        try:
            return load_replay(replay, settings)
        except ReplayMissing as exc:
            log.error("%s", exc)
            raise ApiError(
                410, f"the replay of match {match_id} was stored but is missing from replay storage"
            ) from None
        except ReplayStoreError as exc:
            log.error("replay of match %s unavailable: %s", match_id, exc)
            raise ApiError(503, "replay storage is unavailable; try again later") from None
    raise ApiError(404, f"match {match_id} has no replay (status: {match.status})")


def replay_json_bytes(blob: bytes) -> bytes:
    """The replay's JSON text as stored; checked to be JSON so a corrupt row is a clear error."""
    try:
        raw = gzip.decompress(blob)
    except (OSError, EOFError) as exc:
        raise ApiError(500, f"the stored replay is corrupt: {exc}") from None
    return raw
