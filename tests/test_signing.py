"""Request signing: the documented example, v2 binding of method and path, tampering, freshness
(past window and future clock skew) and secret rotation."""

from __future__ import annotations

import base64
import tracemalloc
from pathlib import Path

import pytest

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
TURN = {"method": "POST", "path": "/turn"}


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
    assert without_v1["webhook-signature"].startswith("v2,") and " " not in without_v1["webhook-signature"]


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
    with pytest.raises(ValueError):
        Signer(bad)
    with pytest.raises(ValueError):
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
