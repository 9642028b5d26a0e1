"""The interactive API docs work with no internet: Swagger UI (`/docs`) and ReDoc (`/redoc`) load
every asset from the gateway itself and render our API in a real browser whose every request to
another host is blocked and recorded.

The pages are opened both at 127.0.0.1 and at a plain host name mapped to it, because Swagger UI
behaves differently on "localhost" addresses (it skips its online validator badge there)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.support.browser import GATEWAY_ALIAS, launch_chromium, offline_page

RENDER_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch_chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def spec(gateway_url: str) -> dict[str, Any]:
    answer = httpx.get(f"{gateway_url}/openapi.json", timeout=10)
    assert answer.status_code == 200
    document: dict[str, Any] = answer.json()
    return document


@pytest.fixture(params=["127.0.0.1", GATEWAY_ALIAS])
def docs_base(request: pytest.FixtureRequest, gateway_url: str) -> str:
    return gateway_url.replace("127.0.0.1", request.param)


def operations(spec: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in spec["paths"].items() for method in item}


@pytest.mark.browser
def test_swagger_ui_renders_every_operation_offline(
    browser: Browser, docs_base: str, spec: dict[str, Any]
) -> None:
    with offline_page(browser, docs_base) as offline:
        page = offline.open("/docs")
        blocks = page.locator(".swagger-ui .opblock")
        blocks.first.wait_for(state="visible", timeout=RENDER_TIMEOUT_MS)
        expect(page.locator(".swagger-ui .info .title")).to_contain_text(spec["info"]["title"])
        rendered = blocks.evaluate_all(
            """blocks => blocks.map(b => [
                b.querySelector('.opblock-summary-method').textContent,
                b.querySelector('.opblock-summary-path').dataset.path,
            ])"""
        )
        assert {tuple(op) for op in rendered} == operations(spec)
        expect(page.locator(".swagger-ui .opblock-summary-path").first).to_be_visible()
        offline.assert_stayed_offline()


@pytest.mark.browser
def test_swagger_oauth2_redirect_hands_the_token_back(browser: Browser, gateway_url: str) -> None:
    """The redirect page Swagger UI opens after an OAuth2 login passes what it got to its opener."""
    with offline_page(browser, gateway_url) as offline:
        page = offline.open("/docs")
        page.locator(".swagger-ui .opblock").first.wait_for(state="visible", timeout=RENDER_TIMEOUT_MS)
        configured = page.evaluate("ui.getConfigs().oauth2RedirectUrl")
        assert configured == f"{gateway_url}/docs/oauth2-redirect"
        handed_back = page.evaluate(
            """() => new Promise(resolve => {
                window.swaggerUIRedirectOauth2 = {
                    state: "s1",
                    redirectUrl: location.origin + "/docs/oauth2-redirect",
                    auth: {schema: {get: () => "implicit"}},
                    callback: result => resolve([result.token.access_token, result.isValid]),
                    errCb: error => resolve(["error", error.message]),
                };
                window.open("/docs/oauth2-redirect#access_token=t0k3n&state=s1");
            })"""
        )
        assert handed_back == ["t0k3n", True]
        offline.assert_stayed_offline()


@pytest.mark.browser
def test_redoc_renders_offline(browser: Browser, docs_base: str, spec: dict[str, Any]) -> None:
    with offline_page(browser, docs_base) as offline:
        page = offline.open("/redoc")
        title = f"{spec['info']['title']} ({spec['info']['version']})"
        expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible(timeout=RENDER_TIMEOUT_MS)
        anchors = [
            (f"tag/{op['tags'][0]}/operation/{op['operationId']}", op["summary"])
            for item in spec["paths"].values()
            for op in item.values()
        ]
        first, first_summary = anchors[0]
        expect(page.locator(f'h2:has(a[href="#{first}"])')).to_have_text(first_summary)
        expect(page.locator(f'h2:has(a[href="#{first}"])')).to_be_visible()
        for anchor, summary in anchors:
            expect(page.locator(f'h2:has(a[href="#{anchor}"])')).to_have_text(summary)
        offline.assert_stayed_offline()


@pytest.mark.browser
def test_the_guard_blocks_and_records_other_hosts(browser: Browser, gateway_url: str) -> None:
    """The checks above would catch a page reaching out: a request elsewhere is aborted and listed."""
    with offline_page(browser, gateway_url) as offline:
        offline.open("/health")  # a page without a Content-Security-Policy, which would refuse first
        offline.page.evaluate("fetch('http://203.0.113.7/probe').catch(() => null)")
        offline.page.evaluate("fetch('https://cdn.example.invalid/x.js').catch(() => null)")
        assert offline.blocked == ["http://203.0.113.7/probe", "https://cdn.example.invalid/x.js"]


def test_docs_pages_point_only_at_the_gateway(gateway_url: str) -> None:
    """No URL in the docs pages leaves the gateway: no CDN, no Google fonts, no validator."""
    for path in ("/docs", "/redoc"):
        html = httpx.get(f"{gateway_url}{path}", timeout=10).text
        assert "http://" not in html, html
        assert "https://" not in html, html
        assert "fonts.googleapis" not in html
    assert '"validatorUrl": null' in httpx.get(f"{gateway_url}/docs", timeout=10).text
    redirect = httpx.get(f"{gateway_url}/docs/oauth2-redirect", timeout=10)
    assert redirect.status_code == 200
    assert "swaggerUIRedirectOauth2" in redirect.text
