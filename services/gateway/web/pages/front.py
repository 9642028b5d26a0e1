"""The front page's data: a leaderboard per game, the matches playing now and the latest results.

Two queries per game's board plus a fixed handful for each match list, whatever the data.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from services.gateway.leaderboard.schemas import Leaderboard
from services.gateway.leaderboard.service import leaderboard
from services.gateway.matches.schemas import MatchOut
from services.gateway.matches.service import list_matches, match_views
from shared.games.registry import game_names
from shared.states import MatchStatus

LEADERBOARD_ROWS = 20
RECENT_MATCHES = 25
LIVE_MATCHES = 20


@dataclass(frozen=True, slots=True)
class FrontPage:
    boards: list[Leaderboard]
    live: list[MatchOut]
    recent: list[MatchOut]


def front_page(session: Session) -> FrontPage:
    boards = [
        leaderboard(session, game, include_inactive=False, limit=LEADERBOARD_ROWS, offset=0)
        for game in game_names()
    ]
    running = list_matches(session, None, None, MatchStatus.RUNNING, None, LIVE_MATCHES, 0, count=False)
    finished = list_matches(session, None, None, MatchStatus.FINISHED, None, RECENT_MATCHES, 0, count=False)
    return FrontPage(
        boards=boards,
        live=match_views(session, running.matches, None),
        recent=match_views(session, finished.matches, None),
    )
