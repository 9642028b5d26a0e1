"""Every page of the site in Chromium, offline, at a laptop's and a phone's size: nothing is asked of
any host but the gateway, no script or console error (the API reference included), no table wider
than its box, and on the way what a new user looks for:

- the replay viewer names the bots in their colours (above the board and on every side panel),
  speaks in turns (counter, `?t=`), has a legend under its event markers, and says what each result
  figure counts;
- a game page opens with a sample match playing, then the rules, each subject once;
- a bot page says what each match was for the bot, and what "hosted, human" means;
- the training list measures progress against the budget that ends a run (here its time), and the
  elapsed time of working training and evolution runs counts on; the payoff table names its bots;
- the pages follow a dark system theme;
- and they look finished: the podracing field fills its board (an even letterbox at most, never a
  band on two sides or its edge drawn as a line), the viewer's side panel headers take one line, no
  table is shown empty under its header, secondary text is readable (4.5:1) in both themes, the
  charts of a row line up, a form's fields line up on a phone, numbers are right-aligned, and a
  rules table's code breaks between the parts of a name, never inside one.

`test_arena_view_names_the_players` is `arena view` on a replay `arena play` wrote (the names and
bot specs it stores). Screenshots of each page at each size go to test-artifacts/screenshots/
(`site-<page>-<size>.png`)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, ConsoleMessage, Page, ViewportSize, expect
from sqlalchemy import select, update

from services.gateway.web.assets import NO_LOGO
from services.gateway.web.pages.game import SAMPLE_BOTS
from services.gateway.web.standalone import standalone_viewer_app
from shared.db.models import EvolutionProgram, EvolutionRun, Job, TrainingRun
from shared.db.session import session_scope
from shared.games.registry import get_game
from shared.games.replay import encode, play_local
from shared.play import local_play, options
from shared.play.bot_specs import BotKindArg, BotSpec, parse_bots
from shared.states import JobStatus
from tests.support.accounts import Account, unique
from tests.support.browser import launch_chromium, offline_page, save_screenshot
from tests.support.evolution import create_run as create_evolution_run
from tests.support.evolution import per_opponent, seed_run
from tests.support.gateway import register_hosted_bot
from tests.support.stored_matches import StoredMatch, store_finished_match

VIEWPORTS: dict[str, ViewportSize] = {
    "laptop": {"width": 1366, "height": 768},
    "phone": {"width": 390, "height": 844},
}
TABLES_TOO_WIDE = """() => [...document.querySelectorAll('.table-scroll, .viewer-table-wrap')]
    .filter((box) => box.offsetParent !== null && box.scrollWidth > box.clientWidth + 1)
    .map((box) => `${box.closest('section')?.querySelector('h2')?.textContent || '?'}: `
        + `${box.scrollWidth} > ${box.clientWidth}`)"""
WRAPPED_TEXT = """(selector) => {
    const wrapped = [];
    for (const box of document.querySelectorAll(selector)) {
        if (!box.getClientRects().length) continue;
        const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (!node.textContent.trim()) continue;
            const range = document.createRange();
            range.selectNodeContents(node);
            const tops = [...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top));
            if (new Set(tops).size > 1) wrapped.push(node.textContent.trim());
        }
    }
    return wrapped;
}"""
"""The texts under `selector` that take more than one line."""
FIELD_RGB = (19, 26, 38)
"""The podracing field's colour (FIELD in static/viewer/podracing.js)."""
BOARD_BANDS = """(canvas, field) => {
    const { width, height } = canvas;
    const data = canvas.getContext("2d").getImageData(0, 0, width, height).data;
    const isField = (x, y) => {
        const i = (y * width + x) * 4;
        const off = [0, 1, 2].map((k) => Math.abs(data[i + k] - field[k]));
        return off[0] + off[1] + off[2] <= 6;
    };
    const run = (x, y, dx, dy) => {
        let n = 0;
        for (; x >= 0 && y >= 0 && x < width && y < height && !isField(x, y); x += dx, y += dy) n += 1;
        return n;
    };
    const side = (along) => Math.min(...[0.3, 0.5, 0.7].map(along));
    return {
        left: side((u) => run(0, Math.round(height * u), 1, 0)),
        right: side((u) => run(width - 1, Math.round(height * u), -1, 0)),
        top: side((u) => run(Math.round(width * u), 0, 0, 1)),
        bottom: side((u) => run(Math.round(width * u), height - 1, 0, -1)),
    };
}"""
"""How many pixels deep, from each edge of the canvas, something other than the field lies (the least
of three lines across that edge, so that a pod or a trail there does not count)."""
EMPTY_TABLES = """() => [...document.querySelectorAll('main table')]
    .filter((table) => table.offsetParent !== null && table.tBodies.length
        && ![...table.tBodies].some((body) => body.rows.length))
    .map((table) => table.closest('section')?.querySelector('h2')?.textContent || '?')"""
"""Tables shown with a header and no row (the page's note says there is nothing yet)."""
CHART_ROWS = """() => {
    const rows = new Map();
    for (const figure of document.querySelectorAll('.training-chart-grid .training-chart')) {
        const row = Math.round(figure.getBoundingClientRect().top);
        const canvas = Math.round(figure.querySelector('canvas').getBoundingClientRect().top);
        rows.set(row, [...(rows.get(row) || []), canvas]);
    }
    return [...rows.values()].filter((tops) => new Set(tops).size > 1);
}"""
"""Rows of the chart grid whose canvases do not start at the same height."""
LOW_CONTRAST = """(selector) => {
    const luminance = (colour) => {
        const [r, g, b] = colour.match(/[\\d.]+/g).slice(0, 3).map((v) => {
            const c = Number(v) / 255;
            return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const page = luminance(getComputedStyle(document.body).backgroundColor);
    return [...document.querySelectorAll(selector)]
        .filter((node) => node.offsetParent !== null && node.textContent.trim())
        .map((node) => {
            const text = luminance(getComputedStyle(node).color);
            const ratio = (Math.max(text, page) + 0.05) / (Math.min(text, page) + 0.05);
            return `${node.className || node.tagName} ${ratio.toFixed(2)}`;
        })
        .filter((line) => Number(line.split(" ").pop()) < 4.5);
}"""
"""Texts under `selector` less than 4.5:1 in contrast with the page's background (WCAG AA)."""
SECONDARY_TEXT = (
    ".lead, .note, .empty, .more, .legend, .training-chart figcaption span, thead th, .facts dt, "
    ".viewer-metric-note"
)
RAGGED_INPUTS = """() => new Set([...document.querySelectorAll(
        '.training-config label > input:not([type=checkbox]), .training-config label > select')]
    .filter((field) => field.offsetParent !== null)
    .map((field) => Math.round(field.getBoundingClientRect().right))).size"""
"""How many different right edges the fields of a form's labels have (one: they line up)."""
NOT_RIGHT = """(selector) => [...document.querySelectorAll(selector)]
    .filter((cell) => getComputedStyle(cell).textAlign !== 'right').map((cell) => cell.textContent)"""
TIME_BUDGET_S = 3600.0
TRAINED_S = 1800.0
"""Half the time budget, against a tenth of the steps: the time budget ends this run."""


@dataclass
class Site:
    match: StoredMatch
    training_run: str
    evolution_run: str
    fleet_bot: dict[str, Any]
    owner: Account


def set_running(model: type[TrainingRun] | type[EvolutionRun], run_id: str, **values: Any) -> None:
    """A run as its worker leaves it mid-way: its job running, its counters at `values`."""
    with session_scope() as session:
        session.execute(update(model).where(model.id == uuid.UUID(run_id)).values(**values))
        job_id = session.scalar(select(model.job_id).where(model.id == uuid.UUID(run_id)))
        session.execute(update(Job).where(Job.id == job_id).values(status=JobStatus.RUNNING))


@pytest.fixture(scope="module")
def site(client: TestClient, make_user: Any, database_url: str) -> Site:  # noqa: ARG001 (requested for its side effect)
    from shared.db.session import get_sessionmaker

    owner, other = make_user("tour"), make_user("rival")
    game = get_game("podracing")
    bots = game.builtin_bots()
    race = play_local(game, 5, [bots["runner"], bots["blocker"]])
    session = get_sessionmaker()()
    try:
        match = store_finished_match(client, session, owner, other, json.loads(json.dumps(race)))
    finally:
        session.close()

    answer = client.post(
        "/api/v1/training/runs",
        json={"name": unique("timed"), "budget": {"steps": 10_000_000, "seconds": TIME_BUDGET_S}},
        headers=owner.headers,
    )
    assert answer.status_code == 201, answer.text
    training_run = answer.json()["id"]
    set_running(TrainingRun, training_run, global_step=1_000_000, iteration=10, elapsed_s=TRAINED_S)

    fleet_bot = register_hosted_bot(client, owner)
    evolution_run = create_evolution_run(client, owner)["id"]
    seed_run(uuid.UUID(evolution_run))
    with session_scope() as db:
        program = db.scalars(
            select(EvolutionProgram).where(
                EvolutionProgram.run_id == uuid.UUID(evolution_run), EvolutionProgram.seq == 1
            )
        ).one()
        program.metrics = {
            **program.metrics,
            "per_opponent": {
                **program.metrics["per_opponent"],
                f"bot:{fleet_bot['id']}": per_opponent(2, 1, 1),
            },
        }
    set_running(EvolutionRun, evolution_run, elapsed_s=65.0)
    return Site(match, training_run, evolution_run, fleet_bot, owner)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch_chromium() as chromium:
        yield chromium


def console_errors(page: Page) -> list[str]:
    errors: list[str] = []

    def keep(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(f"{message.text} ({message.location.get('url', '')})")

    page.on("console", keep)
    return errors


def ticks(page: Page, selector: str, step_s: float = 1.0) -> None:
    """The text at `selector` changes (a clock that counts, its text every `step_s` seconds): within
    a step, a tick of the page's one-second timer and some slack for a busy machine."""
    before = page.locator(selector).first.inner_text()
    expect(page.locator(selector).first).not_to_have_text(before, timeout=(step_s + 1.5) * 1000)


def outcome_of_seat_0(site: Site) -> str:
    ranks = {seat["player"]: seat["rank"] for seat in site.match.replay["result"]["players"]}
    return "draw" if ranks[0] == ranks[1] else "won" if ranks[0] == 0 else "lost"


def check_viewer(page: Page, site: Site) -> None:
    names = [bot["name"] for bot in site.match.bots]
    expect(page.locator("[data-players] .viewer-name")).to_have_text(names)
    expect(page.locator("[data-panel] h3")).to_have_text(names)  # every side panel, named
    expect(page.locator("[data-result] thead .viewer-name")).to_have_text(names)
    expect(page.locator("[data-turn-counter]")).to_have_text(f"12 / {site.match.replay['result']['turns']}")
    expect(page.locator("a[data-frame-link]")).to_have_attribute("href", f"/matches/{site.match.id}?t=12")
    legend = page.locator("[data-marker-legend] li")
    kinds = set(page.eval_on_selector_all("button[data-marker]", "bs => bs.map(b => b.dataset.kind)"))
    assert set(legend.evaluate_all("items => items.map(i => i.dataset.kind)")) == kinds
    expect(page.locator('[data-marker-legend] li[data-kind="checkpoint"]')).to_have_text("checkpoint passed")
    expect(page.locator('[data-metric="checkpoints"] .viewer-metric-note')).to_contain_text(
        "the winner can show fewer"
    )
    for row in page.locator("[data-result] tbody tr").all():
        expect(row.locator(".viewer-metric-note")).to_have_count(1)


def board_bands(page: Page, root: str = "") -> dict[str, int]:
    page.wait_for_function("() => window.arenaViewer?.player?.drawCount > 0")
    bands: dict[str, int] = page.locator(f"{root} [data-viewer-canvas]".strip()).evaluate(
        BOARD_BANDS, list(FIELD_RGB)
    )
    return bands


def check_board(page: Page, size: str, root: str = "", filled: bool = True) -> None:
    """The podracing field fills its canvas: no band of what lies outside it (the race stays on the
    field) or, where the canvas's shape is not the field's (`filled` false), an even letterbox; and
    its edge is never drawn as a line."""
    bands = board_bands(page, root)
    if filled:
        assert bands == {"left": 0, "right": 0, "top": 0, "bottom": 0}, f"{size}: {bands}"
    else:
        assert abs(bands["left"] - bands["right"]) <= 1, f"{size}: {bands}"
        assert abs(bands["top"] - bands["bottom"]) <= 1, f"{size}: {bands}"


def check_panels(page: Page, size: str) -> None:
    """Each side panel's headers (its bot's name, "pod 1", "checkpoints passed") take one line, and
    its tables fit the panel."""
    assert page.evaluate(WRAPPED_TEXT, "[data-panel] h3, [data-panel] th") == [], size
    too_wide = page.eval_on_selector_all(
        "[data-panel] table",
        "ts => ts.filter(t => t.scrollWidth > t.parentElement.clientWidth + 1).map(t => t.scrollWidth)",
    )
    assert too_wide == [], f"{size}: a side panel's table is wider than the panel"


def check_looks(page: Page, name: str, size: str) -> None:
    """What any page must look like: no table shown empty under its header, secondary text readable,
    charts of a row level, the fields of a form lined up on a phone and numbers right-aligned."""
    assert page.evaluate(EMPTY_TABLES) == [], f"{name} at {size}: empty tables shown"
    assert page.evaluate(LOW_CONTRAST, SECONDARY_TEXT) == [], f"{name} at {size}: text too faint"
    if name == "training-run":
        assert page.evaluate(CHART_ROWS) == [], f"{size}: charts of a row start at different heights"
    if name in ("training-run", "evolution-list") and size == "phone":
        assert page.evaluate(RAGGED_INPUTS) == 1, f"{name}: the form's fields do not line up"
    if name == "evolution-run" and size == "laptop":
        numbers = "[data-spend] td:nth-child(n+3), [data-payoff] tr[data-program] td:nth-child(n+2)"
        assert page.evaluate(NOT_RIGHT, numbers) == [], "numbers not right-aligned"
    if name.startswith("game-"):
        # A rules table's code breaks between the parts of a name, never inside one.
        codes = [text for text in page.evaluate(WRAPPED_TEXT, ".doc td code") if " " not in text]
        assert codes == [], f"{name} at {size}: {codes}"


def check_game(page: Page, game: str) -> None:
    page.wait_for_selector(".game-sample[data-ready]", state="attached", timeout=15_000)
    names = [f"builtin:{bot}" for bot in SAMPLE_BOTS[game]]
    expect(page.locator(".game-sample [data-players] .viewer-name")).to_have_text(names)
    assert page.evaluate("() => window.arenaViewer.player.playing"), "the sample does not play"
    headings = page.locator("main h2").all_inner_texts()
    assert headings[0] == "Rules", headings
    assert len(headings) == len(set(headings)), headings
    assert page.locator("main h3").all_inner_texts().count("Configuration") == 0  # the doc's copy is left out


def check_training_list(page: Page, site: Site) -> None:
    row = page.locator(f'[data-runs] tr[data-run-id="{site.training_run}"]')
    progress = row.locator("td[data-budget]")
    expect(progress).to_have_attribute("data-budget", "time")
    expect(progress).to_have_text("50.0% of time")
    # 0.1% of the time budget: the shown share's step.
    ticks(page, f'[data-runs] tr[data-run-id="{site.training_run}"] td[data-budget]', TIME_BUDGET_S / 1000)


@pytest.mark.browser
def test_every_page_offline_without_errors_and_fitting_a_laptop_and_a_phone(  # noqa: C901 - one tour of every page and viewport, each page checked inline
    browser: Browser, gateway_url: str, site: Site
) -> None:
    pages = {
        "front": "/",
        "bot": f"/bots/{site.match.bots[0]['id']}",
        "game-podracing": "/games/podracing",
        "game-battle": "/games/battle",
        "viewer": f"/matches/{site.match.id}?t=12",
        "training-list": "/training",
        "training-run": f"/training/{site.training_run}",
        "evolution-list": "/evolution",
        "evolution-run": f"/evolution/{site.evolution_run}",
        "api-reference": "/redoc",
        "api-docs": "/docs",
    }
    race = f"/api/v1/training/runs/{site.training_run}/race"  # no trainer recorded one here
    with offline_page(browser, gateway_url) as offline:
        page = offline.page
        errors = console_errors(page)
        page.goto(f"{gateway_url}/")
        page.evaluate("key => sessionStorage.setItem('arena.apiKey', key)", site.owner.key)
        for size, viewport in VIEWPORTS.items():
            page.set_viewport_size(viewport)
            for name, path in pages.items():
                if name.startswith("api-") and size != "laptop":
                    continue
                offline.open(path)
                if name == "viewer":
                    page.wait_for_selector("[data-viewer][data-ready]", state="attached", timeout=15_000)
                    if size == "laptop":
                        check_viewer(page, site)
                    check_board(page, size)
                    check_panels(page, size)
                elif name.startswith("game"):
                    page.wait_for_selector("[data-viewer][data-ready]", state="attached", timeout=15_000)
                    if size == "laptop":
                        check_game(page, name.removeprefix("game-"))
                    if name == "game-podracing":
                        check_board(page, size, ".game-sample", filled=False)
                    else:
                        expect(page.locator("#leaderboard .more")).not_to_contain_text("the top 0")
                elif name == "bot" and size == "laptop":
                    expect(page.locator("[data-kind-words]")).to_have_text(
                        "hosted on Arena, written by a person"
                    )
                    expect(page.locator("td[data-outcome]")).to_have_text([outcome_of_seat_0(site)])
                elif name == "training-list":
                    page.wait_for_selector(
                        "[data-training-list][data-loaded]", state="attached", timeout=15_000
                    )
                    if size == "laptop":
                        check_training_list(page, site)
                elif name == "training-run":
                    page.wait_for_selector("[data-training-run][data-detail-loaded]", state="attached")
                    if size == "laptop":
                        expect(page.locator("[data-progress]")).to_contain_text("of 1h 00m of training")
                        ticks(page, "[data-elapsed]")
                elif name == "evolution-list":
                    page.wait_for_selector(
                        "[data-evolution-list][data-loaded]", state="attached", timeout=15_000
                    )
                    if size == "laptop":
                        ticks(page, f'tr[data-run-id="{site.evolution_run}"] td[data-elapsed]')
                elif name == "evolution-run":
                    page.wait_for_selector(
                        '[data-evolution-run][data-events-loaded="true"]', state="attached"
                    )
                    if size == "laptop":
                        ticks(page, "[data-elapsed]")
                        fleet = page.locator(
                            f'[data-payoff-head] th[data-opponent="bot:{site.fleet_bot["id"]}"]'
                        )
                        expect(fleet).to_have_text(site.fleet_bot["name"])
                elif name == "api-reference":
                    logo = page.locator("img[alt='redocly logo']")  # served as an empty image
                    expect(logo).to_have_attribute("src", NO_LOGO.decode(), timeout=15_000)
                elif name == "api-docs":
                    page.locator(".swagger-ui .opblock").first.wait_for(state="visible", timeout=15_000)
                page.wait_for_load_state("networkidle")
                overflow = page.evaluate(
                    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                assert overflow <= 0, f"{name} at {size} is {overflow}px wider than the screen"
                assert page.evaluate(TABLES_TOO_WIDE) == [], f"{name} at {size}: tables wider than their box"
                if not name.startswith("api-"):
                    check_looks(page, name, size)
                if not name.startswith("api-"):  # the vendors' pages: long, and not ours to lay out
                    save_screenshot(page, f"site-{name}-{size}")
        page.emulate_media(color_scheme="dark")
        offline.open(pages["viewer"])
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(13, 17, 23)", background
        page.wait_for_selector("[data-viewer][data-ready]", state="attached", timeout=15_000)
        check_board(page, "phone, dark")
        assert page.evaluate(LOW_CONTRAST, SECONDARY_TEXT) == [], "viewer, dark: text too faint"
        save_screenshot(page, "site-viewer-phone-dark")
        offline.open(pages["training-run"])
        page.wait_for_selector("[data-training-run][data-detail-loaded]", state="attached")
        assert page.evaluate(LOW_CONTRAST, SECONDARY_TEXT) == [], "training run, dark: text too faint"
        save_screenshot(page, "site-training-run-phone-dark")

        offline.failed = [
            line for line in offline.failed if not (line.startswith("404 ") and line.endswith(race))
        ]
        offline.assert_stayed_offline()
        unexpected = [e for e in errors if not ("404" in e and race in e)]
        assert unexpected == [], unexpected


@pytest.fixture
def local_replay(tmp_path: Path) -> Path:
    """The replay `arena play podracing builtin:runner builtin:blocker` writes (played in a thread
    of its own: the browser's driver keeps an event loop running in this one)."""
    game = get_game("podracing")
    settings = options.local_settings()
    bots = ["builtin:runner", "builtin:blocker"]
    specs = parse_bots(game, bots, [], max_chars=settings.hosted_code_max_chars)
    with ThreadPoolExecutor(1) as pool:
        played = pool.submit(local_play.play, game, specs, 3, {"laps": 1}, settings).result()
    path = tmp_path / "replay-podracing-3.json"
    path.write_bytes(encode(played.played.replay))
    return path


@pytest.mark.browser
def test_arena_view_names_the_players(browser: Browser, local_replay: Path) -> None:
    stored = json.loads(local_replay.read_bytes())
    assert stored["players"] == [
        {"name": "builtin:runner", "bot": "builtin:runner"},
        {"name": "builtin:blocker", "bot": "builtin:blocker"},
    ]
    app = standalone_viewer_app(local_replay)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 15
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        with offline_page(browser, f"http://127.0.0.1:{port}") as offline:
            page = offline.open("/")
            page.wait_for_selector("[data-viewer][data-ready]", state="attached", timeout=15_000)
            names = ["builtin:runner", "builtin:blocker"]
            expect(page.locator("[data-players] .viewer-name")).to_have_text(names)
            expect(page.locator("[data-panel] h3")).to_have_text(names)
            expect(page.locator("[data-result] [data-result-summary]")).to_contain_text("won")
            offline.assert_stayed_offline()
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_replay_names_an_http_seat_without_its_credentials() -> None:
    """A replay is a file people share: the URL it names a seat by keeps no password or token."""
    spec = BotSpec(BotKindArg.HTTP, "https://user:pw@bots.example:8443/racer?token=x#top")
    assert local_play.seat_label(spec) == "https://bots.example:8443/racer"
    assert local_play.seat_label(BotSpec(BotKindArg.PYTHON, "my_bot.py")) == "my_bot.py"
