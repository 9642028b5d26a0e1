"""What the runner tells the live events channel about a match (shared/events).

Called only after the database has the news (the claim, the finishing transaction, the failure),
and never able to change the match's outcome: building or publishing an event that goes wrong is
logged (rate-limited) and forgotten. Publishing itself only queues the event (see
shared.events.publish). Live frames are the one kind sent before anything is stored: they are a
running match's turns, kept nowhere else until its replay is written at the end.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from services.match_runner.store import MAX_MATCH_ERROR_CHARS, FinishedMatch, MatchPlan, load_plan
from shared.events import (
    EventType,
    MatchFinished,
    MatchFrames,
    MatchSeat,
    MatchStarted,
    RatingSnapshot,
    SeatResult,
    get_publisher,
    match_topic,
    publish,
)
from shared.events.publish import RateLimitedLog
from shared.games.base import JSON, GameEvent, StepResult
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


UNWATCHED_PAUSE_S = 0.5
"""While the last frames sent found no subscriber, turns are skipped for this long before the next
batch is published (a probe): a viewer who opens the match waits at most about this long (plus the
publisher's linger) for frames, and an unwatched match costs almost nothing."""
BATCH_INTERVAL_S = 0.1
"""Turns are published together when they come faster than this: at most about ten events a second
per match, however fast its bots answer. A slow turn is published as soon as it is played."""


def _event_json(event: GameEvent) -> dict[str, JSON]:
    """GameEvent.to_json without its deep copy (dataclasses.asdict): the game never changes an
    event's data once the event exists, and this runs on every turn of the match."""
    return {"turn": event.turn, "kind": event.kind, "player": event.player, "data": event.data}


class FrameAnnouncer:
    """The match runner's turn observer for live viewers: `match.frames` events on the match's own
    topic, each a batch of the turns played since the last one (see BATCH_INTERVAL_S). Buffering a
    turn only keeps references (no validation, no copy); the publisher's thread serialises the
    event later, and drops frames first when its queue is full. `flush()` sends what is left when
    the match ends, before its end is announced."""

    def __init__(self, match_id: uuid.UUID, game: str) -> None:
        self.match_id = match_id
        self.game = game
        self.topic = match_topic(match_id)
        self._quiet_until = 0.0
        self._sent_at = 0.0
        self._first_turn = 0
        self._frames: list[JSON] = []
        self._events: list[JSON] = []
        self._actions: list[list[JSON | None]] = []

    def __call__(self, turn: int, actions: Sequence[JSON | None], step: StepResult) -> None:
        now = time.monotonic()
        if now < self._quiet_until:
            return  # nobody watched a moment ago; the next turn after this pause asks again
        if not self._actions:
            self._first_turn = turn
        self._frames.extend(step.frames)
        self._events.extend(_event_json(event) for event in step.events)
        self._actions.append(list(actions))
        if now - self._sent_at >= BATCH_INTERVAL_S:
            self.flush()

    def flush(self) -> None:
        """Publish the buffered turns now (nothing when there are none)."""
        if not self._actions:
            return
        now = time.monotonic()
        frames, events, actions = self._frames, self._events, self._actions
        self._frames, self._events, self._actions = [], [], []
        self._sent_at = now
        try:
            if get_publisher().listeners(self.topic) == 0:
                self._quiet_until = now + UNWATCHED_PAUSE_S
            publish(
                MatchFrames.model_construct(
                    type=EventType.MATCH_FRAMES,
                    version=1,
                    timestamp=datetime.now(UTC),  # given, so pydantic need not inspect the factory
                    match_id=self.match_id,
                    game=self.game,
                    turn=self._first_turn,
                    frames=frames,
                    events=events,
                    actions=actions,
                )
            )
        except Exception as exc:
            _problems.warning(
                "cannot publish frames of match %s: %s: %s", self.match_id, type(exc).__name__, exc
            )
