"""The evolution pages: server-side shells that carry no run data, 404 pages, the navigation, and
in Chromium (offline, on a real uvicorn gateway) a run page filled from the API with the owner's
key: the heat map, the lineage tree, a program's code and diff, the root's decisions, spend and
payoff, and an event written while the page is open appearing without a reload.

Runs are created through the API; what the evolver worker writes is inserted directly
(tests/support/evolution.py, seed_run), since no worker runs here.
"""

from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect

from shared.states import EvolutionEventKind
from tests.support.accounts import Account
from tests.support.browser import launch_chromium, offline_page, save_screenshot
from tests.support.evolution import CHILD_CODE, add_event, create_run, seed_run


def test_the_list_page_is_a_shell_with_a_create_form(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice)
    page = client.get("/evolution")
    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["content-security-policy"]
    html = page.text
    assert 'href="/evolution" aria-current="page"' in html
    assert 'data-api="/api/v1/evolution/runs"' in html
    assert "data-key-form hidden" in html
    assert "data-create-form hidden" in html
    assert '<option value="podracing">' in html
    assert '<option value="battle">' in html
    assert run["name"] not in html
    assert run["id"] not in html
    assert "/static/evolution_list.js?v=" in html


def test_every_page_links_to_evolution(client: TestClient) -> None:
    for path in ("/", "/training", "/games/podracing"):
        html = client.get(path).text
        assert 'href="/evolution"' in html, path
        assert 'href="/training"' in html, path


def test_a_run_page_is_a_shell_pointing_at_its_api(client: TestClient, alice: Account) -> None:
    run = create_run(client, alice, api_key="sk-page-" + uuid.uuid4().hex)
    seed_run(uuid.UUID(run["id"]))
    page = client.get(f"/evolution/{run['id']}")
    assert page.status_code == 200
    html = page.text
    assert f'data-api="/api/v1/evolution/runs/{run["id"]}"' in html
    for marker in (
        "data-heatmap",
        "data-lineage",
        "data-program-code",
        "data-program-diff",
        "data-decisions",
        "data-spend",
        "data-payoff",
        'data-control="stop"',
        'data-control="resume"',
    ):
        assert marker in html, marker
    assert "/static/evolution.js?v=" in html
    assert run["name"] not in html
    assert "p2" not in html
    assert "boost" not in html


@pytest.mark.parametrize("raw", ["not-a-run", str(uuid.UUID(int=9)), "0" * 500])
def test_an_unknown_run_gets_an_html_404_page(client: TestClient, raw: str) -> None:
    page = client.get(f"/evolution/{raw}")
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "There is no evolution run" in page.text
    assert len(page.text) < 20_000


@pytest.mark.browser
def test_the_run_page_in_a_browser_draws_everything_and_follows_new_events(
    gateway_url: str, client: TestClient, alice: Account
) -> None:
    run = create_run(client, alice, search={"islands": 2, "grid_bins": 5}, limits={"max_cost_usd": 1.0})
    seeded = seed_run(uuid.UUID(run["id"]))

    with launch_chromium() as browser, offline_page(browser, gateway_url) as offline:
        page = offline.open(f"/evolution/{run['id']}")
        expect(page.locator("[data-run-message]")).to_contain_text("Paste your API key")
        page.fill("form[data-key-form] input[name=api_key]", alice.key)
        page.click("form[data-key-form] button[type=submit]")
        root = "[data-evolution-run]"
        page.wait_for_selector(f'{root}[data-events-loaded="true"]', state="attached", timeout=15_000)
        expect(page.locator("[data-run-name]")).to_have_text(run["name"])
        expect(page.locator("[data-run-status]")).to_have_text("queued")
        expect(page.locator("[data-live-state]")).to_have_text("live")
        expect(page.locator("[data-best]")).to_have_text("p2")
        assert page.locator(root).get_attribute("data-grid-cells") == "2"
        assert page.locator(root).get_attribute("data-lineage-nodes") == "5"
        assert page.locator(root).get_attribute("data-generations") == "3"

        # The heat map and the tree were drawn with something on them.
        for selector in ("[data-heatmap]", "[data-lineage]"):
            painted = page.evaluate(
                """(selector) => {
                    const canvas = document.querySelector(selector);
                    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
                    let colored = 0;
                    for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 0) colored++;
                    return canvas.width > 0 && canvas.height > 0 && colored > 200;
                }""",
                selector,
            )
            assert painted, selector
        # Best and median: island 0 in generations 0 and 1, island 1 in generation 1.
        assert page.evaluate("() => window.arenaEvolution.chart.size") == 6

        # The best program is open: its code and its coloured diff against p1.
        expect(page.locator("[data-program-panel]")).to_have_attribute("data-program", "p2")
        expect(page.locator("[data-program-code]")).to_have_text(CHILD_CODE.rstrip("\n") + "\n")
        expect(page.locator("[data-program-diff] .diff-add")).to_have_count(2)
        expect(page.locator("[data-program-diff] .diff-del")).to_have_count(1)

        # A click on the tree's p1 node opens p1 (a seed: no diff).
        position = page.evaluate(
            "() => { const p = window.arenaEvolution.lineage.positions.get('p1'); return [p.x, p.y]; }"
        )
        page.locator("[data-lineage]").click(position={"x": position[0], "y": position[1]})
        expect(page.locator("[data-program-panel]")).to_have_attribute("data-program", "p1")
        expect(page.locator("[data-program-diff]")).to_contain_text("a seed")

        decisions = page.locator("[data-decisions] > li")
        expect(decisions).to_have_count(5)
        expect(page.locator('[data-decisions] li[data-kind="root_decision"]')).to_contain_text(
            "Start by mutating the seed towards boosting."
        )
        expect(page.locator('[data-decisions] li[data-kind="root_decision"]')).to_contain_text(
            "spawn_children"
        )
        expect(page.locator('[data-decisions] li[data-kind="parameters_changed"]')).to_contain_text(
            "0.3 \u2192 0.5"
        )
        expect(page.locator("[data-spend]")).to_contain_text("child-model")
        expect(page.locator("[data-spend-total]")).to_contain_text("of $1.00")
        expect(page.locator("[data-payoff] tr[data-program]")).to_have_count(3)
        expect(page.locator("[data-payoff] tr[data-program]").first).to_have_attribute("data-program", "p2")
        save_screenshot(page, "evolution-run")

        # Live: an event written now shows up without a reload.
        page.evaluate("() => { window.__sameDocument = true; }")
        new_id = add_event(
            seeded.run_id,
            EvolutionEventKind.ROOT_DECISION,
            2,
            {"reasoning": "Now try a blocker strategy on island 1.", "tool_calls": [], "rejected": []},
        )
        item = page.locator(f'[data-decisions] li[data-event-id="{new_id}"]')
        expect(item).to_contain_text("Now try a blocker strategy", timeout=10_000)
        expect(decisions.first).to_have_attribute("data-event-id", str(new_id))
        assert page.evaluate("() => window.__sameDocument === true")

        # Stop: the queued run stops at once and the page stops polling.
        page.click('[data-control="stop"]')
        expect(page.locator("[data-run-status]")).to_have_text("stopped")
        expect(page.locator("[data-live-state]")).to_have_text("not live")
        expect(page.locator('[data-control="resume"]')).to_be_enabled()
        offline.assert_stayed_offline()

        listing = offline.open("/evolution")
        listing.wait_for_selector("[data-evolution-list][data-loaded]", state="attached", timeout=15_000)
        expect(listing.locator(f'[data-runs] tr[data-run-id="{run["id"]}"]')).to_contain_text(run["name"])
        expect(listing.locator(f'[data-runs] tr[data-run-id="{run["id"]}"]')).to_contain_text("stopped")
        offline.assert_stayed_offline()
