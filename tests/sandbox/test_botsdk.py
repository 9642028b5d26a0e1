"""The SDK server over loopback TCP: signatures, bad requests, author errors, init, keep-alive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from shared.botsdk import make_server
from shared.protocol.signing import Signer
from tests.sandbox.conftest import turn_body

ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    def __init__(self) -> None:
        self.inits: list[dict[str, Any]] = []

    def init(self, config: dict[str, Any]) -> None:
        self.inits.append(config)

    def decide(self, observation: Any) -> Any:
        if observation.get("boom"):
            raise ValueError("kaboom")
        if observation.get("unserialisable"):
            return {1, 2}
        return {"seen": observation}


@pytest.fixture
def served(secret: str) -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder()
    server = make_server(recorder.decide, secret=secret, port=0, init=recorder.init)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}", recorder
    server.shutdown()
    server.server_close()


def signed(secret: str, body: bytes, ts: int | None = None) -> dict[str, str]:
    return Signer(secret).headers("msg-1", body, timestamp=ts)


def test_health_and_turn(served: tuple[str, Recorder], secret: str) -> None:
    url, recorder = served
    with httpx.Client(base_url=url) as client:
        health = client.get("/health", headers=signed(secret, b""))
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        for turn in range(3):
            body = turn_body({"n": turn}, turn=turn)
            response = client.post("/turn", content=body, headers=signed(secret, body))
            assert response.status_code == 200
            assert response.json() == {"action": {"seen": {"n": turn}}}
            assert response.headers.get("connection", "").lower() != "close"
    assert recorder.inits == [{"game": "test", "player": 0, "match_id": "m-1"}]


def test_unsigned_stale_and_forged_requests_get_401(served: tuple[str, Recorder], secret: str) -> None:
    url, _ = served
    body = turn_body({})
    with httpx.Client(base_url=url) as client:
        assert client.get("/health").status_code == 401
        assert client.post("/turn", content=body).status_code == 401
        stale = signed(secret, body, ts=int(time.time()) - 3600)
        assert client.post("/turn", content=body, headers=stale).status_code == 401
        forged = signed(secret, body)
        tampered = body.replace(b'"turn": 0', b'"turn": 9')
        assert client.post("/turn", content=tampered, headers=forged).status_code == 401
        other = Signer("whsec_" + "QUJD" * 12).headers("m", body)
        assert client.post("/turn", content=body, headers=other).status_code == 401


def test_bad_requests_get_4xx_and_the_server_survives(served: tuple[str, Recorder], secret: str) -> None:
    url, _ = served
    with httpx.Client(base_url=url) as client:
        for body in (b"not json", b"[1,2]", json.dumps({"protocol": 2, "observation": {}}).encode()):
            assert client.post("/turn", content=body, headers=signed(secret, body)).status_code == 400
        assert client.get("/nope", headers=signed(secret, b"")).status_code == 404
        assert client.get("/turn", headers=signed(secret, b"")).status_code == 405
        big = b"x" * 2_000_001
        assert client.post("/turn", content=big, headers=signed(secret, big)).status_code == 413
    host, port = url.removeprefix("http://").split(":")
    import socket

    with socket.create_connection((host, int(port)), timeout=2) as raw:
        raw.sendall(b"GARBAGE\r\n\r\n")
        assert b"400" in raw.recv(200)
    with httpx.Client(base_url=url) as client:
        assert client.get("/health", headers=signed(secret, b"")).status_code == 200


def test_exceptions_in_decide_become_500(served: tuple[str, Recorder], secret: str) -> None:
    url, _ = served
    with httpx.Client(base_url=url) as client:
        body = turn_body({"boom": True})
        response = client.post("/turn", content=body, headers=signed(secret, body))
        assert response.status_code == 500 and "ValueError: kaboom" in response.json()["error"]
        body = turn_body({"unserialisable": True})
        assert client.post("/turn", content=body, headers=signed(secret, body)).status_code == 500
        body = turn_body({"fine": 1})
        assert client.post("/turn", content=body, headers=signed(secret, body)).status_code == 200


def test_run_module_cli_serves_an_example_bot(secret: str, tmp_path: Path) -> None:
    sock = tmp_path / "bot.sock"
    env = {**os.environ, "MY_SECRET": secret}
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "shared.botsdk.run"),
            *("--module", "examples/bots/podracing_runner_bot.py"),
            *("--unix-socket", str(sock), "--secret-env", "MY_SECRET"),
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        from tests.sandbox.conftest import post_turn
        from tests.sandbox.test_examples import OBSERVATION

        response = post_turn(str(sock), secret, OBSERVATION, game="podracing")
        assert response.status_code == 200, response.text
        assert len(response.json()["action"]["pods"]) == 2
    finally:
        proc.kill()
        proc.wait()
