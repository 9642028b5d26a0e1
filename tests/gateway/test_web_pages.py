"""The HTML front page (`/`) rendered from Jinja2 templates: leaderboards per game and recent
finished matches with the same figures as the JSON API (bot names linking to bot pages, matches to
match pages), user-chosen names escaped, static files with cache headers, and templates and static
files shipped in the installed package. The bot and game pages: tests/gateway/test_pages.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from starlette.requests import Request

from services.gateway.leaderboard.schemas import Leaderboard
from services.gateway.web.templating import templates
from shared.db.models import Bot, Match, Rating, Replay, User
from shared.games.registry import game_names
from shared.games.replay import compress
from shared.states import MatchStatus
from tests.support.accounts import Account, unique
from tests.support.browser import launch_chromium, offline_page
from tests.support.environment import ROOT
from tests.support.gateway import register_hosted_bot
from tests.support.processes import PYTHON
from tests.support.web_pages import hostile_name, parse

LEADERBOARD_COLUMNS = ["#", "bot", "owner", "mu - 3 sigma", "mu ± sigma", "W/D/L"]
MATCH_COLUMNS = ["match", "game", "kind", "players", "turns", "finished", "replay"]
WEB = ROOT / "services" / "gateway" / "web"


@dataclass
class FrontPageData:
    hostile_bot: str
    hostile_owner: str
    hostile_bot_id: str
    other_bot: str
    other_bot_id: str
    queued_id: str
    finished_id: str
    ordinal: float


@pytest.fixture
def front_page_data(client: TestClient, alice: Account, bob: Account, db_session: Session) -> FrontPageData:
    """Alice's bot (named and owned as markup, rated first on the podracing board) in one queued
    and one finished match (with a replay) against Bob's."""
    mine, theirs = register_hosted_bot(client, alice), register_hosted_bot(client, bob)
    matches = []
    for _ in range(2):
        answer = client.post(
            "/api/v1/matches",
            json={"game": "podracing", "bot_ids": [mine["id"], theirs["id"]]},
            headers=alice.headers,
        )
        assert answer.status_code == 201, answer.text
        matches.append(answer.json()["id"])
    queued_id, finished_id = matches

    bot_name, owner_name = hostile_name(), f"<b>{unique('owner')}</b>"
    bot = db_session.get(Bot, uuid.UUID(mine["id"]))
    assert bot is not None
    bot.name = bot_name
    owner = db_session.get(User, uuid.UUID(alice.id))
    assert owner is not None
    owner.name = owner_name
    rating = db_session.get(Rating, bot.id)
    assert rating is not None
    # Above every bot other tests rated, so it is first on the board whatever ran before.
    ordinal = float(int(db_session.scalar(select(func.max(Rating.ordinal))) or 0) + 10)
    rating.mu, rating.sigma, rating.ordinal = ordinal + 3, 1.0, ordinal
    rating.wins, rating.draws, rating.losses = 3, 1, 2
    finished = db_session.get(Match, uuid.UUID(finished_id))
    assert finished is not None
    finished.status, finished.turns = MatchStatus.FINISHED, 123
    for part in finished.participants:
        part.rank = part.slot
    blob = compress({"frames": [], "result": {}})
    db_session.add(Replay(match_id=finished.id, data=blob, size_bytes=len(blob), frames=0))
    db_session.commit()
    return FrontPageData(
        bot_name, owner_name, mine["id"], theirs["name"], theirs["id"], queued_id, finished_id, ordinal
    )


def test_front_page_lists_leaderboards_and_matches(
    client: TestClient, front_page_data: FrontPageData
) -> None:
    data = front_page_data
    answer = client.get("/")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    assert "script-src" not in answer.headers["content-security-policy"]  # no inline script allowed
    page = parse(answer.text)

    assert page.links["/docs"] == "/docs"
    assert page.links["/metrics"] == "/metrics"
    for game in game_names():
        assert page.table(f"{game} leaderboard").headers == LEADERBOARD_COLUMNS
    board = page.table("podracing leaderboard")
    ordinal, mu = f"{data.ordinal:.2f}", f"{data.ordinal + 3:.2f}"
    assert board.rows[0] == ["1", data.hostile_bot, data.hostile_owner, ordinal, f"{mu} ± 1.00", "3/1/2"]
    assert [row[0] for row in board.rows] == [str(rank) for rank in range(1, len(board.rows) + 1)]

    assert board.links[0] == [f"/bots/{data.hostile_bot_id}"]

    recent = page.table("Recent matches")
    assert recent.headers == MATCH_COLUMNS
    rows = {links[0]: (row, links) for row, links in zip(recent.rows, recent.links, strict=True)}
    assert f"/matches/{data.queued_id}" not in rows  # only finished matches: queued ones are not results
    finished, finished_links = rows[f"/matches/{data.finished_id}"]
    assert finished == [
        data.finished_id[:8],
        "podracing",
        "challenge",
        f"{data.hostile_bot} (#1) vs {data.other_bot} (#2)",
        "123",
        "",
        "replay",
    ]
    assert finished_links == [
        f"/matches/{data.finished_id}",
        f"/bots/{data.hostile_bot_id}",
        f"/bots/{data.other_bot_id}",
        f"/api/v1/matches/{data.finished_id}/replay",
    ]
    assert client.get(finished_links[-1]).status_code == 200

    # The names reached the page as text, never as markup.
    assert "<script>window.pwned" not in answer.text
    assert "<b>owner-" not in answer.text
    assert data.hostile_bot.replace("<", "&lt;").replace(">", "&gt;") in answer.text


def test_empty_tables_say_so() -> None:
    """A game nobody plays yet still gets its table, with one "nothing yet" row."""
    scope = {"type": "http", "method": "GET", "path": "/", "root_path": "", "query_string": b""}
    scope["headers"] = []
    html = templates.get_template("index.html").render(
        request=Request(scope),
        root_path="",
        current_path="/",
        boards=[Leaderboard(game="podracing", total=0, entries=[])],
        live=[],
        matches=[],
    )
    page = parse(html)
    board, recent = page.table("podracing leaderboard"), page.table("Recent matches")
    assert (board.headers, board.rows) == (LEADERBOARD_COLUMNS, [["nothing yet"]])
    assert (recent.headers, recent.rows) == (MATCH_COLUMNS, [["nothing yet"]])


@pytest.mark.usefixtures("database_url")
def test_static_files_have_cache_headers(client: TestClient) -> None:
    page = client.get("/").text
    css_href = page.split('rel="stylesheet" href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    path, _, version = css_href.partition("?v=")
    assert path == "/static/arena.css"
    assert len(version) == 16

    current = client.get(css_href)
    assert current.status_code == 200
    assert current.headers["content-type"].startswith("text/css")
    assert current.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert "border-collapse" in current.text
    etag = current.headers["etag"]
    for stale in (path, f"{path}?v=0000000000000000"):
        answer = client.get(stale)
        assert answer.status_code == 200
        assert answer.headers["cache-control"] == "no-cache"
    revalidated = client.get(path, headers={"If-None-Match": etag})
    assert revalidated.status_code == 304
    assert revalidated.headers["cache-control"] == "no-cache"

    docs = client.get("/docs").text
    bundle = docs.split('<script src="', 1)[1].split('"', 1)[0]
    assert bundle.startswith("/static/docs/swagger-ui-bundle.js?v=")
    answer = client.get(bundle)
    assert answer.status_code == 200
    assert "javascript" in answer.headers["content-type"]
    assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"

    for missing in ("/static/nope.css", "/static/../app.py", "/static/docs/../core.py"):
        assert client.get(missing).status_code == 404, missing


@pytest.mark.browser
@pytest.mark.usefixtures("database_url")
def test_front_page_in_a_browser(gateway_url: str, front_page_data: FrontPageData) -> None:
    """Chromium shows the hostile names as text, runs none of them, and styles the page from
    /static, with nothing requested from anywhere but the gateway."""
    data = front_page_data
    with launch_chromium() as browser, offline_page(browser, gateway_url) as offline:
        page = offline.open("/")
        expect(page.get_by_role("heading", name="Arena", exact=True)).to_be_visible()
        board = page.locator('section.leaderboard[data-game="podracing"] tbody tr').first
        expect(board.locator("td").nth(1)).to_have_text(data.hostile_bot)
        expect(board.locator("td").nth(2)).to_have_text(data.hostile_owner)
        match_row = page.locator("section.matches tr", has=page.locator(f'a[href$="{data.finished_id}"]'))
        expect(match_row.get_by_role("link", name="replay")).to_have_attribute(
            "href", f"/api/v1/matches/{data.finished_id}/replay"
        )
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.evaluate("getComputedStyle(document.querySelector('table')).borderCollapse") == "collapse"
        nav = page.get_by_role("navigation", name="main")
        for label in ("Arena", "API docs", "API reference", "Metrics"):
            expect(nav.get_by_role("link", name=label, exact=True)).to_be_visible()
        expect(nav.get_by_role("link", name="Arena", exact=True)).to_have_attribute("aria-current", "page")
        offline.assert_stayed_offline()


@pytest.mark.slow
def test_templates_and_static_files_ship_in_the_wheel(tmp_path: Path) -> None:
    """A non-editable install (the Docker image) gets every template and static file."""
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("services", "shared"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    pip_wheel = [PYTHON, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
    built = subprocess.run(
        [*pip_wheel, "--wheel-dir", str(tmp_path / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PIP_NO_INPUT": "1"},
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("arena-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        path.relative_to(ROOT).as_posix()
        for folder in ("templates", "static")
        for path in (WEB / folder).rglob("*")
        if path.is_file()
    }
    assert {"services/gateway/web/templates/base.html", "services/gateway/web/static/arena.css"} <= expected
    assert expected <= shipped, sorted(expected - shipped)
