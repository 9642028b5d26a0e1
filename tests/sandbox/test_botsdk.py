"""The SDK server over loopback TCP: signatures, bad requests, author errors, init, keep-alive, and
the attacks on signed requests (replays, future timestamps, signatures moved to another path, v1
entries stripped of their v2 partner) against a real SDK server process."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from shared.botclient import HttpBotConnection
from shared.botsdk import make_server
from shared.config import Settings
from shared.ports import free_port
from shared.protocol.signing import Signer
from tests.support.sandbox import PODRACING_OBSERVATION, post_turn, turn_body, wait_listening

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


def signed(
    secret: str, body: bytes, ts: int | None = None, *, method: str = "POST", path: str = "/turn"
) -> dict[str, str]:
    """Fresh headers for one request (a new id each time, as the runner does)."""
    return Signer(secret).headers(uuid.uuid4().hex, body, timestamp=ts, method=method, path=path)


def health_headers(secret: str) -> dict[str, str]:
    return signed(secret, b"", method="GET", path="/health")


def test_health_and_turn(served: tuple[str, Recorder], secret: str) -> None:
    url, recorder = served
    with httpx.Client(base_url=url) as client:
        health = client.get("/health", headers=health_headers(secret))
        assert health.status_code == 200
        assert health.json() == {"status": "ok"}
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
        other = Signer("whsec_" + "QUJD" * 12).headers("m", body, method="POST", path="/turn")
        assert client.post("/turn", content=body, headers=other).status_code == 401


def test_bad_requests_get_4xx_and_the_server_survives(served: tuple[str, Recorder], secret: str) -> None:
    url, _ = served
    with httpx.Client(base_url=url) as client:
        for body in (b"not json", b"[1,2]", json.dumps({"protocol": 2, "observation": {}}).encode()):
            assert client.post("/turn", content=body, headers=signed(secret, body)).status_code == 400
        assert client.get("/nope", headers=signed(secret, b"", method="GET", path="/nope")).status_code == 404
        assert client.get("/turn", headers=signed(secret, b"", method="GET", path="/turn")).status_code == 405
        big = b"x" * 2_000_001
        assert client.post("/turn", content=big, headers=signed(secret, big)).status_code == 413
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=2) as raw:
        raw.sendall(b"GARBAGE\r\n\r\n")
        assert b"400" in raw.recv(200)
    with httpx.Client(base_url=url) as client:
        assert client.get("/health", headers=health_headers(secret)).status_code == 200


def test_exceptions_in_decide_become_500(served: tuple[str, Recorder], secret: str) -> None:
    url, _ = served
    with httpx.Client(base_url=url) as client:
        body = turn_body({"boom": True})
        response = client.post("/turn", content=body, headers=signed(secret, body))
        assert response.status_code == 500
        assert "ValueError: kaboom" in response.json()["error"]
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
        wait_listening(sock, proc)
        response = post_turn(str(sock), secret, PODRACING_OBSERVATION, game="podracing")
        assert response.status_code == 200, response.text
        assert len(response.json()["action"]["pods"]) == 2
    finally:
        proc.kill()
        proc.wait()


# --- Attacks on signed requests, against a real `python -m shared.botsdk.run` process ------------
# Requests are built here from the documented formats (docs/protocol.md), as a runner in another
# language or an attacker would build them, not with the code under test.


def attack_body() -> bytes:
    """A valid podracing turn, which both the echo bot and the JavaScript example answer."""
    return turn_body(PODRACING_OBSERVATION, game="podracing")


ECHO_BOT = "def decide(observation):\n    return {'echo': observation}\n"


def _entry(version: str, secret: str, signed_bytes: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    return f"{version}," + base64.b64encode(hmac.new(key, signed_bytes, hashlib.sha256).digest()).decode()


def runner_headers(
    secret: str, method: str, path: str, body: bytes, *, ts: int | None = None, versions: str = "v2 v1"
) -> dict[str, str]:
    """What the runner sends: a fresh id, a timestamp and v2 (method and path bound) + v1 entries."""
    msg_id = f"m-1-0-0-{uuid.uuid4().hex}"
    stamp = int(time.time()) if ts is None else ts
    entries = {
        "v2": _entry("v2", secret, f"{msg_id}.{stamp}.{method}.{path}.".encode() + body),
        "v1": _entry("v1", secret, f"{msg_id}.{stamp}.".encode() + body),
    }
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": " ".join(entries[v] for v in versions.split()),
        "content-type": "application/json",
    }


@pytest.fixture
def sdk_process(secret: str, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start real SDK server processes on loopback; returns their base URLs."""
    procs: list[subprocess.Popen[bytes]] = []
    bot = tmp_path / "echo_bot.py"
    bot.write_text(ECHO_BOT)

    def start(*extra: str, implementation: str = "python") -> str:
        port = free_port()
        if implementation == "js":
            command = ["node", str(ROOT / "examples/bots/js/podracing_bot.js"), "--port", str(port)]
        else:
            command = [
                *(sys.executable, "-m", "shared.botsdk.run", "--module", str(bot)),
                *("--host", "127.0.0.1", "--port", str(port), "--secret-env", "ARENA_BOT_SECRET", *extra),
            ]
        proc = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, "ARENA_BOT_SECRET": secret}, stderr=subprocess.DEVNULL
        )
        procs.append(proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return f"http://127.0.0.1:{port}"
            except OSError:
                assert proc.poll() is None, "SDK server exited"
                time.sleep(0.05)
        raise TimeoutError("SDK server did not start")

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


IMPLEMENTATIONS = pytest.mark.parametrize(
    "implementation",
    [
        "python",
        pytest.param(
            "js", marks=pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
        ),
    ],
)
"""The Python SDK and the JavaScript example bot must both hold against each attack."""


@IMPLEMENTATIONS
def test_the_same_request_twice_is_refused(
    sdk_process: Callable[..., str], secret: str, implementation: str
) -> None:
    url = sdk_process(implementation=implementation)
    body = attack_body()
    headers = runner_headers(secret, "POST", "/turn", body)
    with httpx.Client(base_url=url) as client:
        assert client.post("/turn", content=body, headers=headers).status_code == 200
        replay = client.post("/turn", content=body, headers=headers)
        assert replay.status_code == 401
        assert "replayed" in replay.json()["error"]
        health = runner_headers(secret, "GET", "/health", b"")
        assert client.get("/health", headers=health).status_code == 200
        assert client.get("/health", headers=health).status_code == 401
    with httpx.Client(base_url=url) as fresh_connection:  # a new connection changes nothing
        assert fresh_connection.post("/turn", content=body, headers=headers).status_code == 401


@pytest.mark.slow
@IMPLEMENTATIONS
def test_concurrent_copies_of_one_request_are_served_once(
    sdk_process: Callable[..., str], secret: str, implementation: str
) -> None:
    url = sdk_process(implementation=implementation)
    body = attack_body()
    headers = runner_headers(secret, "POST", "/turn", body)

    def send(_: int) -> int:
        with httpx.Client(base_url=url) as client:
            return client.post("/turn", content=body, headers=headers).status_code

    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(send, range(32)))
    assert statuses.count(200) == 1
    assert statuses.count(401) == 31


@IMPLEMENTATIONS
# 33, not 31: the timestamp is whole seconds and the bot reads its clock a moment later, so "just
# beyond the 30 s skew" needs room for a loaded machine's delay.
@pytest.mark.parametrize("ahead_s", [33, 120, 299, 300, 3600])
def test_timestamps_in_the_future_beyond_the_clock_skew_are_refused(
    sdk_process: Callable[..., str], secret: str, ahead_s: int, implementation: str
) -> None:
    url = sdk_process(implementation=implementation)
    body = attack_body()
    headers = runner_headers(secret, "POST", "/turn", body, ts=int(time.time()) + ahead_s)
    with httpx.Client(base_url=url) as client:
        answer = client.post("/turn", content=body, headers=headers)
        assert answer.status_code == 401
        assert "future" in answer.json()["error"]
        skewed = runner_headers(secret, "POST", "/turn", body, ts=int(time.time()) + 20)
        assert client.post("/turn", content=body, headers=skewed).status_code == 200


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/health"), ("POST", "/turn?x=1"), ("PUT", "/turn"), ("GET", "/health?")]
)
@IMPLEMENTATIONS
def test_a_signature_for_post_turn_does_not_verify_elsewhere(
    sdk_process: Callable[..., str], secret: str, method: str, path: str, implementation: str
) -> None:
    url = sdk_process(implementation=implementation)
    body = attack_body()
    made_for_turn = runner_headers(secret, "POST", "/turn", body)
    with httpx.Client(base_url=url) as client:
        answer = client.request(method, path, content=body, headers=made_for_turn)
        assert answer.status_code in (401, 405), answer.text
        assert answer.status_code != 200


@IMPLEMENTATIONS
def test_a_stripped_v1_entry_cannot_be_replayed(
    sdk_process: Callable[..., str], secret: str, implementation: str
) -> None:
    url = sdk_process(implementation=implementation)
    body = attack_body()
    both = runner_headers(secret, "POST", "/turn", body)
    v2_entry, v1_entry = both["webhook-signature"].split()
    with httpx.Client(base_url=url) as client:
        assert client.post("/turn", content=body, headers=both).status_code == 200
        for path in ("/turn", "/health"):
            stripped = {**both, "webhook-signature": v1_entry}
            answer = client.request(
                "POST" if path == "/turn" else "GET", path, content=body, headers=stripped
            )
            assert answer.status_code == 401, answer.text
        # A never-sent request stripped to v1 is refused too: v1 alone is not accepted by default.
        fresh = runner_headers(secret, "POST", "/turn", body, versions="v1")
        answer = client.post("/turn", content=body, headers=fresh)
        assert answer.status_code == 401
        assert "no valid v2" in answer.json()["error"]
        assert v2_entry.startswith("v2,")


def test_accept_v1_serves_old_runners_but_still_refuses_replays(
    sdk_process: Callable[..., str], secret: str
) -> None:
    url = sdk_process("--accept-v1")
    body = attack_body()
    v1_only = runner_headers(secret, "POST", "/turn", body, versions="v1")
    with httpx.Client(base_url=url) as client:
        assert client.post("/turn", content=body, headers=v1_only).status_code == 200
        assert client.post("/turn", content=body, headers=v1_only).status_code == 401
        assert client.get("/health", headers=runner_headers(secret, "GET", "/health", b"")).status_code == 200


def test_the_runner_signs_v2_and_never_reuses_an_id(sdk_process: Callable[..., str], secret: str) -> None:
    """The runner's own client against the SDK: the same turn asked twice (a retried match) and
    repeated health checks all pass, so every request carries a fresh id and a valid v2 entry."""
    url = sdk_process()
    settings = Settings(dev_mode=True, secret_key=SecretStr("sdk-test-secret-key"))

    async def go() -> list[object]:
        connection = await HttpBotConnection.open(url, secret, settings)
        async with connection:
            await connection.health(5.0)
            await connection.health(5.0)
            return [
                await connection.turn(
                    match_id="m-9", game="test", player=0, turn=0, timeout_ms=5000, observation={"n": 7}
                )
                for _ in range(2)
            ]

    replies = asyncio.run(go())
    assert all(getattr(reply, "ok", False) for reply in replies), replies
