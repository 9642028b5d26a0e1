"""A running match in the viewer: a real Celery worker plays two HTTP bots (answering a little
slowly, so the match lasts a few seconds) while Chromium has `/matches/{id}` open. Frames arrive
live over `/ws/matches/{id}` with the live badge shown, and when the match ends the page turns into
the stored replay with its result."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect

from shared.games.replay import decompress
from shared.matches import enqueue_match
from shared.replay_store import load_replay
from shared.states import MatchStatus
from tests.support.bot_processes import RunningBot
from tests.support.browser import launch_chromium, offline_page, save_screenshot
from tests.support.match_runner import queue_match, start_worker, wait_for_match
from tests.support.processes import ManagedProcess

BOT_LATENCY_S = "0.05"


@pytest.fixture
def worker(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    process = start_worker("viewer-live")
    yield process
    process.stop()


def frame_counter(page: Page) -> tuple[int, int]:
    """The turn counter (a podracing frame is a turn)."""
    text = (page.text_content("[data-turn-counter]") or "").strip()
    found = re.fullmatch(r"(\d+) / (\d+)", text)
    assert found, text
    return int(found[1]), int(found[2])


@pytest.mark.browser
def test_a_running_match_plays_live_then_becomes_its_replay(
    gateway_url: str,
    worker: ManagedProcess,
    bot_factory: Callable[..., RunningBot],
    register_bot: Callable[..., uuid.UUID],
) -> None:
    bots = [register_bot(bot_factory("ok", "--latency", BOT_LATENCY_S)) for _ in range(2)]
    match_id = queue_match(bots, seed=11, send=False)
    with launch_chromium() as browser, offline_page(browser, gateway_url) as offline:
        page = offline.open(f"/matches/{match_id}")
        page.wait_for_selector("[data-viewer][data-ready]", state="attached", timeout=15_000)
        expect(page.locator("[data-live]")).to_be_visible()
        assert frame_counter(page) == (0, 0)  # queued: frame 0 only, from live.start
        expect(page.locator("[data-match-status]")).to_have_text("queued")

        enqueue_match(match_id)
        seen: list[int] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and page.locator("[data-live]").is_visible():
            seen.append(frame_counter(page)[1])
            time.sleep(0.05)
        save_screenshot(page, "viewer-live-finished")
        growing = sorted(set(seen))
        assert len(growing) >= 5, f"frames did not arrive turn by turn: {growing}"
        assert growing[-1] > 5, f"frames did not arrive turn by turn: {growing}"

        match = wait_for_match(match_id, worker)
        assert match.status == MatchStatus.FINISHED
        assert match.replay is not None
        frames = len(decompress(load_replay(match.replay))["frames"])
        expect(page.locator("[data-live]")).to_be_hidden()
        expect(page.locator("[data-turn-counter]")).to_have_text(f"{frames - 1} / {frames - 1}")
        expect(page.locator("[data-result] [data-result-summary]")).to_contain_text(f"{match.turns} turns")
        expect(page.locator("[data-result] a[data-download]")).to_have_count(1)
        expect(page.locator("[data-match-status]")).to_have_text("finished")
        offline.assert_stayed_offline()
