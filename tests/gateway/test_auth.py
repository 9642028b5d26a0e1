"""Authentication and users: keys are required, checked, revocable and stored only as hashes."""

from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.config import get_settings
from shared.crypto import hash_api_key
from shared.db.models import ApiKey, User
from tests.support.accounts import Account, unique


def test_missing_and_bad_keys_are_401(client: TestClient) -> None:
    missing = client.get("/api/v1/me")
    assert missing.status_code == 401
    assert "API key is required" in missing.json()["detail"]
    assert client.get("/api/v1/me", headers={"Authorization": "Bearer arena_nope"}).status_code == 401
    assert client.get("/api/v1/me", headers={"X-API-Key": "arena_nope"}).status_code == 401
    malformed = client.get("/api/v1/me", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert malformed.status_code == 401
    assert "Bearer" in malformed.json()["detail"]


def test_admin_creates_users_and_users_cannot(client: TestClient, admin: Account, alice: Account) -> None:
    me = client.get("/api/v1/me", headers={"X-API-Key": alice.key})
    assert me.status_code == 200
    assert me.json()["name"] == alice.name
    assert me.json()["role"] == "user"
    assert admin.name == "admin"
    denied = client.post("/api/v1/users", json={"name": unique("x")}, headers=alice.headers)
    assert denied.status_code == 403
    assert "admin" in denied.json()["detail"]
    assert client.get("/api/v1/users", headers=alice.headers).status_code == 403
    names = [u["name"] for u in client.get("/api/v1/users", headers=admin.headers).json()]
    assert alice.name in names


def test_duplicate_user_name_is_409(client: TestClient, admin: Account, alice: Account) -> None:
    answer = client.post("/api/v1/users", json={"name": alice.name}, headers=admin.headers)
    assert answer.status_code == 409
    assert "already taken" in answer.json()["detail"]


def test_new_key_works_and_revoked_key_stops(client: TestClient, alice: Account) -> None:
    created = client.post("/api/v1/me/api-keys", json={"name": "laptop"}, headers=alice.headers)
    assert created.status_code == 201
    new_key = created.json()["api_key"]
    assert client.get("/api/v1/me", headers={"X-API-Key": new_key}).json()["name"] == alice.name
    listed = client.get("/api/v1/me/api-keys", headers=alice.headers).json()
    assert {k["name"] for k in listed} == {"default", "laptop"}
    assert all("api_key" not in k and "key_hash" not in k for k in listed)
    revoked = client.delete(f"/api/v1/me/api-keys/{created.json()['id']}", headers=alice.headers)
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    assert client.get("/api/v1/me", headers={"X-API-Key": new_key}).status_code == 401
    assert client.get("/api/v1/me", headers=alice.headers).status_code == 200


def test_cannot_revoke_someone_elses_key(client: TestClient, alice: Account, bob: Account) -> None:
    bobs_key_id = client.get("/api/v1/me/api-keys", headers=bob.headers).json()[0]["id"]
    assert client.delete(f"/api/v1/me/api-keys/{bobs_key_id}", headers=alice.headers).status_code == 404
    assert client.get("/api/v1/me", headers=bob.headers).status_code == 200
    assert client.delete(f"/api/v1/me/api-keys/{uuid.uuid4()}", headers=alice.headers).status_code == 404


@pytest.mark.usefixtures("client")
def test_api_keys_are_stored_hashed(alice: Account, db_session: Session) -> None:
    user = db_session.scalar(select(User).where(User.name == alice.name))
    assert user is not None
    rows = db_session.scalars(select(ApiKey).where(ApiKey.user_id == user.id)).all()
    assert len(rows) == 1
    row = rows[0]
    stored = " ".join(str(getattr(row, c.key)) for c in ApiKey.__table__.columns)
    assert alice.key not in stored
    assert row.key_hash == hash_api_key(get_settings(), alice.key)
    assert alice.key.startswith(row.prefix)
    assert len(row.prefix) < len(alice.key) // 2
