"""Bad input never produces a 500: a sweep of malformed bodies over every write route, plus unknown
routes, bad ids, oversize bodies."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.accounts import Account

BAD_BODIES: list[Any] = [
    None,
    "not json at all",
    [],
    [1, 2, 3],
    {},
    {"unexpected": True},
    {"name": None, "game": None},
    {"name": "", "game": "", "endpoint": "", "source": ""},
    {"name": "x" * 500, "game": "podracing"},
    {"name": "../../etc", "game": "podracing", "endpoint": "http://[::1"},
    {"name": "ok", "game": "podracing", "endpoint": "javascript:alert(1)"},
    {"name": "ok", "game": "podracing", "endpoint": "http://user:pw@example.com"},
    {"name": 12, "game": ["podracing"], "source": {"a": 1}, "contract": 3},
    {"game": "podracing", "bot_ids": "abc"},
    {"game": "podracing", "bot_ids": ["not-a-uuid", 5]},
    {"game": "podracing", "bot_ids": [str(uuid.uuid4()), str(uuid.uuid4())], "seed": -1},
    {"game": "podracing", "bot_ids": [str(uuid.uuid4()), str(uuid.uuid4())], "seed": 2**80},
    {"game": "podracing", "bot_ids": [str(uuid.uuid4()), str(uuid.uuid4())], "config": "laps"},
    {"game": "nope", "bot_ids": [str(uuid.uuid4()), str(uuid.uuid4())]},
    {"source": "\x00\x00\x00", "contract": "decide"},
    {"source": "def decide(:\n", "contract": "codingame"},
    {"role": "god", "name": "zed"},
    {"name": "valid-name", "role": "admin", "extra": 1},
    {"name": "\u202eevil"},
    {"notes": [1, 2], "source": "x"},
]


def _write_routes(client: TestClient) -> list[tuple[str, str]]:
    spec = client.get("/openapi.json").json()
    routes = []
    for path, ops in spec["paths"].items():
        for method in ops:
            if method in ("post", "patch", "put", "delete"):
                routes.append((method.upper(), path))
    return routes


def _fill(path: str, bot_id: str) -> str:
    return re.sub(r"\{[^}]+\}", lambda m: "1" if m.group(0) == "{number}" else bot_id, path)


def test_openapi_lists_every_domain(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for needed in (
        "/api/v1/users",
        "/api/v1/me",
        "/api/v1/bots",
        "/api/v1/bots/hosted",
        "/api/v1/matches",
        "/api/v1/matches/{match_id}/replay",
        "/api/v1/games",
        "/api/v1/leaderboard/{game}",
    ):
        assert needed in paths
    assert client.get("/docs").status_code == 200


@pytest.mark.slow
def test_no_bad_body_on_any_write_route_is_a_500(
    client: TestClient, admin: Account, alice: Account, http_bot: dict[str, Any]
) -> None:
    routes = _write_routes(client)
    assert len(routes) >= 10
    for method, template in routes:
        headers = admin.headers if template.endswith("/users") else alice.headers
        ids = (http_bot["id"], str(uuid.uuid4()), "not-a-uuid") if "{" in template else ("",)
        for path in (_fill(template, bot_id) for bot_id in ids):
            for body in BAD_BODIES:
                if isinstance(body, str):
                    answer = client.request(
                        method, path, content=body, headers={**headers, "Content-Type": "application/json"}
                    )
                else:
                    answer = client.request(method, path, json=body, headers=headers)
                where = f"{method} {path} {body!r:.80}"
                assert 400 <= answer.status_code < 500 or answer.status_code in (200, 201), where
                assert answer.json().get("detail") or answer.status_code < 300, where
    # The sweep must not have damaged the bot (no body above is a valid rename).
    assert (
        client.get(f"/api/v1/bots/{http_bot['id']}", headers=alice.headers).json()["name"] == http_bot["name"]
    )


def test_validation_errors_name_the_fields(client: TestClient, alice: Account) -> None:
    answer = client.post("/api/v1/bots", json={"game": 5}, headers=alice.headers)
    assert answer.status_code == 422
    locs = {e["loc"] for e in answer.json()["errors"]}
    assert {"body.name", "body.endpoint", "body.game"} <= locs
    assert "body.name" in answer.json()["detail"]
    broken = client.post(
        "/api/v1/bots", content=b"{", headers={**alice.headers, "Content-Type": "application/json"}
    )
    assert broken.status_code == 422
    assert "JSON" in broken.json()["detail"]


@pytest.mark.usefixtures("alice")
def test_unknown_routes_and_methods(client: TestClient) -> None:
    unknown = client.get("/api/v1/nothing-here")
    assert unknown.status_code == 404
    assert "no such route" in unknown.json()["detail"]
    wrong_method = client.put("/api/v1/games")
    assert wrong_method.status_code == 405
    assert "PUT" in wrong_method.json()["detail"]
    assert client.get("/api/v1/leaderboard/chess").status_code == 404
    assert client.get("/api/v1/games/chess").json()["detail"].startswith("unknown game 'chess'")


def test_oversize_bodies_are_413(client: TestClient, alice: Account) -> None:
    huge = b'{"name": "' + b"x" * 3_000_000 + b'"}'
    answer = client.post(
        "/api/v1/bots", content=huge, headers={**alice.headers, "Content-Type": "application/json"}
    )
    assert answer.status_code == 413
    assert "exceeds the limit" in answer.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is enforced while streaming
        for _ in range(40):
            yield b"x" * 100_000

    streamed = client.post("/api/v1/bots/hosted", content=chunks(), headers=alice.headers)
    assert streamed.status_code == 413


def test_health_ready_and_metrics(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "ok"}
    ready = client.get("/ready")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"database": "ok", "redis": "ok"}
    client.get("/api/v1/games/podracing")
    raw_id = str(uuid.uuid4())
    client.get(f"/api/v1/matches/{raw_id}")
    client.get("/static/arena.css")
    client.get("/static/docs/swagger-ui.css")
    client.get(f"/no/such/{raw_id}")
    metrics = client.get("/metrics")
    assert metrics.status_code == 200
    text = metrics.text
    assert 'arena_http_requests_total{method="GET",route="/api/v1/games/{name}",status="200"}' in text
    assert "arena_http_request_duration_seconds_bucket" in text
    assert re.search(r'arena_matches\{status="queued"\} \d', text)
    assert 'route="/api/v1/matches/{match_id}",status="404"' in text
    assert 'route="/static/{path}",status="200"' in text  # mounted apps are named by their mount
    assert 'route="/static/docs/{path}",status="200"' in text
    assert 'route="unmatched",status="404"' in text
    assert raw_id not in text  # labels are templates, never raw ids


def test_front_page_renders(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "podracing leaderboard" in page.text
    assert "/docs" in page.text
