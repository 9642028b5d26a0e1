"""The bot page's data: who the bot is, its rating over time, versions, record against each
opponent, and its recent matches with the errors it made in them.

Everything here is public, so it counts public matches only (shared.matches.visible_to: never an
evolution run's evaluation matches, which are its owner's). The error samples a match stored (what
exactly a bot answered wrong) are for the bot's owner only; the page fetches them through the API
with the owner's key, in the browser, so this module never reads them.

A page costs a fixed number of queries whatever the bot's history: bot, versions, rating history,
opponents, error totals, then the recent matches (see services.gateway.matches.service).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session, aliased

from services.gateway.matches.schemas import MatchOut
from services.gateway.matches.service import list_matches, match_views
from services.gateway.web.pages.chart import RatingChart, RatingPoint, rating_chart
from shared.bots import publicly_listed
from shared.db.models import Bot, BotVersion, Match, MatchParticipant, Rating, User
from shared.matches import visible_to
from shared.states import BotKind, BotOrigin, HostedContract, MatchStatus

HISTORY_POINTS = 500
"""The chart shows at most this many of the newest rated matches."""
MAX_VERSIONS = 50
MAX_OPPONENTS = 50
MATCHES_PER_PAGE = 20
MAX_PAGE = 10_000


KIND_WORDS: dict[BotKind, str] = {
    BotKind.HTTP: "runs on its owner's server (HTTP)",
    BotKind.HOSTED: "hosted on Arena",
}
ORIGIN_WORDS: dict[BotOrigin, str] = {
    BotOrigin.HUMAN: "written by a person",
    BotOrigin.EVOLVER: "written by language models (the evolver)",
    BotOrigin.TRAINER: "a trained neural policy (the trainer)",
    BotOrigin.BUILTIN: "built into Arena",
}


def describe_kind(kind: BotKind, origin: BotOrigin) -> str:
    """How a bot runs and who made it, in words ("hosted on Arena, written by a person")."""
    return f"{KIND_WORDS.get(kind, str(kind))}, {ORIGIN_WORDS.get(origin, str(origin))}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


@dataclass(frozen=True, slots=True)
class VersionRow:
    number: int
    contract: HostedContract | None
    created_at: datetime
    current: bool
    matches: int


@dataclass(frozen=True, slots=True)
class OpponentRecord:
    bot_id: uuid.UUID
    name: str
    wins: int
    draws: int
    losses: int

    @property
    def matches(self) -> int:
        return self.wins + self.draws + self.losses


@dataclass(frozen=True, slots=True)
class ErrorTotals:
    """Over all the bot's finished matches."""

    matches: int
    errors: int
    timeouts: int
    forfeits: int


@dataclass(frozen=True, slots=True)
class MatchErrors:
    """This bot's own figures in one match (the row of the recent-matches table)."""

    match: MatchOut
    slot: int
    rank: int | None
    errors: int
    timeouts: int
    forfeited: bool
    opponents: list[tuple[uuid.UUID, str]]
    outcome: str
    """What the match was for this bot: "won", "lost", "draw", "tied for first", "3rd of 4", or
    the match's status when it was not played to the end ("failed", "running")."""

    @property
    def separator(self) -> str:
        """Between the outcome and the details: a failure's reason follows a colon."""
        return " · " if self.match.status is MatchStatus.FINISHED else ": "

    @property
    def details(self) -> str:
        """This bot's own failures in a finished match ("forfeited, 2 timeouts"), or why a match
        was not played to the end; empty when there is nothing to say."""
        if self.match.status is not MatchStatus.FINISHED:
            return self.match.error or ""
        own = ["forfeited"] if self.forfeited else []
        if self.timeouts:
            own.append(_plural(self.timeouts, "timeout"))
        if self.errors:
            own.append(_plural(self.errors, "bad answer"))
        return ", ".join(own)

    @property
    def outcome_class(self) -> str:
        """The CSS class colouring the outcome."""
        if self.outcome in ("won", "tied for first"):
            return "outcome-won"
        if self.outcome == "draw":
            return "outcome-draw"
        return "outcome-lost" if self.match.status is MatchStatus.FINISHED else ""


@dataclass(frozen=True, slots=True)
class BotPage:
    bot: Bot
    kind_words: str
    """describe_kind of the bot."""
    owner_name: str
    rating: Rating | None
    current_version: int | None
    history: list[RatingPoint]
    chart: RatingChart | None
    versions: list[VersionRow]
    opponents: list[OpponentRecord]
    totals: ErrorTotals
    recent: list[MatchErrors]
    recent_total: int
    recent_total_exact: bool
    """False past the match list's counting limit: there are more pages than `pages`."""
    page: int
    pages: int
    matches_per_page: int


def _history(session: Session, bot_id: uuid.UUID) -> list[RatingPoint]:
    """The rating after each rated match (newest HISTORY_POINTS), oldest first, preceded by the
    rating the oldest of them started from."""
    newest_first = session.execute(
        select(
            Match.id,
            Match.finished_at,
            MatchParticipant.mu_before,
            MatchParticipant.sigma_before,
            MatchParticipant.mu_after,
            MatchParticipant.sigma_after,
        )
        .join(Match, Match.id == MatchParticipant.match_id)
        .where(
            MatchParticipant.bot_id == bot_id,
            Match.status == MatchStatus.FINISHED,
            MatchParticipant.mu_after.is_not(None),
            MatchParticipant.sigma_after.is_not(None),
        )
        .order_by(Match.finished_at.desc(), Match.id.desc())
        .limit(HISTORY_POINTS)
    ).all()
    rows = list(reversed(newest_first))
    points = [
        RatingPoint(row.mu_after, row.sigma_after, row.finished_at, str(row.id))
        for row in rows
        if row.mu_after is not None and row.sigma_after is not None
    ]
    if rows and rows[0].mu_before is not None and rows[0].sigma_before is not None:
        points.insert(0, RatingPoint(rows[0].mu_before, rows[0].sigma_before, None, None))
    return points


def _versions(session: Session, bot: Bot) -> list[VersionRow]:
    rows = session.execute(
        select(
            BotVersion.id,
            BotVersion.number,
            BotVersion.contract,
            BotVersion.created_at,
            func.count(Match.id),
        )
        .outerjoin(MatchParticipant, MatchParticipant.bot_version_id == BotVersion.id)
        .outerjoin(Match, and_(Match.id == MatchParticipant.match_id, visible_to(None)))
        .where(BotVersion.bot_id == bot.id)
        .group_by(BotVersion.id)
        .order_by(BotVersion.number.desc())
        .limit(MAX_VERSIONS)
    ).all()
    return [
        VersionRow(number, contract, created_at, version_id == bot.current_version_id, matches)
        for version_id, number, contract, created_at, matches in rows
    ]


def _opponents(session: Session, bot_id: uuid.UUID) -> list[OpponentRecord]:
    """Win/draw/loss against each other bot in the same finished matches (in a match of more than
    two, against each opponent by rank), most played first."""
    me, them = aliased(MatchParticipant), aliased(MatchParticipant)
    rows = session.execute(
        select(
            them.bot_id,
            Bot.name,
            func.count().filter(me.rank < them.rank),
            func.count().filter(me.rank == them.rank),
            func.count().filter(me.rank > them.rank),
        )
        .select_from(me)
        .join(them, and_(them.match_id == me.match_id, them.bot_id != me.bot_id))
        .join(Match, Match.id == me.match_id)
        .join(Bot, Bot.id == them.bot_id)
        .where(
            me.bot_id == bot_id,
            Match.status == MatchStatus.FINISHED,
            visible_to(None),
            me.rank.is_not(None),
            them.rank.is_not(None),
        )
        .group_by(them.bot_id, Bot.name)
        .order_by(func.count().desc(), Bot.name)
        .limit(MAX_OPPONENTS)
    ).all()
    return [OpponentRecord(opp_id, name, wins, draws, losses) for opp_id, name, wins, draws, losses in rows]


def _totals(session: Session, bot_id: uuid.UUID) -> ErrorTotals:
    row = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(MatchParticipant.errors), 0),
            func.coalesce(func.sum(MatchParticipant.timeouts), 0),
            func.count().filter(MatchParticipant.forfeited.is_(True)),
        )
        .join(Match, Match.id == MatchParticipant.match_id)
        .where(MatchParticipant.bot_id == bot_id, Match.status == MatchStatus.FINISHED, visible_to(None))
    ).one()
    return ErrorTotals(int(row[0]), int(row[1]), int(row[2]), int(row[3]))


def _ordinal(place: int) -> str:
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}"


def outcome(view: MatchOut, bot_id: uuid.UUID) -> str:
    """The match's outcome for bot `bot_id` (see MatchErrors.outcome)."""
    if view.status is not MatchStatus.FINISHED:
        return str(view.status)
    mine = next(p for p in view.participants if p.bot_id == bot_id)
    ranks = [p.rank for p in view.participants if p.rank is not None]
    if mine.rank is None or not ranks:
        return "no result"
    if len(set(ranks)) == 1:
        return "draw"
    if mine.rank == 0:
        return "won" if ranks.count(0) == 1 else "tied for first"
    if len(view.participants) == 2:
        return "lost"
    return f"{_ordinal(mine.rank + 1)} of {len(view.participants)}"


def _match_errors(view: MatchOut, bot_id: uuid.UUID) -> MatchErrors:
    mine = next(p for p in view.participants if p.bot_id == bot_id)
    return MatchErrors(
        match=view,
        slot=mine.slot,
        rank=mine.rank,
        errors=mine.errors,
        timeouts=mine.timeouts,
        forfeited=mine.forfeited,
        opponents=[(p.bot_id, p.bot_name) for p in view.participants if p.bot_id != bot_id],
        outcome=outcome(view, bot_id),
    )


def bot_page(session: Session, bot_id: uuid.UUID, page: int) -> BotPage | None:
    """The page of bot `bot_id` with page `page` (from 1) of its matches; None for an unknown bot."""
    found = session.execute(
        select(Bot, User.name, Rating)
        .join(User, User.id == Bot.owner_id)
        .outerjoin(Rating, Rating.bot_id == Bot.id)
        .where(Bot.id == bot_id, publicly_listed())
    ).first()
    if found is None:
        return None
    bot, owner_name, rating = found
    versions = _versions(session, bot)
    history = _history(session, bot.id)
    listed = list_matches(session, None, bot.id, None, None, MATCHES_PER_PAGE, (page - 1) * MATCHES_PER_PAGE)
    total = listed.total
    views = match_views(session, listed.matches, None)  # no viewer: never the owner-only samples
    return BotPage(
        bot=bot,
        kind_words=describe_kind(bot.kind, bot.origin),
        owner_name=owner_name,
        rating=rating,
        current_version=next((v.number for v in versions if v.current), None),
        history=history,
        chart=rating_chart(history),
        versions=versions,
        opponents=_opponents(session, bot.id),
        totals=_totals(session, bot.id),
        recent=[_match_errors(view, bot.id) for view in views],
        recent_total=total,
        recent_total_exact=listed.exact,
        page=page,
        pages=max(1, -(-total // MATCHES_PER_PAGE), 0 if listed.exact else page),
        matches_per_page=MATCHES_PER_PAGE,
    )
