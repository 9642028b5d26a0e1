"""Bots: registration runs the real health check, secrets are shown once and stored encrypted,
owners alone touch their bots, hosted code passes the gate, versions are kept."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.config import get_settings
from shared.crypto import decrypt_secret
from shared.db.models import Bot, BotVersion, Rating
from shared.ports import free_port
from shared.protocol.signing import generate_secret
from tests.support.accounts import Account, unique
from tests.support.bot_servers import BotServer
from tests.support.gateway import DECIDE_SOURCE


def test_register_http_bot_returns_secret_once_and_stores_it_encrypted(
    client: TestClient, alice: Account, http_bot: dict[str, Any], bot_server: BotServer, db_session: Session
) -> None:
    assert http_bot["secret"] == bot_server.secret
    assert http_bot["status"] == "active"
    assert http_bot["kind"] == "http"
    assert http_bot["current_version"] == 1
    assert http_bot["rating"]["mu"] == 25.0
    assert http_bot["rating"]["matches_played"] == 0
    row = db_session.get(Bot, uuid.UUID(http_bot["id"]))
    assert row is not None
    assert bot_server.secret.encode() not in row.secret_encrypted
    assert bot_server.secret.split("_", 1)[1].encode() not in row.secret_encrypted
    assert decrypt_secret(get_settings(), row.secret_encrypted) == bot_server.secret
    rating = db_session.get(Rating, row.id)
    assert rating is not None
    assert rating.ordinal == 0.0

    texts = [
        client.get(f"/api/v1/bots/{http_bot['id']}", headers=alice.headers).text,
        client.get("/api/v1/bots", headers=alice.headers).text,
        client.get("/api/v1/bots/public").text,
        client.get(f"/api/v1/bots/{http_bot['id']}/versions", headers=alice.headers).text,
    ]
    for text in texts:
        assert bot_server.secret not in text
        assert "secret" not in json.loads(text) if text.startswith("{") else True
    public = client.get("/api/v1/bots/public", params={"game": "podracing", "limit": 200}).json()
    mine = [b for b in public["items"] if b["id"] == http_bot["id"]]
    assert mine
    assert "endpoint" not in mine[0]
    assert mine[0]["owner_name"] == alice.name


def test_registration_refuses_an_unreachable_endpoint(client: TestClient, alice: Account) -> None:
    body = {
        "name": unique("ghost"),
        "game": "podracing",
        "endpoint": f"http://127.0.0.1:{free_port()}",
        "secret": generate_secret(),
    }
    answer = client.post("/api/v1/bots", json=body, headers=alice.headers)
    assert answer.status_code == 422
    assert "health check" in answer.json()["detail"]
    listed = client.get("/api/v1/bots", headers=alice.headers).json()
    assert all(b["name"] != body["name"] for b in listed["items"])


def test_registration_refuses_a_bot_that_rejects_our_signature(
    client: TestClient, alice: Account, bot_server: BotServer
) -> None:
    body = {
        "name": unique("wrong"),
        "game": "podracing",
        "endpoint": bot_server.url,
        "secret": generate_secret(),
    }
    answer = client.post("/api/v1/bots", json=body, headers=alice.headers)
    assert answer.status_code == 422
    assert "health check" in answer.json()["detail"]
    assert "401" in answer.json()["detail"] or "signature" in answer.json()["detail"]


def test_registration_validates_game_endpoint_and_name(
    client: TestClient, alice: Account, http_bot: dict[str, Any], bot_server: BotServer
) -> None:
    base = {"name": unique("v"), "game": "podracing", "endpoint": bot_server.url, "secret": bot_server.secret}
    unknown = client.post("/api/v1/bots", json={**base, "game": "chess"}, headers=alice.headers)
    assert unknown.status_code == 422
    assert "unknown game 'chess'" in unknown.json()["detail"]
    bad_url = client.post("/api/v1/bots", json={**base, "endpoint": "ftp://x"}, headers=alice.headers)
    assert bad_url.status_code == 422
    assert bad_url.json()["errors"][0]["loc"] == "body.endpoint"
    bad_secret = client.post("/api/v1/bots", json={**base, "secret": "hunter2"}, headers=alice.headers)
    assert bad_secret.status_code == 422
    assert "whsec_" in bad_secret.json()["detail"]
    assert "hunter2" not in bad_secret.text
    taken = client.post("/api/v1/bots", json={**base, "name": http_bot["name"]}, headers=alice.headers)
    assert taken.status_code == 409
    assert "already taken" in taken.json()["detail"]


def test_server_generated_secret_starts_inactive_until_health_checked(
    client: TestClient, alice: Account, bot_server: BotServer
) -> None:
    body = {"name": unique("later"), "game": "podracing", "endpoint": bot_server.url}
    created = client.post("/api/v1/bots", json=body, headers=alice.headers)
    assert created.status_code == 201
    bot = created.json()
    assert bot["status"] == "inactive"
    assert bot["secret"].startswith("whsec_")
    assert "reactivate" in bot["next_step"]
    # The running bot does not know the generated secret, so the check fails and it stays inactive.
    refused = client.post(f"/api/v1/bots/{bot['id']}/reactivate", headers=alice.headers)
    assert refused.status_code == 422
    assert client.get(f"/api/v1/bots/{bot['id']}", headers=alice.headers).json()["status"] == "inactive"


def test_owners_alone_touch_their_bots(
    client: TestClient, alice: Account, bob: Account, admin: Account, http_bot: dict[str, Any]
) -> None:
    bot_id = http_bot["id"]
    assert client.get(f"/api/v1/bots/{bot_id}", headers=bob.headers).status_code == 403
    for method, path, body in [
        ("PATCH", f"/api/v1/bots/{bot_id}", {"name": "stolen"}),
        ("POST", f"/api/v1/bots/{bot_id}/rotate-secret", None),
        ("POST", f"/api/v1/bots/{bot_id}/deactivate", None),
        ("POST", f"/api/v1/bots/{bot_id}/versions", {"source": DECIDE_SOURCE}),
    ]:
        answer = client.request(method, path, json=body, headers=bob.headers)
        assert answer.status_code == 403, (path, answer.text)
        assert "another user" in answer.json()["detail"]
        assert "whsec_" not in answer.text
    assert all(b["id"] != bot_id for b in client.get("/api/v1/bots", headers=bob.headers).json()["items"])
    assert client.get(f"/api/v1/bots/{bot_id}", headers=alice.headers).json()["name"] == http_bot["name"]
    admin_view = client.get(f"/api/v1/bots/{bot_id}", headers=admin.headers)
    assert admin_view.status_code == 200
    assert "secret" not in admin_view.json()
    admin_list = client.get("/api/v1/bots", params={"limit": 200}, headers=admin.headers).json()
    assert bot_id in {b["id"] for b in admin_list["items"]}
    stopped = client.post(f"/api/v1/bots/{bot_id}/deactivate", headers=admin.headers)
    assert stopped.status_code == 200
    assert stopped.json()["status"] == "inactive"
    restarted = client.post(f"/api/v1/bots/{bot_id}/reactivate", headers=alice.headers)
    assert restarted.json()["status"] == "active"
    assert client.get(f"/api/v1/bots/{uuid.uuid4()}", headers=alice.headers).status_code == 404


def test_rotate_deactivate_reactivate_and_rename(
    client: TestClient, alice: Account, http_bot: dict[str, Any], bot_server: BotServer, db_session: Session
) -> None:
    bot_id = http_bot["id"]
    off = client.post(f"/api/v1/bots/{bot_id}/deactivate", headers=alice.headers)
    assert off.status_code == 200
    assert off.json()["status"] == "inactive"
    on = client.post(f"/api/v1/bots/{bot_id}/reactivate", headers=alice.headers)
    assert on.status_code == 200
    assert on.json()["status"] == "active"
    new_name = unique("renamed")
    renamed = client.patch(f"/api/v1/bots/{bot_id}", json={"name": new_name}, headers=alice.headers)
    assert renamed.status_code == 200
    assert renamed.json()["name"] == new_name
    rotated = client.post(f"/api/v1/bots/{bot_id}/rotate-secret", headers=alice.headers)
    assert rotated.status_code == 200
    new_secret = rotated.json()["secret"]
    assert new_secret.startswith("whsec_")
    assert new_secret != bot_server.secret
    row = db_session.get(Bot, uuid.UUID(bot_id))
    assert row is not None
    db_session.refresh(row)
    assert decrypt_secret(get_settings(), row.secret_encrypted) == new_secret
    # The bot still uses the old secret: moving its endpoint re-runs the check, which now fails.
    moved = client.patch(
        f"/api/v1/bots/{bot_id}", json={"endpoint": bot_server.url + "/"}, headers=alice.headers
    )
    assert moved.status_code == 200  # same endpoint once normalised: nothing to check
    moved = client.patch(
        f"/api/v1/bots/{bot_id}", json={"endpoint": f"http://127.0.0.1:{free_port()}"}, headers=alice.headers
    )
    assert moved.status_code == 422
    assert "health check" in moved.json()["detail"]
    empty = client.patch(f"/api/v1/bots/{bot_id}", json={}, headers=alice.headers)
    assert empty.status_code == 422
    assert "at least one" in empty.json()["detail"]


def test_hosted_bot_upload_versions_and_rating_reset(
    client: TestClient, alice: Account, db_session: Session
) -> None:
    created = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("hosted"), "game": "podracing", "source": DECIDE_SOURCE, "contract": "decide"},
        headers=alice.headers,
    )
    assert created.status_code == 201, created.text
    bot = created.json()
    assert bot["kind"] == "hosted"
    assert bot["endpoint"] is None
    assert "secret" not in bot
    bot_id = uuid.UUID(bot["id"])
    rating = db_session.get(Rating, bot_id)
    assert rating is not None
    rating.mu, rating.sigma, rating.ordinal = 30.0, 1.0, 27.0
    db_session.commit()

    v2 = client.post(
        f"/api/v1/bots/{bot_id}/versions",
        json={"source": DECIDE_SOURCE + "\n# faster\n", "notes": {"why": "test"}},
        headers=alice.headers,
    )
    assert v2.status_code == 201, v2.text
    assert v2.json()["number"] == 2
    assert v2.json()["current"]
    assert v2.json()["contract"] == "decide"
    versions = client.get(f"/api/v1/bots/{bot_id}/versions", headers=alice.headers).json()
    assert [(v["number"], v["current"]) for v in versions] == [(1, False), (2, True)]
    one = client.get(f"/api/v1/bots/{bot_id}/versions/1", headers=alice.headers).json()
    assert one["source"] == DECIDE_SOURCE
    db_session.expire_all()
    rating = db_session.get(Rating, bot_id)
    assert rating is not None
    assert rating.mu == 30.0
    assert rating.sigma > 1.0
    assert rating.ordinal < 27.0
    row = db_session.get(Bot, bot_id)
    assert row is not None
    current = db_session.get(BotVersion, row.current_version_id)
    assert current is not None
    assert current.number == 2
    assert current.notes == {"why": "test"}
    assert client.get(f"/api/v1/bots/{bot_id}", headers=alice.headers).json()["current_version"] == 2


def test_hosted_gate_problems_come_back_with_line_numbers(client: TestClient, alice: Account) -> None:
    source = "import os\nimport socket\n\ndef decide(observation):\n    return eval('1')\n"
    answer = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("evil"), "game": "podracing", "source": source},
        headers=alice.headers,
    )
    assert answer.status_code == 422
    body = answer.json()
    lines = sorted(p["line"] for p in body["errors"])
    assert lines == [1, 2, 5]
    assert "line 1" in body["detail"]
    assert "'os'" in body["detail"]
    assert all(b["name"] != "evil" for b in client.get("/api/v1/bots", headers=alice.headers).json()["items"])
    bad_contract = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("c"), "game": "podracing", "source": "x = 1\n", "contract": "java"},
        headers=alice.headers,
    )
    assert bad_contract.status_code == 422
    assert bad_contract.json()["errors"][0]["loc"] == "body.contract"


def test_hosted_source_over_the_limit_is_413(client: TestClient, alice: Account) -> None:
    limit = get_settings().hosted_code_max_chars
    source = DECIDE_SOURCE + "#" * (limit + 1)
    answer = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("big"), "game": "podracing", "source": source},
        headers=alice.headers,
    )
    assert answer.status_code == 413
    assert str(limit) in answer.json()["detail"]
    assert "characters" in answer.json()["detail"]


def test_http_bots_take_no_code_uploads(client: TestClient, alice: Account, http_bot: dict[str, Any]) -> None:
    answer = client.post(
        f"/api/v1/bots/{http_bot['id']}/versions", json={"source": DECIDE_SOURCE}, headers=alice.headers
    )
    assert answer.status_code == 409
    assert "hosted" in answer.json()["detail"]


@pytest.mark.usefixtures("client", "alice")
def test_rows_are_what_the_api_says(http_bot: dict[str, Any], db_session: Session) -> None:
    rows = db_session.scalars(select(BotVersion).where(BotVersion.bot_id == uuid.UUID(http_bot["id"]))).all()
    assert [v.number for v in rows] == [1]
    assert rows[0].notes == {"endpoint": http_bot["endpoint"]}
