"""Bot health, end to end: real SDK bot servers on loopback, the real gateway, a real worker.

- a secret rotation keeps the old secret valid for a grace window: a bot whose server still has
  the old secret keeps playing rated matches (finding 14a);
- a bot that fails its pre-match health check gets no rated result (nor do its opponents), is
  skipped by the ladder, is suspended after `health_suspend_after` failures with the reason shown
  to its owner, and comes back after its owner's reactivation (finding 14b);
- no public view of a failed or unrated match names an endpoint (finding 11).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from services.match_runner.ladder import ladder_candidates
from shared import ratings
from shared.config import get_settings
from shared.db.models import Match
from shared.db.session import session_scope
from shared.matches import MatchRequestError
from shared.protocol.signing import generate_secret
from tests.support.accounts import Account
from tests.support.bot_servers import BotServer, runner_policy
from tests.support.gateway import register_http_bot
from tests.support.match_runner import queue_match, start_worker, wait_for_match
from tests.support.processes import ManagedProcess

pytestmark = pytest.mark.slow

SUSPEND_AFTER = 3
"""The default of settings.health_suspend_after."""


@pytest.fixture(scope="module")
def worker(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    process = start_worker("health-worker")
    yield process
    process.stop()


class SdkServers:
    """Starts real SDK bot servers (the built-in runner policy) with a given secret; stops them."""

    def __init__(self) -> None:
        self._running: dict[str, Any] = {}

    def __call__(self, secret: str, host: str = "127.0.0.1") -> BotServer:
        from shared.botsdk import make_server

        server = make_server(runner_policy, secret=secret, port=0)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        url = f"http://{host}:{server.server_address[1]}"
        self._running[url] = server
        return BotServer(url, secret)

    def stop(self, bot_server: BotServer) -> None:
        server = self._running.pop(bot_server.url)
        server.shutdown()
        server.server_close()

    def stop_all(self) -> None:
        for server in self._running.values():
            server.shutdown()
            server.server_close()


@pytest.fixture
def sdk_servers() -> Iterator[SdkServers]:
    servers = SdkServers()
    yield servers
    servers.stop_all()


def _rotate(client: TestClient, owner: Account, bot: dict[str, Any]) -> str:
    answer = client.post(f"/api/v1/bots/{bot['id']}/rotate-secret", headers=owner.headers)
    assert answer.status_code == 200, answer.text
    secret: str = answer.json()["secret"]
    return secret


def _bot(client: TestClient, owner: Account, bot: dict[str, Any]) -> dict[str, Any]:
    answer = client.get(f"/api/v1/bots/{bot['id']}", headers=owner.headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _play(worker: ManagedProcess, *bots: dict[str, Any]) -> Match:
    return wait_for_match(queue_match([uuid.UUID(b["id"]) for b in bots], seed=31), worker, timeout=90)


def _public_texts(client: TestClient, match_id: uuid.UUID, viewers: list[dict[str, str]]) -> list[str]:
    """Everything a viewer who owns none of the bots can read about a match and its bots."""
    texts = []
    for headers in viewers:
        for path in (
            f"/api/v1/matches/{match_id}",
            "/api/v1/matches?limit=100",
            f"/api/v1/matches/{match_id}/replay",
            "/api/v1/bots/public?limit=100",
            "/api/v1/leaderboard/podracing",
        ):
            answer = client.get(path, headers=headers)
            assert answer.status_code < 500, (path, answer.text)
            texts.append(answer.text)
    return texts


def _assert_no_endpoint(texts: list[str], *servers: BotServer) -> None:
    for server in servers:
        host, port = server.url.removeprefix("http://").rsplit(":", 1)
        for text in texts:
            for leak in (host, f":{port}", "127.0.0.1"):
                assert leak not in text, f"{leak!r} in a public view: {text[:2000]}"


def test_rotated_secret_keeps_working_during_the_grace_window(
    client: TestClient,
    alice: Account,
    worker: ManagedProcess,
    sdk_servers: SdkServers,
) -> None:
    old_secret = generate_secret()
    server = sdk_servers(old_secret)  # keeps the old secret: its owner has not updated it yet
    rotated, opponent = register_http_bot(client, alice, server), register_http_bot(client, alice, server)
    _rotate(client, alice, rotated)
    view = _bot(client, alice, rotated)
    assert view["previous_secret_valid_until"] is not None

    for _ in range(2):
        match = _play(worker, rotated, opponent)
        assert match.status == "finished", match.error
        assert match.rated, match.error
        for participant in match.participants:
            assert not participant.forfeited, participant.error_samples
            assert participant.errors == 0, participant.error_samples
            assert participant.mu_after is not None, "the match was not rated"
    assert _bot(client, alice, rotated)["health_failures"] == 0


def test_a_bot_failing_its_health_check_is_unrated_skipped_suspended_and_reactivated(
    client: TestClient,
    alice: Account,
    bob: Account,
    worker: ManagedProcess,
    sdk_servers: SdkServers,
) -> None:
    server = sdk_servers(generate_secret())
    broken, opponent = register_http_bot(client, alice, server), register_http_bot(client, alice, server)
    _rotate(client, alice, broken)
    new_secret = _rotate(client, alice, broken)  # twice: the server's secret is neither of them now
    default_mu = ratings.default_mu()

    for failures in range(1, SUSPEND_AFTER + 1):
        match = _play(worker, broken, opponent)
        assert match.status == "finished", match.error
        assert not match.rated
        assert match.error is not None
        assert broken["name"] in match.error
        assert "health check failed" in match.error
        assert all(p.mu_after is None for p in match.participants), "a failed health check was rated"
        owned = next(p for p in match.participants if str(p.bot_id) == broken["id"])
        assert any("before the match: health check" in s["error"] for s in owned.error_samples)
        _assert_no_endpoint(_public_texts(client, match.id, [{}, bob.headers]), server)
        assert _bot(client, alice, opponent)["rating"]["mu"] == default_mu
        view = _bot(client, alice, broken)
        assert view["rating"]["mu"] == default_mu, "rated forfeits moved mu"
        assert view["health_failures"] == failures
        assert view["last_health_error"]
        assert "health check" in view["last_health_error"]
        if failures == 1:
            with session_scope() as session:
                seated = {c.bot_id for c in ladder_candidates(session, "podracing", get_settings())}
            assert uuid.UUID(broken["id"]) not in seated, "the ladder seats a bot whose check just failed"
            assert uuid.UUID(opponent["id"]) in seated

    view = _bot(client, alice, broken)
    assert view["status"] == "suspended"
    assert view["suspended_at"] is not None
    assert f"{SUSPEND_AFTER} failed pre-match health checks" in view["status_reason"]
    assert client.get(f"/api/v1/bots/{broken['id']}", headers=bob.headers).status_code == 403
    public = client.get("/api/v1/bots/public", params={"status": "suspended", "limit": 100}).json()
    listed = next(b for b in public["items"] if b["id"] == broken["id"])
    assert "status_reason" not in listed
    assert "endpoint" not in listed
    with pytest.raises(MatchRequestError, match="suspended"):
        queue_match([uuid.UUID(broken["id"]), uuid.UUID(opponent["id"])], send=False)

    fixed = sdk_servers(new_secret)  # the owner fixes the bot's server ...
    moved = client.patch(f"/api/v1/bots/{broken['id']}", json={"endpoint": fixed.url}, headers=alice.headers)
    assert moved.status_code == 200, moved.text
    back = client.post(
        f"/api/v1/bots/{broken['id']}/reactivate", headers=alice.headers
    )  # ... and reactivates
    assert back.status_code == 200, back.text
    view = back.json()
    assert view["status"] == "active"
    assert view["health_failures"] == 0
    assert view["status_reason"] is None
    assert view["suspended_at"] is None

    match = _play(worker, broken, opponent)
    assert match.status == "finished"
    assert match.rated
    assert match.error is None
    assert all(p.mu_after is not None for p in match.participants)


def test_a_failed_match_shows_no_endpoint_to_the_public(
    client: TestClient,
    alice: Account,
    bob: Account,
    worker: ManagedProcess,
    sdk_servers: SdkServers,
) -> None:
    """One bot's server is gone (connection refused), the other's has a stale secret (401)."""
    gone, stale = sdk_servers(generate_secret(), host="localhost"), sdk_servers(generate_secret())
    bots = [register_http_bot(client, alice, gone), register_http_bot(client, alice, stale)]
    sdk_servers.stop(gone)
    _rotate(client, alice, bots[1])
    _rotate(client, alice, bots[1])

    match = _play(worker, *bots)
    assert match.status == "failed"
    assert match.error is not None
    assert "no bot could be reached" in match.error
    assert all(bot["name"] in match.error for bot in bots)
    texts = _public_texts(client, match.id, [{}, bob.headers])
    assert any(json.loads(t).get("error") == match.error for t in texts[:1])
    _assert_no_endpoint(texts, gone, stale)
