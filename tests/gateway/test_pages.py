"""The bot, game and front pages: what they show, where their links go, 404s for ids and names that
name nothing (never a 500), a fixed number of queries per bot page, and, in Chromium at phone and
laptop widths, no page wider than the screen and a visible rating chart.

The matches behind them are played for real, in this process: created through the API (rated, by
the admin), claimed, played turn by turn by the match runner's loop against in-process bots (one of
them answering badly or too late on some turns, and one that stops answering and forfeits), and
finished by the runner's store, which rates them."""

from __future__ import annotations

import asyncio
import html as html_module
import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import ViewportSize, expect
from sqlalchemy import event
from sqlalchemy.orm import Session

from services.match_runner.store import claim_match, fail_match, finish_match
from shared.botclient import TurnReply
from shared.config import get_settings
from shared.db.models import Bot
from shared.db.session import get_engine
from shared.games.podracing.bots import runner
from shared.games.registry import game_names, get_game
from shared.play.turns import play_match
from tests.support.accounts import Account
from tests.support.browser import launch_chromium, offline_page, save_screenshot
from tests.support.gateway import register_hosted_bot
from tests.support.web_pages import hostile_name, parse

RACE = {"laps": 1, "max_turns": 60}
BAD_ANSWER = "the answer was not JSON: '<html>oops'"


class LocalBot:
    """A bot answering in this process with the built-in runner policy; `failures` maps a turn to
    how it fails then ("error" or "timeout"), and from `quit_at` on it fails every turn."""

    def __init__(self, failures: dict[int, str] | None = None, quit_at: int | None = None) -> None:
        self.failures = failures or {}
        self.quit_at = quit_at

    async def turn(self, *, turn: int, observation: Any, **_: Any) -> TurnReply:
        failure = self.failures.get(turn) or (
            "error" if self.quit_at is not None and turn >= self.quit_at else None
        )
        if failure == "timeout":
            return TurnReply(None, 1000.0, None, timed_out=True)
        if failure == "error":
            return TurnReply(None, 2.0, BAD_ANSWER)
        return TurnReply(runner(observation), 1.0)


def play(match_id: str, seed: int, bots: list[LocalBot]) -> None:
    """Play and finish a queued match the way a worker does (claim, turn loop, store)."""
    attempt = claim_match(uuid.UUID(match_id), "pages-test", stale_after_s=60)
    assert attempt is not None
    settings = get_settings().model_copy(update={"max_consecutive_failures": 5})
    played = asyncio.run(
        play_match(
            get_game("podracing"), match_id=match_id, seed=seed, config=RACE, clients=bots, settings=settings
        )
    )
    assert finish_match(uuid.UUID(match_id), attempt, played) is not None


@dataclass
class History:
    owner: Account
    mine: dict[str, Any]
    rivals: list[dict[str, Any]]
    finished: list[str]
    running: str
    """A match claimed by a worker and still playing (shown under live matches)."""


@pytest.fixture(scope="module")
def history(client: TestClient, admin: Account, make_user: Callable[..., Account]) -> Iterator[History]:
    owner, rival = make_user("owner"), make_user("rival")
    mine = register_hosted_bot(client, owner)
    rivals = [register_hosted_bot(client, rival) for _ in range(2)]
    renamed = client.patch(
        f"/api/v1/bots/{rivals[1]['id']}", json={"name": "rival-two"}, headers=rival.headers
    )
    assert renamed.status_code == 200, renamed.text
    rivals[1]["name"] = "rival-two"

    def challenge(bot_ids: list[str], seed: int) -> str:
        body = {"game": "podracing", "bot_ids": bot_ids, "rated": True, "seed": seed, "config": RACE}
        answer = client.post("/api/v1/matches", json=body, headers=admin.headers)
        assert answer.status_code == 201, answer.text
        return str(answer.json()["id"])

    finished = []
    plan = [
        (rivals[0], False, LocalBot({1: "error", 2: "timeout"})),
        (rivals[0], True, LocalBot()),
        (rivals[1], False, LocalBot({3: "error"})),
        (rivals[1], True, LocalBot(quit_at=2)),  # forfeits
    ]
    for seed, (rival_bot, mine_second, my_client) in enumerate(plan, start=11):
        ids = [mine["id"], rival_bot["id"]]
        clients = [my_client, LocalBot()]
        if mine_second:
            ids.reverse()
            clients.reverse()
        match_id = challenge(ids, seed)
        play(match_id, seed, clients)
        finished.append(match_id)

    running = challenge([rivals[0]["id"], rivals[1]["id"]], 99)
    attempt = claim_match(uuid.UUID(running), "pages-test", stale_after_s=3600)
    assert attempt is not None
    yield History(owner, mine, rivals, finished, running)
    fail_match(uuid.UUID(running), attempt, "the pages test is over")


def test_bot_page_shows_rating_history_versions_opponents_and_errors(
    client: TestClient, history: History
) -> None:
    bot = history.mine
    answer = client.get(f"/bots/{bot['id']}")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    assert "script-src" not in answer.headers["content-security-policy"]
    html = answer.text
    page = parse(html)
    assert f'<h1 class="bot-name">{bot["name"]}</h1>' in html
    assert page.links["podracing"] == "/games/podracing"

    rating = client.get(f"/api/v1/bots/{bot['id']}", headers=history.owner.headers).json()["rating"]
    assert rating["matches_played"] == 4
    assert f"<dd data-ordinal>{rating['ordinal']:.2f}</dd>" in html
    assert ">hosted on Arena, written by a person</dd>" in html  # what "hosted, human" means

    # The chart: a start point plus one point per rated match, mu above the ordinal everywhere.
    svg = re.search(r"<svg data-rating-chart.*?</svg>", html, re.S)
    assert svg is not None
    lines = {
        name: [tuple(map(float, p.split(","))) for p in points.split()]
        for name, points in re.findall(r'data-series="(\w+)" points="([^"]*)"', svg.group(0))
    }
    assert set(lines) == {"mu", "ordinal"}
    assert len(lines["mu"]) == len(lines["ordinal"]) == 5
    assert all(mu[1] < ordinal[1] for mu, ordinal in zip(lines["mu"], lines["ordinal"], strict=True))
    assert "4 rated matches" in svg.group(0)
    assert "style=" not in svg.group(0)  # the CSP refuses inline styles

    versions = page.table("Versions")
    assert versions.rows == [["1", versions.rows[0][1], "decide", "4", "current"]]

    opponents = page.table("Record by opponent")
    assert opponents.headers == ["opponent", "matches", "won", "drawn", "lost"]
    by_name = {row[0]: row for row in opponents.rows}
    assert set(by_name) == {history.rivals[0]["name"], "rival-two"}
    assert int(by_name["rival-two"][4]) >= 1  # the forfeited match is a loss
    for row in opponents.rows:
        assert int(row[1]) == 2 == int(row[2]) + int(row[3]) + int(row[4])
    links = {row[0]: links[0] for row, links in zip(opponents.rows, opponents.links, strict=True)}
    assert links["rival-two"] == f"/bots/{history.rivals[1]['id']}"

    # 1 + 1 + 5 (the forfeit: five failed turns in a row) bad answers.
    assert "In 4 finished matches: 7 bad answers, 1 timeouts, 1 forfeits." in " ".join(html.split())
    matches = page.table("Recent matches")
    columns = ["match", "kind", "opponents", "place", "turns", "bad answers", "timeouts", "note"]
    assert matches.headers == columns
    rows = {links[0]: row for row, links in zip(matches.rows, matches.links, strict=True)}
    assert set(rows) == {f"/matches/{match_id}" for match_id in history.finished}
    first, second, third, fourth = (rows[f"/matches/{m}"] for m in history.finished)
    assert first[-3:-1] == ["1", "1"]
    assert third[-3:-1] == ["1", "0"]
    # The note is what the match was for this bot (its result and its own failures), never the
    # match's end reason: the forfeited match is a loss, with the bot's forfeit and bad answers.
    outcomes = {"won": "#1", "lost": "#2"}
    for row in (first, second, third):
        outcome = row[-1].split(" · ")[0]
        assert outcomes[outcome] == row[3], row
    assert first[-1].endswith(" · 1 timeout, 1 bad answer")
    assert third[-1].endswith(" · 1 bad answer")
    assert second[-1] in ("won", "lost")
    assert fourth[3] == "#2"
    assert fourth[-1] == "lost · forfeited, 5 bad answers"
    # Error counts are public, the samples' text is not.
    assert BAD_ANSWER.split(":")[0] not in html
    assert "error_samples" not in html


def test_bot_page_costs_the_same_queries_for_a_long_and_a_short_history(
    client: TestClient, history: History, make_user: Callable[..., Account]
) -> None:
    newcomer = register_hosted_bot(client, make_user("newcomer"))
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    engine = get_engine()
    event.listen(engine, "before_cursor_execute", count)
    try:
        costs = []
        for bot_id in (history.mine["id"], newcomer["id"], history.rivals[0]["id"]):
            statements.clear()
            assert client.get(f"/bots/{bot_id}").status_code == 200
            costs.append(len(statements))
    finally:
        event.remove(engine, "before_cursor_execute", count)
    # The newcomer has no matches, so match_views skips its lookups: never more than the others.
    assert costs[0] == costs[2], costs
    assert costs[1] <= costs[0] <= 12, costs


def test_pages_of_matches(client: TestClient, history: History) -> None:
    bot_id = history.mine["id"]
    assert client.get(f"/bots/{bot_id}?page=2").status_code == 200  # past the end: an empty page
    for bad in ("0", "x", "-1", "99999999", "²"):
        answer = client.get(f"/bots/{bot_id}", params={"page": bad})
        assert answer.status_code == 400, (bad, answer.status_code)
        assert answer.headers["content-type"].startswith("text/html")
        assert "page must be" in answer.text


def test_owner_samples_are_owner_only_in_the_api(client: TestClient, history: History, bob: Account) -> None:
    """What the page's script fetches: the owner's key gets samples, anyone else's gets none."""
    query = {"bot_id": history.mine["id"], "limit": 20, "offset": 0}

    def samples(headers: dict[str, str]) -> list[Any]:
        items = client.get("/api/v1/matches", params=query, headers=headers).json()["items"]
        return [
            p["error_samples"] for m in items for p in m["participants"] if p["bot_id"] == history.mine["id"]
        ]

    assert all(s is None for s in samples(bob.headers))
    owned = samples(history.owner.headers)
    assert any(s and s[0]["error"] == BAD_ANSWER for s in owned)


@pytest.mark.parametrize(
    "path",
    [
        "/bots/nope",
        "/bots/12345",
        "/bots/5f0c9b8e-3a6d-4c2e-9b1f-7d4e2a6c8b30",  # a well-formed id no bot has
        "/bots/%E2%9C%93",
        "/games/chess",
        "/games/" + "x" * 300,
    ],
)
def test_unknown_ids_and_names_get_a_404_page(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 404
    assert answer.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in answer.text
    assert "There is no" in answer.text


def test_game_pages(client: TestClient, history: History) -> None:
    for name in game_names():
        game = get_game(name)
        answer = client.get(f"/games/{name}")
        assert answer.status_code == 200, answer.text
        html = answer.text
        page = parse(html)
        assert f"<h1>{game.title}</h1>" in html
        assert page.links["/api/v1/games/" + name] == f"/api/v1/games/{name}"
        # Rules from docs/games/<name>.md, rendered, its own title dropped.
        assert '<div class="doc">' in html
        assert "<h3>" in html
        config = page.table("Configuration")
        fields = {row[0]: row for row in config.rows}
        assert set(fields) == set(game.config_model.model_fields)
        for field_name, field in game.config_model.model_fields.items():
            assert json.loads(fields[field_name][2]) == field.default
        shown = {
            (section, kind): json.loads(html_module.unescape(text))
            for section, kind, text in re.findall(
                r'<details data-(schema|example)="(\w+)"[^>]*>\s*<summary>[^<]*</summary>\s*'
                r"<pre><code>(.*?)</code></pre>",
                html,
                re.S,
            )
        }
        assert shown["schema", "observation"] == game.observation_schema()
        assert shown["schema", "action"] == game.action_schema()
        example = game.create_match(1, {}, game.min_players).observation(0)
        assert shown["example", "observation"] == json.loads(json.dumps(example))
        decide = game.builtin_bots()[sorted(game.builtin_bots())[0]]
        assert shown["example", "action"] == json.loads(json.dumps(decide(example)))
        bots = page.table("Built-in bots")
        assert [row[0] for row in bots.rows] == [f"builtin:{b}" for b in sorted(game.builtin_bots())]
        assert page.table("Leaderboard").headers == ["#", "bot", "owner", "mu - 3 sigma", "W/D/L"]
        assert page.links["front page"] == f"/#leaderboard-{name}"
    board = parse(client.get("/games/podracing").text).table("Leaderboard")
    names = [row[1] for row in board.rows]
    assert history.mine["name"] in names or len(names) == 10


def test_front_page_links_bots_matches_games_and_lists_live_matches(
    client: TestClient, history: History
) -> None:
    html = client.get("/").text
    page = parse(html)
    assert '<ol id="ticker" data-ticker' in html
    assert re.search(r'<script type="module" src="/static/ticker\.js\?v=[0-9a-f]{16}"></script>', html)
    live = re.search(r'<tbody id="live-matches">(.*?)</tbody>', html, re.S)
    assert live is not None
    assert f'<tr data-match-id="{history.running}">' in live.group(1)
    assert f'href="/matches/{history.running}"' in live.group(1)
    recent = page.table("Recent matches")
    rows = {links[0]: links for links in recent.links}
    for match_id in history.finished:
        links = rows[f"/matches/{match_id}"]
        assert f"/bots/{history.mine['id']}" in links
        assert links[-1] == f"/api/v1/matches/{match_id}/replay"
    for name in game_names():
        assert page.links[name] == f"/games/{name}"
        board = page.table(f"{name} leaderboard")
        assert all(links[0].startswith("/bots/") for links in board.links if links)
    nav = re.search(r'<nav aria-label="main">(.*?)</nav>', html, re.S)
    assert nav is not None
    for name in game_names():
        assert f'href="/games/{name}"' in nav.group(1)


def test_hostile_names_stay_text_on_the_bot_page(
    client: TestClient, history: History, db_session: Session
) -> None:
    bot = db_session.get(Bot, uuid.UUID(history.rivals[0]["id"]))
    assert bot is not None
    original, bot.name = bot.name, hostile_name()
    db_session.commit()
    try:
        html = client.get(f"/bots/{history.mine['id']}").text
        assert "<script>window.pwned" not in html
        assert "&lt;script&gt;window.pwned" in html
    finally:
        bot.name = original
        db_session.commit()


VIEWPORTS: dict[str, ViewportSize] = {
    "phone": {"width": 390, "height": 844},
    "laptop": {"width": 1366, "height": 768},
}


@pytest.mark.browser
def test_pages_in_a_browser_at_phone_and_laptop_width(gateway_url: str, history: History) -> None:
    """Each page fits the screen's width (wide tables scroll in their own box), the chart is drawn,
    the owner's samples appear for the owner's key only, and nothing leaves the machine."""
    pages = {
        "front": "/",
        "bot": f"/bots/{history.mine['id']}",
        "game": "/games/podracing",
        "battle": "/games/battle",
    }
    with launch_chromium() as browser, offline_page(browser, gateway_url) as offline:
        page = offline.page
        for width_name, viewport in VIEWPORTS.items():
            page.set_viewport_size(viewport)
            for name, path in pages.items():
                offline.open(path)
                overflow = page.evaluate(
                    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                assert overflow <= 0, f"{name} at {width_name} width is {overflow}px wider than the screen"
                if name == "bot":
                    chart = page.locator("svg[data-rating-chart]")
                    expect(chart).to_be_visible()
                    box = chart.bounding_box()
                    assert box is not None
                    assert box["width"] > 300
                    assert box["height"] > 100
                    assert box["x"] + box["width"] <= viewport["width"]
                    expect(page.locator('svg [data-series="mu"]')).to_be_visible()
                save_screenshot(page, f"pages-{name}-{width_name}")

        offline.open(pages["bot"])
        form = page.locator("form[data-owner-samples]")
        expect(form).to_be_visible()
        form.locator("input[name=api_key]").fill("arena_not_a_real_key")
        form.get_by_role("button", name="Show error samples").click()
        expect(page.locator("[data-samples-status]")).to_have_text("That API key was refused.")
        offline.failed.clear()  # the 401 just above was the point

        form.locator("input[name=api_key]").fill(history.owner.key)
        form.get_by_role("button", name="Show error samples").click()
        expect(page.locator("[data-samples] li").first).to_be_visible()
        expect(page.locator("[data-samples]")).to_contain_text(f"turn 1: {BAD_ANSWER}")
        assert page.evaluate("sessionStorage.getItem('arena.apiKey')") == history.owner.key
        save_screenshot(page, "pages-bot-owner-samples")
        page.reload()  # the key is remembered for the tab
        expect(page.locator("[data-samples]")).to_contain_text(BAD_ANSWER)
        form.get_by_role("button", name="Forget key").click()
        assert page.evaluate("sessionStorage.getItem('arena.apiKey')") is None
        offline.assert_stayed_offline()
