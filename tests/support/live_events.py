"""Events for the live tests: a batch of frames, a match's start and its end."""

from __future__ import annotations

import uuid

from shared.events import MatchFinished, MatchFrames, MatchStarted
from shared.states import MatchKind, MatchStatus


def frames(match_id: uuid.UUID, turn: int, padding: int = 0) -> MatchFrames:
    """One played turn; `padding` bytes make it as large as a test needs."""
    return MatchFrames(
        match_id=match_id,
        game="podracing",
        turn=turn,
        frames=[{"turn": turn + 1, "pad": "x" * padding}],
        events=[],
        actions=[[None, None]],
    )


def started_event(match_id: uuid.UUID) -> MatchStarted:
    return MatchStarted(
        match_id=match_id, game="podracing", kind=MatchKind.CHALLENGE, rated=True, attempt=1, participants=[]
    )


def finished_event(match_id: uuid.UUID, turns: int | None = None) -> MatchFinished:
    return MatchFinished(
        match_id=match_id,
        game="podracing",
        kind=MatchKind.CHALLENGE,
        status=MatchStatus.FINISHED,
        rated=False,
        turns=turns,
        participants=[],
    )
