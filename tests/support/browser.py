"""Headless Chromium (Debian's `/usr/bin/chromium`, driven by Playwright's Python package; never
`playwright install`) for tests that look at pages the way a person does, with the network cut off.

Two walls keep a page on this machine (a third, the page's own Content-Security-Policy, is what
the gateway adds; it is checked not to refuse the gateway's own content):
- Chromium resolves host names only from its own rules: `arena.test` is 127.0.0.1 and every other
  name fails without a DNS query (`--host-resolver-rules`);
- `OfflinePage` lets a request through only to the gateway's origin; every other one is aborted
  and recorded, so a test can assert that nothing else was even attempted.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Frame, Page, Request, Response, Route, sync_playwright
from playwright.sync_api import Error as PlaywrightError

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
GATEWAY_ALIAS = "arena.test"
"""A host name that is not "localhost" (Swagger UI treats those differently) and that Chromium
itself maps to 127.0.0.1."""
RESOLVER_RULES = f"MAP {GATEWAY_ALIAS} 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
NOT_NETWORK = ("data", "blob", "about")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("ARENA_TEST_ARTIFACTS", ROOT / "test-artifacts"))
"""Where browser tests keep their screenshots (`test-artifacts/screenshots/`, not committed)."""


def chromium_executable() -> str:
    """The browser to drive. Missing where it could be installed (root with apt-get: `make
    system-deps` does it) or in CI, that is a failure; only where it cannot be installed is it a skip."""
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    installable = os.geteuid() == 0 and shutil.which("apt-get") is not None
    if installable or os.environ.get("CI"):
        pytest.fail(
            f"{CHROMIUM} is missing: run `make system-deps` (apt-get install chromium)", pytrace=False
        )
    pytest.skip(f"{CHROMIUM} is missing and cannot be installed here (needs root and apt-get)")


@contextmanager
def launch_chromium() -> Iterator[Browser]:
    executable = chromium_executable()
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=executable,
                headless=True,
                args=[f"--host-resolver-rules={RESOLVER_RULES}", "--no-proxy-server"],
            )
        except PlaywrightError as exc:
            pytest.fail(f"cannot start {executable}: {exc}", pytrace=False)
        try:
            yield browser
        finally:
            browser.close()


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname or "", parts.port


class OfflinePage:
    """A fresh browser context whose pages may talk to `base_url`'s origin only. Records what was
    blocked, responses that failed (4xx/5xx), and uncaught script errors."""

    def __init__(self, browser: Browser, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.allowed = origin(self.base_url)
        self.blocked: list[str] = []
        self.failed: list[str] = []
        self.script_errors: list[str] = []
        self.context = browser.new_context(service_workers="block")
        self.context.route("**/*", self._route)
        # Context-wide, so pages the first one opens (popups) are watched too.
        self.context.on("response", self._response)
        self.context.on("request", self._request)
        self.context.on("requestfinished", self._request_finished)
        self.context.on("requestfailed", self._request_failed)
        self.navigations = 0
        """Main-frame navigations so far: a request still in flight when its page is left is
        cancelled by the browser (net::ERR_ABORTED), which is no failure of the page."""
        self._started_at: dict[Request, int] = {}
        self._aborted: list[tuple[int, str]] = []
        self.context.on("weberror", lambda error: self.script_errors.append(str(error.error)))
        # What a page's Content-Security-Policy refused: never sent, but the policy must not have
        # refused any of the gateway's own scripts, styles or images.
        self.policy_refusals: list[tuple[str, str]] = []
        self.context.expose_function(
            "__arenaPolicyViolation", lambda uri, directive: self.policy_refusals.append((uri, directive))
        )
        self.context.add_init_script(
            "document.addEventListener('securitypolicyviolation',"
            " e => window.__arenaPolicyViolation(e.blockedURI, e.effectiveDirective))"
        )
        self.page: Page = self.context.new_page()
        self.page.on("framenavigated", self._navigated)

    def _route(self, route: Route) -> None:
        url = route.request.url
        if origin(url) == self.allowed or urlsplit(url).scheme in NOT_NETWORK:
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("internetdisconnected")

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.url}")

    def _navigated(self, frame: Frame) -> None:
        if frame == self.page.main_frame:
            self.navigations += 1

    def _request(self, request: Request) -> None:
        self._started_at[request] = self.navigations

    def _request_finished(self, request: Request) -> None:
        self._started_at.pop(request, None)

    def _request_failed(self, request: Request) -> None:
        # Aborted by `_route` or refused by the page's policy (recorded by its own listener).
        if request.url in self.blocked or request.failure == "csp":
            return
        started_at = self._started_at.pop(request, self.navigations)
        if request.failure == "net::ERR_ABORTED":
            # Judged later: the browser may report the abort before the navigation that caused it.
            # Any kind of request: a fetch, but also the favicon the browser asks for by itself,
            # is cancelled when its page is left.
            self._aborted.append((started_at, f"{request.failure} {request.url}"))
            return
        self.failed.append(f"{request.failure} {request.url}")

    def aborted_without_navigation(self) -> list[str]:
        """Requests aborted while their page was still showing: no navigation followed their start."""
        return [line for started_at, line in self._aborted if started_at >= self.navigations]

    def open(self, path: str) -> Page:
        response = self.page.goto(self.base_url + path, wait_until="load")
        assert response is not None, f"{path}: {response and response.status}"
        assert response.ok, f"{path}: {response.status}"
        return self.page

    def assert_stayed_offline(self) -> None:
        """Nothing but the gateway was asked for anything, and everything it was asked for loaded."""
        self.page.wait_for_load_state("networkidle")
        assert self.blocked == [], f"requests to other hosts: {self.blocked}"
        failed = self.failed + self.aborted_without_navigation()
        assert failed == [], f"failed requests: {failed}"
        assert self.script_errors == [], f"script errors: {self.script_errors}"
        own = [
            (uri, directive)
            for uri, directive in self.policy_refusals
            if origin(uri) == self.allowed or urlsplit(uri).scheme not in ("http", "https")
        ]
        assert own == [], f"the page's Content-Security-Policy refused its own content: {own}"

    def close(self) -> None:
        self.context.close()


@contextmanager
def offline_page(browser: Browser, base_url: str) -> Iterator[OfflinePage]:
    page = OfflinePage(browser, base_url)
    try:
        yield page
    finally:
        page.close()


def save_screenshot(page: Page, name: str) -> Path:
    """Keep a screenshot as a test artefact (`test-artifacts/screenshots/<name>.png`) and return its
    path; the name is reduced to a safe file name."""
    folder = ARTIFACTS / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") + ".png")
    page.screenshot(path=str(path), full_page=True)
    return path
