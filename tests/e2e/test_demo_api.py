"""The demo's API client rides out an outage of the platform under it (scripts/demo_api.py): 503s or
no answer at all are waited out, said once, and the demo goes on when the platform answers again;
if it never does, the call gives up after the configured wait with an error that says why (the
demo then exits 1). Against a fake gateway on loopback that is down when the test says so."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scripts.demo import parse_args
from scripts.demo_api import Api, ApiError, Outage, PlatformUnavailable
from shared.ports import free_port

DOWN = {"detail": "the database is unreachable; try again later"}


class FakeGateway(ThreadingHTTPServer):
    """Answers `{"items": []}` to everything, or 503 with Retry-After while `down`; with
    `hang_up`, closes the connection without an answer instead."""

    daemon_threads = True

    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.down = False
        self.hang_up = False
        self.requests = 0


class _Handler(BaseHTTPRequestHandler):
    server: FakeGateway

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def _answer(self) -> None:
        self.server.requests += 1
        if self.server.hang_up:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        answer: tuple[int, Mapping[str, object]] = (503, DOWN) if self.server.down else (200, {"items": []})
        status, body = answer
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        if status == 503:
            self.send_header("Retry-After", "5")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_: object) -> None:
        pass


def _serve(port: int) -> FakeGateway:
    server = FakeGateway(port)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


@pytest.fixture
def gateway() -> Iterator[FakeGateway]:
    server = _serve(free_port())
    yield server
    server.shutdown()
    server.server_close()


def _api(port: int, said: list[str], wait_s: float = 30.0) -> Api:
    return Api(f"http://127.0.0.1:{port}", "key", Outage(wait_s, said.append))


def test_503s_are_waited_out_said_once_and_the_demo_goes_on(gateway: FakeGateway) -> None:
    said: list[str] = []
    api = _api(gateway.server_address[1], said)
    gateway.down = True
    threading.Timer(1.0, lambda: setattr(gateway, "down", False)).start()  # back before the third try

    assert api.get("/matches") == {"items": []}
    assert api.with_key("other").get("/bots") == {"items": []}

    assert gateway.requests >= 4, "it kept asking"
    assert len(said) == 2, said
    assert "unavailable" in said[0]
    assert "503: the database is unreachable" in said[0]
    assert said[1].strip().startswith("the platform answers again")


def test_a_gateway_that_is_not_there_yet_is_waited_for() -> None:
    said: list[str] = []
    port = free_port()
    started: list[FakeGateway] = []
    threading.Timer(0.75, lambda: started.append(_serve(port))).start()
    try:
        assert _api(port, said).get("/matches") == {"items": []}
    finally:
        for server in started:
            server.shutdown()
            server.server_close()
    assert len(said) == 2, said
    assert "ConnectError" in said[0], said


def test_a_platform_that_never_returns_ends_the_wait_with_a_clear_error(gateway: FakeGateway) -> None:
    said: list[str] = []
    gateway.down = True
    started = time.monotonic()
    with pytest.raises(PlatformUnavailable, match=r"unavailable for \d+ s .*giving up .*--outage-wait"):
        _api(gateway.server_address[1], said, wait_s=1.0).get("/matches")
    assert 1.0 <= time.monotonic() - started < 10
    assert len(said) == 1, said
    assert issubclass(PlatformUnavailable, ApiError), "the demo's main ends on ApiError: exit 1"


def test_a_post_whose_answer_was_lost_is_not_sent_again(gateway: FakeGateway) -> None:
    """It may have been carried out: sending it again could register a bot twice."""
    gateway.hang_up = True
    with pytest.raises(ApiError, match="POST /bots"):
        _api(gateway.server_address[1], []).post("/bots", {"name": "x"})
    assert gateway.requests == 1


def test_the_wait_is_a_demo_option() -> None:
    assert parse_args([]).outage_wait == 300
    assert parse_args(["--outage-wait", "30"]).outage_wait == 30
