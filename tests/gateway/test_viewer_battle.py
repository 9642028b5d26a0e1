"""The battle view of the replay viewer in headless Chromium: a finished match stored by the gateway
plays, its event markers jump to their frame, `?t=` opens at a frame, the field-of-view overlay
toggles, a 10v10 replay opens through `/view?src=`, and a replay carrying whatever a bot may send
(markup in signals, odd orders, oversized memory, missing frames) is shown as text without errors."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Browser, Page
from sqlalchemy.orm import Session

from shared.games.battle.bots import BOTS
from shared.games.battle.config import SIGNAL_WORDS, BattleConfig
from shared.games.battle.game import BattleGame
from shared.games.replay import play_local
from tests.support.browser import launch_chromium, offline_page, save_screenshot
from tests.support.environment import ROOT
from tests.support.stored_matches import store_finished_match

BATTLE_JS = ROOT / "services" / "gateway" / "web" / "static" / "viewer" / "battle.js"
READY = "() => window.arenaViewer && window.arenaViewer.ready === true"
COUNTER = "[data-turn-counter]"
"""Turns shown / the last turn; its `data-frame` is the frame index (two frames a turn)."""
CANVAS = "[data-viewer-canvas]"
HOSTILE = '<img src=x onerror="window.pwned=1">'


@dataclass
class BattleMatches:
    small: str
    """3v3, aggressive against defensive: every kind of event happens."""
    small_frames: int
    small_turns: int
    big: str
    """10v10, aggressive against sniper: hundreds of shots."""
    hostile: str
    """The small replay with untrusted data in every field a bot chooses, and frames missing."""


def hostile_replay(replay: dict[str, Any]) -> dict[str, Any]:
    """`replay` as a careless or malicious bot and a truncated store would leave it."""
    out = copy.deepcopy(replay)
    odd_orders: list[Any] = [
        {"signal": {"word": HOSTILE, "values": [HOSTILE, 1e308]}, "move": "north", "turn": "<b>"},
        {"fire": [None, 1], "dodge": HOSTILE, HOSTILE: HOSTILE},
        HOSTILE,
        [1, 2, 3],
        None,
    ]
    for index, turn in enumerate(out["turns"]):
        actions = turn["actions"]
        actions[0] = {
            "units": {"p0u0": odd_orders[index % len(odd_orders)], "p1u0": {"move": "stop"}, HOSTILE: {}},
            "memory": [HOSTILE] if index % 2 else {"note": HOSTILE * 2},
        }
        if index % 7 == 3:
            actions[1] = HOSTILE
        if index % 11 == 5:
            actions[1] = None
            turn["dropped"] = [1]
    frames = out["frames"]
    out["frames"] = frames[: len(frames) // 3] + frames[-1:]
    out["truncated"] = {"actions": 3, "frames": len(frames) - len(out["frames"])}
    out["events"].append({"turn": 1, "kind": HOSTILE, "player": 0, "data": {"unit": HOSTILE}})
    return out


@pytest.fixture(scope="module")
def battle_matches(client: TestClient, make_user: Any, database_url: str) -> BattleMatches:  # noqa: ARG001 (requested for its side effect)
    from shared.db.session import get_sessionmaker

    game = BattleGame()
    small = play_local(game, 1, [BOTS["aggressive"], BOTS["defensive"]])
    big = play_local(game, 7, [BOTS["aggressive"], BOTS["sniper"]], {"units_per_player": 10})
    kinds = {event["kind"] for event in small["events"]}
    assert {"shot", "hit", "kill", "death", "dodge"} <= kinds, kinds
    owner, other = make_user("general"), make_user("marshal")
    session: Session = get_sessionmaker()()
    try:
        ids = [
            store_finished_match(client, session, owner, other, replay).id
            for replay in (small, big, hostile_replay(small))
        ]
    finally:
        session.close()
    return BattleMatches(ids[0], len(small["frames"]), small["result"]["turns"], ids[1], ids[2])


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch_chromium() as chromium:
        yield chromium


def open_viewer(page: Page, base_url: str, path: str) -> Page:
    response = page.goto(base_url + path, wait_until="load")
    assert response is not None, f"{path}: {response and response.status}"
    assert response.ok, f"{path}: {response.status}"
    page.wait_for_function(READY, timeout=10_000)
    return page


def counter(page: Page) -> tuple[int, int]:
    """(turn shown, last turn)."""
    text = page.locator(COUNTER).inner_text()
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    assert match, text
    return int(match[1]), int(match[2])


def frame_shown(page: Page) -> int:
    return int(page.locator(COUNTER).get_attribute("data-frame") or "-1")


def redraw_after(page: Page, action: Callable[[], None]) -> None:
    """Do `action`, then wait until the player has drawn the canvas since."""
    drawn = page.evaluate("() => window.arenaViewer.player.drawCount")
    action()
    page.wait_for_function("n => window.arenaViewer.player.drawCount > n", arg=drawn, timeout=5_000)


def canvas_png(page: Page) -> bytes:
    return page.locator(CANVAS).screenshot()


def test_renderer_defaults_match_the_game_config() -> None:
    """The viewer fills in what a replay's config leaves out with BattleConfig's defaults."""
    source = BATTLE_JS.read_text()
    block = re.search(r"CONFIG_DEFAULTS = Object\.freeze\((\{.*?\})\);", source, re.S)
    assert block, "CONFIG_DEFAULTS not found in battle.js"
    defaults = json.loads(block[1])
    model = BattleConfig()
    assert defaults, "no defaults"
    for key, value in defaults.items():
        assert getattr(model, key) == pytest.approx(value), key
    words = re.search(r"SIGNAL_WORDS = Object\.freeze\((\[.*?\])\);", source, re.S)
    assert words
    assert json.loads(words[1]) == list(SIGNAL_WORDS)


@pytest.mark.browser
def test_finished_battle_plays_and_markers_jump(
    gateway_url: str, battle_matches: BattleMatches, browser: Browser
) -> None:
    with offline_page(browser, gateway_url) as viewer:
        page = open_viewer(viewer.page, gateway_url, f"/matches/{battle_matches.small}")
        assert counter(page) == (0, battle_matches.small_turns)
        assert frame_shown(page) == 0
        # Every kind of marker the issue names is on the timeline.
        kinds = set(page.eval_on_selector_all("button[data-marker]", "bs => bs.map(b => b.dataset.kind)"))
        assert {"shot", "hit", "kill", "death"} <= kinds, kinds
        # Each unit has a row in the side panel, all alive at the start.
        assert page.locator("[data-panel] tr[data-unit]").count() == 6
        before = canvas_png(page)
        save_screenshot(page, "viewer-battle-start")

        page.locator('[data-action="play"]').click()
        page.wait_for_function(
            f"() => parseInt(document.querySelector('{COUNTER}').textContent) >= 5", timeout=5_000
        )
        page.locator('[data-action="play"]').click()  # pause
        assert canvas_png(page) != before, "the canvas did not change while playing"
        save_screenshot(page, "viewer-battle-playing")

        kill = page.locator('button[data-marker][data-kind="kill"]').first
        frame = int(kill.get_attribute("data-frame") or "-1")
        kill.click()
        assert frame_shown(page) == frame
        # On the kill's frame the victim is dead in the panel and listed under the kills.
        page.wait_for_function("() => document.querySelector('[data-panel] tr.battle-dead') !== null")
        assert page.locator("[data-panel] .battle-feed li").count() >= 1
        save_screenshot(page, "viewer-battle-kill")

        death = page.locator('button[data-marker][data-kind="death"]').last
        frame = int(death.get_attribute("data-frame") or "-1")
        death.click()
        assert frame_shown(page) == frame
        viewer.assert_stayed_offline()


@pytest.mark.browser
def test_frame_link_and_fov_overlay(
    gateway_url: str, battle_matches: BattleMatches, browser: Browser
) -> None:
    with offline_page(browser, gateway_url) as viewer:
        page = open_viewer(viewer.page, gateway_url, f"/matches/{battle_matches.small}?t=30")
        # `?t=` counts turns: turn 30 is the frame at tick 30 * ticks_per_turn (two frames a turn).
        assert counter(page)[0] == 30
        assert frame_shown(page) == 60
        link = page.locator("[data-frame-link]").get_attribute("href") or ""
        assert link.endswith("t=30"), link
        fov = page.locator('input[type=checkbox][data-overlay="fov"]')
        assert fov.is_checked()
        with_fov = canvas_png(page)
        save_screenshot(page, "viewer-battle-fov-on")
        redraw_after(page, fov.uncheck)
        without_fov = canvas_png(page)
        save_screenshot(page, "viewer-battle-fov-off")
        assert without_fov != with_fov, "hiding the field of view did not change the canvas"
        redraw_after(page, fov.check)
        assert canvas_png(page) == with_fov, "the same frame with the same overlays drew differently"
        viewer.assert_stayed_offline()


@pytest.mark.browser
def test_ten_a_side_replay_through_view_src(
    gateway_url: str, battle_matches: BattleMatches, browser: Browser
) -> None:
    with offline_page(browser, gateway_url) as viewer:
        page = open_viewer(viewer.page, gateway_url, f"/view?src=/api/v1/matches/{battle_matches.big}/replay")
        assert page.locator("[data-panel] tr[data-unit]").count() == 20
        # Hundreds of shots, but a timeline a person can still use.
        markers = page.locator("button[data-marker]").count()
        shots = page.locator('button[data-marker][data-kind="shot"]').count()
        assert 0 < shots <= 48, (shots, markers)
        assert markers <= 200, (shots, markers)
        page.select_option("select[data-speed]", "16")
        page.keyboard.press("Space")
        page.wait_for_function(
            f"() => parseInt(document.querySelector('{COUNTER}').textContent) >= 60", timeout=10_000
        )
        save_screenshot(page, "viewer-battle-10v10")
        viewer.assert_stayed_offline()


@pytest.mark.browser
def test_untrusted_replay_data_is_shown_as_text(
    gateway_url: str, battle_matches: BattleMatches, browser: Browser
) -> None:
    with offline_page(browser, gateway_url) as viewer:
        page = open_viewer(viewer.page, gateway_url, f"/matches/{battle_matches.hostile}?t=5")
        last = page.evaluate("() => window.arenaViewer.player.lastFrame")
        for frame in (5, last - 1, last):
            page.evaluate(f"() => window.arenaViewer.player.setFrame({frame})")
            page.wait_for_function(f"() => document.querySelector('{COUNTER}').dataset.frame === '{frame}'")
            page.wait_for_timeout(150)
        # Frame 2 shows turn 0's orders, the first odd ones.
        page.evaluate("() => window.arenaViewer.player.setFrame(2)")
        page.wait_for_function("() => document.querySelector('[data-panel] .battle-note') !== null")
        panel = page.locator("[data-panel]").inner_text()
        assert "truncated" in panel
        assert "signal <img" in panel, panel  # the bot's text, as text
        assert page.locator("[data-panel] img").count() == 0
        assert page.evaluate("() => window.pwned") is None
        page.keyboard.press("Space")
        page.wait_for_timeout(300)
        save_screenshot(page, "viewer-battle-hostile")
        viewer.assert_stayed_offline()
