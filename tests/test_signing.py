"""Request signing: the documented example, v2 binding of method and path, tampering, freshness
(past window and future clock skew) and secret rotation."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest

from shared.botsdk import make_server
from shared.botsdk.replay import BUCKET_S, BYTES_PER_ID, ReplayCache, ReplayCacheFull
from shared.protocol.signing import (
    MAX_FUTURE_SKEW_S,
    SignatureError,
    Signer,
    generate_secret,
    sign,
    sign_v2,
    verify,
)

DOC_SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
DOC_BODY = (
    b'{"protocol":1,"match_id":"m1","game":"podracing","player":0,"turn":17,'
    b'"timeout_ms":1000,"observation":{}}'
)
DOC_TS = 1795334400
DOC_ID = "m1-17-0-5f2c9a1e7b3d4c60"
DOC_V2 = "v2,yfcxIwjf/pOMrz1Gn6eJYuqEhaZe6q3VFVYwqKeDJ6Y="
DOC_V1 = "v1,K3TluBONCfE4K4WDQ4SDRJwP0otQGxvEeNTlZwonB2s="


class Route(TypedDict):
    method: str
    path: str


TURN: Route = {"method": "POST", "path": "/turn"}


def test_documented_example_signatures_match_the_code() -> None:
    assert sign_v2(DOC_SECRET, DOC_ID, DOC_TS, "POST", "/turn", DOC_BODY) == DOC_V2
    assert sign(DOC_SECRET, DOC_ID, DOC_TS, DOC_BODY) == DOC_V1
    headers = Signer(DOC_SECRET).headers(DOC_ID, DOC_BODY, timestamp=DOC_TS, **TURN)
    assert headers["webhook-signature"] == f"{DOC_V2} {DOC_V1}"
    documented = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()
    for shown in (DOC_SECRET, f"webhook-id: {DOC_ID}", f"webhook-timestamp: {DOC_TS}", DOC_BODY.decode()):
        assert shown in documented, shown
    assert f"webhook-signature: {DOC_V2} {DOC_V1}" in documented


def test_signer_headers_verify_and_tampering_is_refused() -> None:
    secret = generate_secret()
    headers = Signer(secret).headers("msg-1", b'{"a":1}', timestamp=DOC_TS, **TURN)
    verified = verify(secret, headers, b'{"a":1}', now=DOC_TS + 10, **TURN)
    assert (verified.msg_id, verified.timestamp, verified.version) == ("msg-1", DOC_TS, "v2")
    with pytest.raises(SignatureError, match="no valid v2"):
        verify(secret, headers, b'{"a":2}', now=DOC_TS, **TURN)
    with pytest.raises(SignatureError, match="no valid v2"):
        verify(generate_secret(), headers, b'{"a":1}', now=DOC_TS, **TURN)
    with pytest.raises(SignatureError, match="no valid v2"):
        verify(secret, {**headers, "webhook-id": "msg-2"}, b'{"a":1}', now=DOC_TS, **TURN)


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/health"), ("GET", "/turn"), ("POST", "/health"), ("POST", "/turn?x"), ("POST", "/api/turn")],
)
def test_a_v2_signature_binds_method_and_path(method: str, path: str) -> None:
    secret = generate_secret()
    headers = Signer(secret).headers("m", b"", timestamp=DOC_TS, **TURN)
    with pytest.raises(SignatureError):
        verify(secret, headers, b"", method=method, path=path, now=DOC_TS)
    # the v1 entry in the same header does not bind them: only a receiver that accepts v1 lets it in
    assert verify(secret, headers, b"", method=method, path=path, now=DOC_TS, accept_v1=True).version == "v1"


def test_v1_only_requests_are_refused_unless_accepted_explicitly() -> None:
    secret = generate_secret()
    headers = Signer(secret).headers("m", b"x", timestamp=DOC_TS, **TURN)
    v1_only = {**headers, "webhook-signature": headers["webhook-signature"].split()[1]}
    with pytest.raises(SignatureError, match="v1-only"):
        verify(secret, v1_only, b"x", now=DOC_TS, **TURN)
    assert verify(secret, v1_only, b"x", now=DOC_TS, accept_v1=True, **TURN).version == "v1"
    without_v1 = Signer(secret, legacy_v1=False).headers("m", b"x", timestamp=DOC_TS, **TURN)
    assert without_v1["webhook-signature"].startswith("v2,")
    assert " " not in without_v1["webhook-signature"]


@pytest.mark.parametrize("offset_s", [-301, -3600, MAX_FUTURE_SKEW_S + 1, 120, 299, 300, 10**6])
def test_stale_and_future_timestamps_are_refused(offset_s: int) -> None:
    secret = generate_secret()
    headers = Signer(secret).headers("m", b"", timestamp=DOC_TS + offset_s, method="GET", path="/health")
    with pytest.raises(SignatureError, match=r"tolerance|future"):
        verify(secret, headers, b"", method="GET", path="/health", now=DOC_TS)


@pytest.mark.parametrize("offset_s", [-300, -1, 0, 1, MAX_FUTURE_SKEW_S])
def test_timestamps_inside_the_window_pass(offset_s: int) -> None:
    secret = generate_secret()
    headers = Signer(secret).headers("m", b"", timestamp=DOC_TS + offset_s, method="GET", path="/health")
    assert verify(secret, headers, b"", method="GET", path="/health", now=DOC_TS).msg_id == "m"


def test_unsigned_and_malformed_requests_are_refused() -> None:
    secret = generate_secret()
    headers = Signer(secret).headers("m", b"", timestamp=DOC_TS, **TURN)
    with pytest.raises(SignatureError, match="missing"):
        verify(secret, {}, b"", **TURN)
    for bad_ts in ("soon", "-5", "1e9", "١٢٣", "9" * 40):
        with pytest.raises(SignatureError, match="not an integer"):
            verify(secret, {**headers, "webhook-timestamp": bad_ts}, b"", now=DOC_TS, **TURN)
    with pytest.raises(SignatureError, match="longer"):
        verify(secret, {**headers, "webhook-id": "x" * 257}, b"", now=DOC_TS, **TURN)
    with pytest.raises(SignatureError):
        verify(secret, {**headers, "webhook-signature": "v2,é v2 v9,abc ,"}, b"", now=DOC_TS, **TURN)


def test_a_signer_with_previous_secrets_signs_for_each() -> None:
    old, older, new = generate_secret(), generate_secret(), generate_secret()
    headers = Signer(new, old, older).headers("m", b"x", timestamp=DOC_TS, **TURN)
    entries = headers["webhook-signature"].split()
    assert [e[:3] for e in entries] == ["v2,"] * 3 + ["v1,"] * 3
    for secret in (new, old, older):
        assert verify(secret, headers, b"x", now=DOC_TS, **TURN).version == "v2"
        assert verify(secret, headers, b"x", now=DOC_TS, accept_v1=True, **TURN).msg_id == "m"
    with pytest.raises(SignatureError):
        verify(generate_secret(), headers, b"x", now=DOC_TS, **TURN)


@pytest.mark.parametrize(
    "bad", ["plain", "whsec_not base64!", "whsec_" + base64.b64encode(b"short").decode()]
)
def test_malformed_secrets_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match=r"^bot secret "):
        Signer(bad)
    with pytest.raises(ValueError, match=r"^bot secret "):
        Signer(generate_secret(), bad)


def test_the_replay_cache_remembers_ids_for_their_window_and_refuses_when_full() -> None:
    cache = ReplayCache(window_s=300, capacity=2)
    assert cache.first_use("a", DOC_TS, now=DOC_TS)
    assert not cache.first_use("a", DOC_TS, now=DOC_TS + 300)  # its timestamp is still fresh
    assert cache.first_use("b", DOC_TS + 10, now=DOC_TS + 10)
    with pytest.raises(ReplayCacheFull):  # full of live ids: refuse rather than forget one
        cache.first_use("c", DOC_TS + 20, now=DOC_TS + 20)
    assert not cache.first_use("a", DOC_TS, now=DOC_TS + 20)
    later = DOC_TS + 300 + BUCKET_S + 1  # "a" expired with its timestamp, and its bucket with it
    assert cache.first_use("c", later, now=later)
    assert len(cache) == 2
    assert not cache.first_use("b", DOC_TS + 10, now=later)


@pytest.mark.slow
def test_the_replay_cache_holds_2000_requests_a_second_past_its_window_and_refuses_every_replay() -> None:
    rate, window, seconds = 2_000, 300, 420
    cache = ReplayCache(window_s=window)  # sized by the default rate: no count to outgrow
    start = DOC_TS
    for second in range(seconds):
        now = start + second
        for i in range(rate):
            # Timestamps a little in the past, as a runner's clock and the network make them.
            assert cache.first_use(f"msg_{second:06d}_{i:08x}{'0' * 24}", now - (i % 3), now=now)
        # A request from just inside the window, sent again, is refused; none was forgotten early.
        old = max(0, second - window + 3)
        assert not cache.first_use(f"msg_{old:06d}_{7:08x}{'0' * 24}", start + old - 1, now=now)
    assert len(cache) <= rate * (window + BUCKET_S + 3)


@pytest.mark.slow
def test_the_replay_cache_memory_per_id_is_as_documented() -> None:
    count = 200_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        cache = ReplayCache(window_s=300)
        for i in range(count):
            cache.first_use(f"msg_{i:036x}", DOC_TS + i / 1_000, now=DOC_TS + i / 1_000)
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(cache) == count
    assert used / count <= BYTES_PER_ID, f"{used / count:.0f} bytes an id"


PROTOCOL_DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
TURN_BODY = (
    '{"protocol":1,"match_id":"m1","game":"podracing","player":0,"turn":3,"timeout_ms":1000,'
    '"observation":{"note":"100% été, printf-proof"}}'
)


def documented_block(first_line: str) -> str:
    """The fenced code block of docs/protocol.md that starts with `first_line`."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", PROTOCOL_DOC.read_text(), re.S):
        if block.startswith(first_line + "\n"):
            return str(block)
    raise AssertionError(f"docs/protocol.md has no code block starting with {first_line!r}")


@pytest.fixture
def sdk_bot() -> Iterator[tuple[str, str, list[Any]]]:
    """A real SDK bot on loopback (it verifies with shared.protocol.signing): URL, secret, what it saw."""
    secret, seen = generate_secret(), []

    def decide(observation: Any) -> Any:
        seen.append(observation)
        return {"pods": []}

    server = make_server(decide, secret=secret, port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}", secret, seen
    server.shutdown()
    server.server_close()


def run_documented_script(url: str, secret: str, method: str, target: str, body: str) -> tuple[int, str]:
    """docs/protocol.md's openssl and curl recipe with this bot's values filled in: status and answer."""
    script = documented_block("# sign-request.sh")
    script = script.replace("SECRET='whsec_...'", f"SECRET='{secret}'", 1)
    script = script.replace("URL='http://127.0.0.1:8080'", f"URL='{url}'", 1)
    script, filled = re.subn(
        r"^METHOD=GET TARGET=/health BODY=''.*$",
        lambda _: f"METHOD={method} TARGET={target} BODY='{body}'",
        script,
        flags=re.M,
    )
    assert filled == 1, script
    done = subprocess.run(
        ["bash", "-c", script.rstrip() + " -w '\\n%{http_code}'"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    answer, _, status = done.stdout.rpartition("\n")
    return int(status), answer


@pytest.mark.skipif(not (shutil.which("openssl") and shutil.which("curl")), reason="needs openssl and curl")
def test_the_documented_openssl_recipe_signs_what_the_platform_verifies(
    sdk_bot: tuple[str, str, list[Any]],
) -> None:
    url, secret, seen = sdk_bot
    status, answer = run_documented_script(url, secret, "GET", "/health", "")
    assert (status, json.loads(answer)) == (200, {"status": "ok"})
    status, answer = run_documented_script(url, secret, "POST", "/turn", TURN_BODY)
    assert status == 200, answer
    assert json.loads(answer)["action"] == {"pods": []}, answer
    assert seen == [json.loads(TURN_BODY)["observation"]]
    status, _ = run_documented_script(url, generate_secret(), "GET", "/health", "")
    assert status == 401, "a request signed with another secret is refused"


def test_the_documented_python_signer_signs_what_the_platform_verifies() -> None:
    namespace: dict[str, Any] = {}
    exec(documented_block("# sign.py"), namespace)  # the documented snippet, as a reader copies it
    secret, body = generate_secret(), TURN_BODY.encode()
    headers = namespace["signed_headers"](secret, "post", "/api/racer/turn", body)
    verified = verify(secret, headers, body, method="POST", path="/api/racer/turn")
    assert verified.version == "v2"
    with pytest.raises(SignatureError):
        verify(secret, headers, body, method="POST", path="/turn")
