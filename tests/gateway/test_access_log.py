"""The gateway's own access log: one line per request with its duration, written in batches that are
never more than the flush interval late, and uvicorn's duplicate line quieted."""

from __future__ import annotations

import io
import logging
import secrets
import time
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from services.gateway.access_log import (
    UVICORN_ACCESS_LOGGER,
    BatchedLineHandler,
    install_access_log,
    remove_access_log,
)
from services.gateway.metrics import GatewayMetrics, MetricsMiddleware


async def _ok(_request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok", status_code=201)


async def _broken(_request: Request) -> PlainTextResponse:
    raise RuntimeError("boom")


def _app() -> MetricsMiddleware:
    routes = [Route("/ok/{rest:path}", _ok), Route("/broken", _broken)]
    return MetricsMiddleware(Starlette(routes=routes), metrics=GatewayMetrics(), access_log=True)


@pytest.fixture
def installed() -> Iterator[tuple[io.StringIO, BatchedLineHandler]]:
    stream = io.StringIO()
    handler = install_access_log(flush_interval_s=60.0, stream=stream)
    try:
        yield stream, handler
    finally:
        remove_access_log(handler)
        logging.getLogger(UVICORN_ACCESS_LOGGER).setLevel(logging.NOTSET)


def test_one_line_per_request_with_status_and_duration(
    installed: tuple[io.StringIO, BatchedLineHandler],
) -> None:
    stream, handler = installed
    with TestClient(_app(), raise_server_exceptions=False) as client:
        assert client.get("/ok/a?limit=5").status_code == 201
        assert client.get("/broken").status_code == 500
    handler.flush()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert '"GET /ok/a?limit=5 HTTP/1.1" 201 ' in lines[0]
    assert lines[0].endswith(" ms")
    assert '"GET /broken HTTP/1.1" 500 ' in lines[1]


def test_a_line_break_in_the_path_cannot_forge_a_line(
    installed: tuple[io.StringIO, BatchedLineHandler],
) -> None:
    stream, handler = installed
    with TestClient(_app()) as client:
        client.get("/ok/x%0AINFO:%20forged")
    handler.flush()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert "/ok/x%0AINFO%3A%20forged" in lines[0], lines


def test_lines_wait_for_the_batch_and_warnings_do_not(
    installed: tuple[io.StringIO, BatchedLineHandler],
) -> None:
    stream, handler = installed
    log = logging.getLogger("arena.access")
    log.info("first")
    assert stream.getvalue() == ""  # held: the interval (60 s) has not passed, the batch is not full
    log.warning("second")
    assert stream.getvalue().splitlines() == ["INFO:     first", "WARNING:     second"]
    for number in range(handler.batch_lines):
        log.info("line %d", number)
    assert len(stream.getvalue().splitlines()) == 2 + handler.batch_lines  # a full batch is written


def test_a_quiet_server_still_writes_within_the_interval() -> None:
    stream = io.StringIO()
    handler = install_access_log(flush_interval_s=0.1, stream=stream)
    try:
        logging.getLogger("arena.access").info("alone")
        deadline = time.monotonic() + 5
        while "alone" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "alone" in stream.getvalue()
    finally:
        remove_access_log(handler)


def test_closing_writes_what_is_held_and_uvicorn_is_quieted() -> None:
    stream = io.StringIO()
    handler = install_access_log(flush_interval_s=60.0, stream=stream)
    assert not logging.getLogger(UVICORN_ACCESS_LOGGER).isEnabledFor(logging.INFO)
    logging.getLogger("arena.access").info("held")
    remove_access_log(handler)
    assert stream.getvalue() == "INFO:     held\n"
    logging.getLogger(UVICORN_ACCESS_LOGGER).setLevel(logging.NOTSET)


@pytest.mark.slow
@pytest.mark.usefixtures("client")
def test_the_real_server_logs_each_request_once() -> None:
    """The gateway as deployed (plain `uvicorn` command): our line, with its duration, and not
    uvicorn's own for the same request."""
    from shared.ports import free_port
    from tests.support.processes import PYTHON, ManagedProcess

    port = free_port()
    process = ManagedProcess(
        [PYTHON, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1", "--port", str(port)],
        "gateway-access-log",
        env={"ARENA_ACCESS_LOG_FLUSH_S": "0.2"},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        process.wait_http(f"{url}/health", timeout=60)
        token = secrets.token_hex(6)
        assert httpx.get(f"{url}/health?probe={token}", timeout=10).status_code == 200
        process.wait_until(lambda: token in process.log(), timeout=10, what="the access line")
        time.sleep(0.5)
        lines = [line for line in process.log().splitlines() if token in line]
        assert len(lines) == 1, lines
        assert f'"GET /health?probe={token} HTTP/1.1" 200 ' in lines[0]
        assert lines[0].endswith(" ms")
    finally:
        process.stop()
