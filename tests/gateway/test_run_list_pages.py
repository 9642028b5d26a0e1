"""The run list pages share one list (static/runs_list.js); what a kind adds on top still works in
Chromium: the evolution list's form starts a run and opens its page, and a refused run says why."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect

from tests.support.accounts import Account, unique
from tests.support.browser import launch_chromium, offline_page


@pytest.mark.browser
def test_the_evolution_list_form_starts_a_run_and_opens_its_page(
    gateway_url: str, client: TestClient, alice: Account
) -> None:
    name = unique("form-run")
    with launch_chromium() as browser, offline_page(browser, gateway_url) as offline:
        page = offline.open("/evolution")
        page.fill("form[data-key-form] input[name=api_key]", alice.key)
        page.click("form[data-key-form] button[type=submit]")
        page.wait_for_selector("[data-evolution-list][data-loaded]", state="attached", timeout=15_000)

        form = page.locator("form[data-create-form]")
        form.locator("input[name=name]").fill(name)
        form.locator("textarea[name=config]").fill("[]")
        form.locator("button[type=submit]").click()
        expect(page.locator("[data-run-message]")).to_contain_text("The config is not a JSON object")

        form.locator("textarea[name=config]").fill("{}")
        form.locator("button[type=submit]").click()
        page.wait_for_url(re.compile(r"/evolution/[0-9a-f-]{36}$"), timeout=15_000)
        run_id = page.url.rsplit("/", 1)[1]
        offline.assert_stayed_offline()

    run = client.get(f"/api/v1/evolution/runs/{run_id}", headers=alice.headers).json()
    assert run["name"] == name
    assert run["config"]["limits"]["max_generations"] == 10
