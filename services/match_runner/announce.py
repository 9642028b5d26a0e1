"""What the runner tells the live events channel about a match (shared/events).

Called only after the database has the news (the claim, the finishing transaction, the failure), and
never able to change the match's outcome: building or publishing an event that goes wrong is logged
(rate-limited) and forgotten. Publishing itself only queues the event (see shared.events.publish).
"""

from __future__ import annotations

import logging
import uuid

from services.match_runner.store import MAX_MATCH_ERROR_CHARS, FinishedMatch, MatchPlan, load_plan
from shared.events import MatchFinished, MatchSeat, MatchStarted, RatingSnapshot, SeatResult, publish
from shared.events.publish import RateLimitedLog
from shared.jsonsafe import safe_text
from shared.ratings import Skill
from shared.states import MatchStatus

log = logging.getLogger(__name__)
_problems = RateLimitedLog(log)


def _snapshot(skill: Skill) -> RatingSnapshot:
    return RatingSnapshot(mu=skill.mu, sigma=skill.sigma, ordinal=skill.ordinal)


def match_started(plan: MatchPlan, attempt: int) -> None:
    try:
        publish(
            MatchStarted(
                match_id=plan.id,
                game=plan.game,
                kind=plan.kind,
                rated=plan.rated,
                attempt=attempt,
                participants=[
                    MatchSeat(slot=seat.slot, bot_id=seat.bot_id, name=seat.bot_name) for seat in plan.seats
                ],
            )
        )
    except Exception as exc:
        _problems.warning("cannot announce the start of match %s: %s: %s", plan.id, type(exc).__name__, exc)


def match_finished(plan: MatchPlan, finished: FinishedMatch) -> None:
    try:
        names = {seat.slot: seat.bot_name for seat in plan.seats}
        publish(
            MatchFinished(
                match_id=plan.id,
                game=plan.game,
                kind=plan.kind,
                status=MatchStatus.FINISHED,
                rated=finished.rated,
                turns=finished.turns,
                end_reason=finished.end_reason,
                error=finished.error,
                participants=[
                    SeatResult(
                        slot=seat.slot,
                        bot_id=seat.bot_id,
                        name=names.get(seat.slot, ""),
                        rank=seat.rank,
                        score=seat.score,
                        rating_before=_snapshot(seat.rating.before) if seat.rating else None,
                        rating_after=_snapshot(seat.rating.after) if seat.rating else None,
                    )
                    for seat in finished.seats
                ],
            )
        )
    except Exception as exc:
        _problems.warning("cannot announce the end of match %s: %s: %s", plan.id, type(exc).__name__, exc)


def match_failed(match_id: uuid.UUID, plan: MatchPlan | None, error: str) -> None:
    """`plan` may be None when the match failed before it was loaded; it is then read once more."""
    try:
        if plan is None:
            plan = load_plan(match_id)
        publish(
            MatchFinished(
                match_id=plan.id,
                game=plan.game,
                kind=plan.kind,
                status=MatchStatus.FAILED,
                rated=False,
                error=safe_text(error, MAX_MATCH_ERROR_CHARS),
                participants=[
                    SeatResult(slot=seat.slot, bot_id=seat.bot_id, name=seat.bot_name) for seat in plan.seats
                ],
            )
        )
    except Exception as exc:
        _problems.warning("cannot announce the failed match %s: %s: %s", match_id, type(exc).__name__, exc)
