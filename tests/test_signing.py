"""Request signing: the documented example, tampering, staleness and secret rotation."""

from __future__ import annotations

import base64

import pytest

from shared.protocol.signing import SignatureError, Signer, generate_secret, sign, verify

DOC_SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
DOC_BODY = (
    b'{"protocol":1,"match_id":"m1","game":"podracing","player":0,"turn":17,'
    b'"timeout_ms":1000,"observation":{}}'
)
DOC_TS = 1795334400


def test_documented_example_signature_matches_the_code() -> None:
    assert sign(DOC_SECRET, "m1-17-0", DOC_TS, DOC_BODY) == "v1,Jb1srw3HJzv7qUA4eHM2xVq5UXRC9NoZk202EGw4UYM="


def test_signer_headers_verify_and_tampering_is_refused() -> None:
    secret = generate_secret()
    headers = Signer(secret).headers("msg-1", b'{"a":1}', timestamp=DOC_TS)
    assert verify(secret, headers, b'{"a":1}', now=DOC_TS + 10) == "msg-1"
    with pytest.raises(SignatureError, match="no valid v1 signature"):
        verify(secret, headers, b'{"a":2}', now=DOC_TS)
    with pytest.raises(SignatureError, match="no valid v1 signature"):
        verify(generate_secret(), headers, b'{"a":1}', now=DOC_TS)
    with pytest.raises(SignatureError, match="no valid v1 signature"):
        verify(secret, {**headers, "webhook-id": "msg-2"}, b'{"a":1}', now=DOC_TS)


def test_stale_and_unsigned_requests_are_refused() -> None:
    secret = generate_secret()
    headers = Signer(secret).headers("m", b"", timestamp=DOC_TS)
    with pytest.raises(SignatureError, match="tolerance"):
        verify(secret, headers, b"", now=DOC_TS + 301)
    with pytest.raises(SignatureError, match="missing"):
        verify(secret, {}, b"")
    with pytest.raises(SignatureError, match="not an integer"):
        verify(secret, {**headers, "webhook-timestamp": "soon"}, b"", now=DOC_TS)


def test_any_listed_signature_is_accepted_during_rotation() -> None:
    old, new = generate_secret(), generate_secret()
    headers = Signer(new).headers("m", b"x", timestamp=DOC_TS)
    both = {**headers, "webhook-signature": sign(old, "m", DOC_TS, b"x") + " " + headers["webhook-signature"]}
    assert verify(new, both, b"x", now=DOC_TS) == "m"
    assert verify(old, both, b"x", now=DOC_TS) == "m"


@pytest.mark.parametrize(
    "bad", ["plain", "whsec_not base64!", "whsec_" + base64.b64encode(b"short").decode()]
)
def test_malformed_secrets_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        Signer(bad)
