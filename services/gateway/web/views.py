"""A small HTML front page: leaderboards and recent matches with replay links. Everything on it is
also in the JSON API; this is for people who open the gateway in a browser."""

from __future__ import annotations

from html import escape

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from services.gateway.deps import DbSession
from services.gateway.leaderboard.service import leaderboard
from services.gateway.matches.service import list_matches, match_views
from shared.games.registry import game_names

router = APIRouter(include_in_schema=False)

STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}"
    "table{border-collapse:collapse;margin-bottom:2rem}"
    "td,th{padding:.25rem .75rem;border-bottom:1px solid #ddd;"
    "text-align:left}th{background:#f4f4f4}code{background:#f4f4f4;padding:0 .25rem}"
)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body or '<tr><td>nothing yet</td></tr>'}</table>"


@router.get("/", response_class=HTMLResponse)
def index(session: DbSession) -> HTMLResponse:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Arena</title>",
        f"<style>{STYLE}</style></head><body><h1>Arena</h1>",
        "<p>API documentation: <a href='/docs'>/docs</a> · metrics: <a href='/metrics'>/metrics</a></p>",
    ]
    for game in game_names():
        board = leaderboard(session, game, include_inactive=False, limit=20, offset=0)
        rows = [
            [
                str(e.rank),
                escape(e.bot_name),
                escape(e.owner_name),
                f"{e.ordinal:.2f}",
                f"{e.mu:.2f} ± {e.sigma:.2f}",
                f"{e.wins}/{e.draws}/{e.losses}",
            ]
            for e in board.entries
        ]
        parts.append(f"<h2>{escape(game)} leaderboard</h2>")
        parts.append(_table(["#", "bot", "owner", "mu - 3 sigma", "mu ± sigma", "W/D/L"], rows))
    matches, _ = list_matches(session, None, None, None, None, 25, 0)
    rows = []
    for m in match_views(session, matches, None):
        players = " vs ".join(
            escape(p.bot_name) + (f" (#{p.rank + 1})" if p.rank is not None else "") for p in m.participants
        )
        replay = f"<a href='{m.replay_url}'>replay</a>" if m.replay_url else ""
        rows.append(
            [
                f"<a href='/api/v1/matches/{m.id}'>{str(m.id)[:8]}</a>",
                escape(m.game),
                escape(m.kind),
                escape(m.status),
                players,
                str(m.turns or ""),
                replay,
            ]
        )
    parts.append("<h2>Recent matches</h2>")
    parts.append(_table(["match", "game", "kind", "status", "players", "turns", "replay"], rows))
    parts.append("</body></html>")
    return HTMLResponse("".join(parts))
