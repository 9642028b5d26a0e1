"""Issue 10, finding 10: each class of input that used to answer 500 now answers a 4xx that says
what is wrong. One test per class; every one of them answered 500 before the fix."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.accounts import Account, unique
from tests.support.gateway import DECIDE_SOURCE, register_hosted_bot

HUGE = str(2**64)


def _assert_clear_4xx(answer: Any, *words: str) -> None:
    assert 400 <= answer.status_code < 500, (answer.status_code, answer.text)
    detail = str(answer.json()["detail"]).lower()
    for word in words:
        assert word.lower() in detail, (word, detail)


@pytest.mark.parametrize(
    "path", ["/api/v1/matches", "/api/v1/bots/public", "/api/v1/bots", "/api/v1/leaderboard/podracing"]
)
def test_offset_beyond_64_bits_is_a_422(client: TestClient, alice: Account, path: str) -> None:
    _assert_clear_4xx(client.get(path, params={"offset": HUGE}, headers=alice.headers), "offset")


def test_version_number_beyond_32_bits_is_a_422(client: TestClient, alice: Account) -> None:
    bot = register_hosted_bot(client, alice)
    for number in (str(2**31), HUGE, "-1"):
        answer = client.get(f"/api/v1/bots/{bot['id']}/versions/{number}", headers=alice.headers)
        _assert_clear_4xx(answer, "number")


def test_nul_in_body_strings_is_a_422(client: TestClient, alice: Account) -> None:
    bot = register_hosted_bot(client, alice)
    cases = [
        ("/api/v1/me/api-keys", {"name": "key\x00name"}),
        (f"/api/v1/bots/{bot['id']}/versions", {"source": DECIDE_SOURCE, "notes": {"why": "a\x00b"}}),
        (f"/api/v1/bots/{bot['id']}/versions", {"source": DECIDE_SOURCE, "notes": {"a\x00": 1}}),
    ]
    for path, body in cases:
        _assert_clear_4xx(client.post(path, json=body, headers=alice.headers), "NUL")


def test_lone_surrogate_in_body_strings_is_a_422(client: TestClient, alice: Account) -> None:
    raw = b'{"name": "key\\ud800name"}'
    answer = client.post(
        "/api/v1/me/api-keys", content=raw, headers={**alice.headers, "Content-Type": "application/json"}
    )
    _assert_clear_4xx(answer, "surrogate")


@pytest.mark.parametrize(
    "path", ["/api/v1/matches?game=%00", "/api/v1/bots/public?game=a%00b", "/api/v1/bots?game=%00"]
)
def test_nul_in_query_parameters_is_a_400(client: TestClient, alice: Account, path: str) -> None:
    _assert_clear_4xx(client.get(path, headers=alice.headers), "NUL")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_nan_and_infinity_in_json_are_a_422(client: TestClient, alice: Account, number: str) -> None:
    bot = register_hosted_bot(client, alice)
    raw = '{"source": "def decide(o):\\n    return {}\\n", "notes": {"score": ' + number + "}}"
    answer = client.post(
        f"/api/v1/bots/{bot['id']}/versions",
        content=raw.encode(),
        headers={**alice.headers, "Content-Type": "application/json"},
    )
    _assert_clear_4xx(answer, "finite")


@pytest.mark.parametrize("port", ["65536", "70000", "99999999999", "0", "http"])
def test_endpoint_port_out_of_range_is_a_422(client: TestClient, alice: Account, port: str) -> None:
    body = {"name": unique("p"), "game": "podracing", "endpoint": f"http://127.0.0.1:{port}/bot"}
    _assert_clear_4xx(client.post("/api/v1/bots", json=body, headers=alice.headers), "port")


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://127.0.0.1:9/a%00b",
        "http://127.0.0.1:9/a\r\nHost: evil",
        "http://127.0.0.1:9/a\nb",
        "http://127.0.0.1:9/a%0d%0ab",
        "http://127.0.0.1:9/a b",
        "http://127.0.0.1:9/\x7f",
        "http://exa\x00mple.com/",
        "http://bad_host!.example/",
        "http://ünïcode.example/",
        "http://" + "a" * 64 + ".example/",
    ],
)
def test_control_characters_and_bad_hosts_in_endpoint_are_a_422(
    client: TestClient, alice: Account, http_bot: dict[str, Any], endpoint: str
) -> None:
    body = {"name": unique("c"), "game": "podracing", "endpoint": endpoint}
    created = client.post("/api/v1/bots", json=body, headers=alice.headers)
    _assert_clear_4xx(created, "endpoint")
    moved = client.patch(f"/api/v1/bots/{http_bot['id']}", json={"endpoint": endpoint}, headers=alice.headers)
    _assert_clear_4xx(moved, "endpoint")


def test_the_url_nul_check_agrees_with_percent_decoding() -> None:
    """The middleware looks for `%00` instead of decoding; differential against decoding."""
    import random
    from urllib.parse import unquote_to_bytes

    from services.gateway.input_guard import _url_has_nul

    rng = random.Random(3)
    pieces = [
        b"%",
        b"%%",
        b"%0",
        b"%00",
        b"%000",
        b"0",
        b"00",
        b"%2F",
        b"%25",
        b"%250",
        b"a",
        b"/",
        b"?",
        b"\x00",
    ]
    for _ in range(5000):
        raw = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        query = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
        decoded = b"\x00" in unquote_to_bytes(raw) or b"\x00" in unquote_to_bytes(query)
        scope = {"path": "/x", "raw_path": raw, "query_string": query}
        assert _url_has_nul(scope) == decoded, (raw, query)
