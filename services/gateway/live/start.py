"""What a live viewer is told first (`live.start`): the match, its seats and a replay skeleton whose
only frame is the match's start, rebuilt here from the seed and config (games are deterministic), so
a viewer that joins mid-match can draw the track or the map before the next frames arrive.

Only to a viewer who may see the match (shared.matches.visible_to): an evolution run's evaluation
match is its owner's and admins' only. The socket's handshake may carry an API key as the API takes
one (`X-API-Key`, or `Authorization: Bearer`); without one the viewer is anonymous, and a match it
may not see is as unknown as one that does not exist."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import select

from services.gateway.live.training import CLOSE_UNAUTHORIZED, KEY_REFUSED, Refusal, user_for_key
from shared.config import Settings
from shared.db.models import Bot, Match, MatchParticipant
from shared.db.session import get_sessionmaker
from shared.games.registry import get_game
from shared.games.replay import REPLAY_FORMAT
from shared.matches import get_visible_match
from shared.states import MatchStatus

LIVE_START = "live.start"
CLOSE_UNKNOWN_MATCH = 4404
UNKNOWN_MATCH = Refusal(CLOSE_UNKNOWN_MATCH, "unknown match")


@dataclass(frozen=True)
class LiveMatch:
    id: uuid.UUID
    game: str
    status: MatchStatus
    seed: int
    config: dict[str, Any]
    participants: list[dict[str, Any]]

    @property
    def pending(self) -> bool:
        return self.status in MatchStatus.pending()


def handshake_key(headers: Mapping[str, str]) -> str | None:
    """The API key a socket's handshake carries, as the API reads it: `X-API-Key` first, else an
    `Authorization` header, which must be `Bearer <key>` (anything else there is a key that fails,
    never no key, so a typo is not silently anonymous)."""
    key = headers.get("x-api-key", "").strip()
    if key:
        return key
    authorization = headers.get("authorization")
    if authorization is None:
        return None
    scheme, _, credentials = authorization.partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else ""


def load_live_match(match_id: uuid.UUID, settings: Settings, key: str | None) -> LiveMatch | Refusal:
    """The match and its seats (slot, bot id, bot name) if the key's user (None: anonymous) may see
    it; else why not: the key is refused, or the match is unknown (missing, or not theirs)."""
    with get_sessionmaker()() as session:
        viewer = None
        if key is not None:
            viewer = user_for_key(session, settings, key) if key else None
            if viewer is None:
                return Refusal(CLOSE_UNAUTHORIZED, KEY_REFUSED)
        match = get_visible_match(session, viewer, match_id)
        if match is None:
            return UNKNOWN_MATCH
        seats = session.execute(
            select(MatchParticipant.slot, MatchParticipant.bot_id, Bot.name)
            .join(Bot, Bot.id == MatchParticipant.bot_id)
            .where(MatchParticipant.match_id == match_id)
            .order_by(MatchParticipant.slot)
        ).all()
        return LiveMatch(
            id=match.id,
            game=match.game,
            status=MatchStatus(match.status),
            seed=match.seed,
            config=dict(match.config or {}),
            participants=[
                {"slot": slot, "bot_id": str(bot_id), "name": name} for slot, bot_id, name in seats
            ],
        )


def match_status(match_id: uuid.UUID) -> MatchStatus | None:
    with get_sessionmaker()() as session:
        status = session.scalar(select(Match.status).where(Match.id == match_id))
        return MatchStatus(status) if status is not None else None


@lru_cache(maxsize=64)
def _first_frame(game: str, seed: int, config_json: str, num_players: int) -> str:
    """frame 0 as JSON; cached, as every viewer of a match (and each reconnect) asks for the same."""
    match = get_game(game).create_match(seed, json.loads(config_json), num_players)
    return json.dumps(match.frame(), separators=(",", ":"))


def start_message(match: LiveMatch) -> str:
    """The `live.start` message of the protocol in docs/live.md."""
    num_players = len(match.participants)
    frame = _first_frame(match.game, match.seed, json.dumps(match.config, sort_keys=True), num_players)
    replay = {
        "format": REPLAY_FORMAT,
        "game": match.game,
        "seed": match.seed,
        "config": match.config,
        "num_players": num_players,
        "frames": [json.loads(frame)],
        "events": [],
        "turns": [],
        "result": None,
    }
    return json.dumps(
        {
            "type": LIVE_START,
            "match_id": str(match.id),
            "game": match.game,
            "status": str(match.status),
            "participants": match.participants,
            "replay": replay,
        },
        separators=(",", ":"),
    )


def finished_message(match_id: uuid.UUID, status: MatchStatus) -> str:
    """The minimal `match.finished` for a match that ended before (or while) nobody was listening."""
    return json.dumps({"type": "match.finished", "match_id": str(match_id), "status": str(status)})
