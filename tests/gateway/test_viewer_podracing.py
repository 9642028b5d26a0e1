"""The replay viewer with a podracing match, in headless Chromium: it opens a finished match,
plays (the canvas changes), jumps to event markers, opens `?t=` links, toggles overlays, shows the
side and result panels with the bots' names as links, works from a replay file (`/view?src=`, a
dropped file) and asks nothing of any other host."""

from __future__ import annotations

import gzip
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, Page, expect
from sqlalchemy.orm import Session

from shared.games.podracing.bots import runner
from shared.games.registry import get_game
from shared.games.replay import play_local
from tests.support.accounts import Account
from tests.support.browser import launch_chromium, offline_page, save_screenshot
from tests.support.stored_matches import StoredMatch, store_finished_match

READY = "[data-viewer][data-ready]"


@pytest.fixture(scope="module")
def race() -> dict[str, Any]:
    return play_local(get_game("podracing"), 7, [runner, runner])


@pytest.fixture
def finished_race(
    client: TestClient, alice: Account, bob: Account, db_session: Session, race: dict[str, Any]
) -> StoredMatch:
    return store_finished_match(client, db_session, alice, bob, json.loads(json.dumps(race)))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch_chromium() as chromium:
        yield chromium


def open_viewer(page: Page, base: str, path: str) -> Page:
    response = page.goto(base + path, wait_until="load")
    assert response is not None, path
    assert response.ok, path
    page.wait_for_selector(READY, state="attached", timeout=15_000)
    return page


def counter(page: Page) -> tuple[int, int]:
    """The turn counter: "turn / last turn" (a podracing frame is a turn)."""
    text = page.text_content("[data-turn-counter]") or ""
    match = re.fullmatch(r"(\d+) / (\d+)", text.strip())
    assert match, text
    return int(match[1]), int(match[2])


def canvas_png(page: Page) -> bytes:
    return page.locator("[data-viewer-canvas]").screenshot()


def test_match_page_and_replay_transport(client: TestClient, finished_race: StoredMatch) -> None:
    match_id = finished_race.id
    page = client.get(f"/matches/{match_id}")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "script-src" not in page.headers["content-security-policy"]
    assert 'data-status="finished"' in page.text
    assert f'data-match-id="{match_id}"' in page.text
    for bot in finished_race.bots:
        assert f'href="/bots/{bot["id"]}"' in page.text
    for missing in ("00000000-0000-0000-0000-000000000000", "not-a-uuid"):
        answer = client.get(f"/matches/{missing}")
        assert answer.status_code == 404
        assert answer.headers["content-type"].startswith("text/html")
    assert client.get("/view").status_code == 200

    url = f"/api/v1/matches/{match_id}/replay"
    zipped = client.get(url, headers={"Accept-Encoding": "gzip, deflate"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["content-type"] == "application/json"
    assert zipped.json() == finished_race.replay
    assert int(zipped.headers["content-length"]) < len(json.dumps(finished_race.replay)) / 3
    for refuses in ("identity", "gzip;q=0", "br"):
        plain = client.get(url, headers={"Accept-Encoding": refuses})
        assert "content-encoding" not in plain.headers, refuses
        assert plain.json() == finished_race.replay
    download = client.get(f"{url}?compressed=1", headers={"Accept-Encoding": "identity"})
    assert download.headers["content-type"] == "application/gzip"
    assert json.loads(gzip.decompress(download.content)) == finished_race.replay


@pytest.mark.browser
def test_podracing_viewer_in_a_browser(
    browser: Browser, gateway_url: str, finished_race: StoredMatch
) -> None:
    replay = finished_race.replay
    last = len(replay["frames"]) - 1
    with offline_page(browser, gateway_url) as offline:
        page = open_viewer(offline.page, gateway_url, f"/matches/{finished_race.id}")
        assert counter(page) == (0, last)
        save_screenshot(page, "viewer-podracing-start")

        # Play: the canvas changes between two screenshots and the frame counter moves on.
        before = canvas_png(page)
        page.click('[data-action="play"]')
        time.sleep(0.8)
        after = canvas_png(page)
        assert before != after
        page.click('[data-action="play"]')
        assert counter(page)[0] > 0

        # Markers for each kind of event the race had; clicking one jumps to its frame.
        kinds = set(page.eval_on_selector_all("button[data-marker]", "bs => bs.map(b => b.dataset.kind)"))
        assert {"checkpoint", "collision", "boost"} <= kinds, kinds
        marker = page.locator('button[data-marker][data-kind="checkpoint"]').nth(2)
        frame = int(marker.get_attribute("data-frame") or -1)
        marker.click()
        assert counter(page) == (frame, last)
        first_checkpoint = next(e for e in replay["events"] if e["kind"] == "checkpoint")
        assert page.locator("button[data-marker][data-kind=checkpoint]").first.get_attribute(
            "data-frame"
        ) == str(first_checkpoint["turn"] + 1)
        save_screenshot(page, "viewer-podracing-marker")

        # Keyboard: arrows step, space plays, +/- change the speed.
        page.locator("[data-viewer-canvas]").click()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        assert counter(page)[0] == frame + 1
        page.keyboard.press("+")
        page.keyboard.press("+")
        expect(page.locator("select[data-speed]")).to_have_value("4")
        page.keyboard.press("-")
        expect(page.locator("select[data-speed]")).to_have_value("2")

        # The side panel: each pod's state and the action the bot sent, from the replay.
        step = frame + 1
        pods = replay["frames"][step]["pods"]
        panel = page.locator("[data-panel]")
        next_checkpoint = panel.locator('[data-panel-player="0"] td').nth(2)
        expect(next_checkpoint).to_have_text(str(pods[0]["next_checkpoint"]))
        expect(panel.locator('[data-timeout="1"]')).to_have_text(str(replay["frames"][step]["timeouts"][1]))
        action = json.loads(panel.locator('[data-action-json="0"]').text_content() or "")
        assert action == replay["turns"][step]["actions"][0]

        # The link to this frame opens there.
        link = page.locator("a[data-frame-link]")
        expect(link).to_have_attribute("href", f"/matches/{finished_race.id}?t={step}")

        # Overlays: turning the vectors off changes the picture of the same frame.
        with_vectors = canvas_png(page)
        page.locator('input[data-overlay="vectors"]').uncheck()
        assert canvas_png(page) != with_vectors
        page.locator('input[data-overlay="vectors"]').check()
        assert canvas_png(page) == with_vectors

        # The result panel: ranks, scores, every metric; bot names link to their pages.
        result = page.locator("[data-result]")
        for slot, bot in enumerate(finished_race.bots):
            name = result.locator(f'th[data-player="{slot}"] a')
            expect(name).to_have_attribute("href", f"/bots/{bot['id']}")
            expect(name).to_have_text(bot["name"])
        for metric in replay["result"]["players"][0]["metrics"]:
            expect(result.locator(f'tr[data-metric="{metric}"]')).to_have_count(1)
        expect(result.locator("a[data-download]")).to_have_attribute(
            "href", f"/api/v1/matches/{finished_race.id}/replay?compressed=1"
        )
        offline.assert_stayed_offline()

        page = open_viewer(page, gateway_url, f"/matches/{finished_race.id}?t=40")
        assert counter(page) == (40, last)
        save_screenshot(page, "viewer-podracing-deep-link")
        offline.assert_stayed_offline()


@pytest.mark.browser
def test_viewer_on_a_phone(browser: Browser, gateway_url: str, finished_race: StoredMatch) -> None:
    """One column on a narrow screen: nothing wider than the page."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    try:
        page = context.new_page()
        open_viewer(page, gateway_url, f"/matches/{finished_race.id}?t=10")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width
        box = page.locator("[data-viewer-canvas]").bounding_box()
        assert box is not None
        assert box["width"] > 300
        save_screenshot(page, "viewer-podracing-phone")
    finally:
        context.close()


@pytest.mark.browser
def test_viewer_for_a_replay_file(
    browser: Browser, gateway_url: str, finished_race: StoredMatch, tmp_path: Path
) -> None:
    """`/view?src=` (same origin only) and a dropped file, plain or gzipped."""
    last = len(finished_race.replay["frames"]) - 1
    src = f"/api/v1/matches/{finished_race.id}/replay"
    with offline_page(browser, gateway_url) as offline:
        page = open_viewer(offline.page, gateway_url, f"/view?src={src}&t=5")
        assert counter(page) == (5, last)
        expect(page.locator("[data-result] th[data-player='1']")).to_have_text("player 1")
        offline.assert_stayed_offline()

        page.goto(f"{gateway_url}/view?src=http://example.org/replay.json", wait_until="load")
        expect(page.locator("[data-viewer-status]")).to_contain_text("must come from this site")
        assert offline.blocked == []

        zipped = tmp_path / "race.json.gz"
        zipped.write_bytes(gzip.compress(json.dumps(finished_race.replay).encode()))
        page.goto(f"{gateway_url}/view", wait_until="load")
        page.locator("input[data-file]").set_input_files(str(zipped))
        page.wait_for_selector(READY, state="attached", timeout=15_000)
        assert counter(page) == (0, last)
        broken = tmp_path / "broken.json"
        broken.write_text('{"frames": []}')
        page.locator("input[data-file]").set_input_files(str(broken))
        expect(page.locator("[data-viewer-status]")).to_contain_text("broken.json is not a replay")
        save_screenshot(page, "viewer-file")
        offline.assert_stayed_offline()
