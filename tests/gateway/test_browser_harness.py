"""The offline page's own judgement: a fetch the browser cancels because its page was left is no
failure, whichever of the two events the browser reports first; a fetch aborted while its page is
still showing is one."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Browser

from tests.support.browser import launch_chromium, offline_page

pytestmark = pytest.mark.browser

PAGES = {
    "/leave": "<script>fetch('/slow'); setTimeout(() => { location.href = '/done' }, 150)</script>",
    "/abort": (
        "<script>const c = new AbortController(); fetch('/slow', {signal: c.signal}).catch(() => {});"
        " setTimeout(() => c.abort(), 150)</script>"
    ),
    "/done": "<p>done</p>",
}


class SlowSite(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(2)
            body = b"late"
        elif self.path in PAGES:
            body = PAGES[self.path].encode()
        else:
            self.send_error(404)
            return
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the browser gave up on it

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowSite)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch_chromium() as chromium:
        yield chromium


def test_a_fetch_cut_off_by_leaving_its_page_is_no_failure(browser: Browser, site: str) -> None:
    with offline_page(browser, site) as offline:
        page = offline.open("/leave")
        page.wait_for_url("**/done")
        offline.assert_stayed_offline()


def test_a_fetch_aborted_while_its_page_shows_is_a_failure(browser: Browser, site: str) -> None:
    with offline_page(browser, site) as offline:
        page = offline.open("/abort")
        page.wait_for_timeout(400)
        with pytest.raises(AssertionError, match=r"ERR_ABORTED .*/slow"):
            offline.assert_stayed_offline()
