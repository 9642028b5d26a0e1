"""The front page in headless Chromium while a real worker plays a match: the live-matches table gets
the match's row when it starts and loses it when it ends, and the ticker shows the result with both
bots, their ranks and rating changes, linking to the match."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from shared.db.models import Bot
from shared.db.session import session_scope
from shared.matches import enqueue_match
from shared.states import MatchStatus
from tests.support.browser import launch_chromium, offline_page, save_screenshot
from tests.support.match_runner import queue_match, wait_for_match
from tests.support.processes import ManagedProcess

RECORD_LIVE_ROWS = """() => {
  window.__liveRows = [];
  new MutationObserver((changes) => {
    for (const change of changes)
      for (const node of change.addedNodes)
        if (node.dataset && node.dataset.matchId) window.__liveRows.push(node.dataset.matchId);
  }).observe(document.getElementById("live-matches"), {childList: true});
}"""


@pytest.mark.browser
def test_the_front_page_ticker_shows_a_match_finishing(
    gateway_url: str,
    worker: ManagedProcess,
    two_bots: list[uuid.UUID],
) -> None:
    with session_scope() as session:
        names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(two_bots))).tuples().all())
    match_id = queue_match(two_bots, seed=3, send=False)
    with launch_chromium() as browser, offline_page(browser, gateway_url) as offline:
        page = offline.open("/")
        page.wait_for_selector("[data-ticker][data-ticker-state=open]", state="attached", timeout=10_000)
        page.evaluate(RECORD_LIVE_ROWS)
        enqueue_match(match_id)
        line = page.locator(f"[data-ticker] li[data-match-id='{match_id}']")
        line.wait_for(timeout=60_000)
        text = line.inner_text()
        assert all(name in text for name in names.values()), text
        assert "(#1, +" in text or "(#1, \u2212" in text, text  # rank and rating change
        assert line.locator(f"a[href='/matches/{match_id}']").count() == 1
        hrefs = line.locator("a[href^='/bots/']").evaluate_all("links => links.map(a => a.pathname)")
        assert sorted(hrefs) == sorted(f"/bots/{bot_id}" for bot_id in two_bots)
        assert str(match_id) in page.evaluate("window.__liveRows"), "the row appeared while it played"
        assert page.locator(f"#live-matches tr[data-match-id='{match_id}']").count() == 0
        save_screenshot(page, "front-page-ticker")
        offline.assert_stayed_offline()
    assert wait_for_match(match_id, worker).status == MatchStatus.FINISHED
