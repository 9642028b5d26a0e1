"""A real gateway (uvicorn) on a PostgreSQL server of this test's own, which the test kills and
starts again: while it is down every endpoint answers 503 with Retry-After and a one-line message
(an HTML page for the HTML pages), never 500; the log holds a line per failure kind per interval,
not a traceback per request; once it is back, the same requests answer as before."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from shared.config import get_settings
from shared.crypto import encrypt_secret
from shared.db.models import Bot
from shared.db.session import session_scope
from shared.ports import free_port
from shared.protocol.signing import generate_secret
from tests.support.owned_services import OwnedPostgres, OwnedRedis, owned_postgres, owned_redis
from tests.support.processes import PYTHON, ManagedProcess

pytestmark = pytest.mark.slow

ADMIN_KEY = "arena_admin_" + secrets.token_urlsafe(24)
LEADERBOARD = "/api/v1/leaderboard/podracing"
API_READS = [LEADERBOARD, "/api/v1/matches", "/api/v1/bots", f"/api/v1/matches/{uuid.uuid4()}", "/api/v1/me"]
HTML_PAGES = ["/", "/games/podracing", f"/bots/{uuid.uuid4()}", f"/training/{uuid.uuid4()}"]
GATEWAY = [PYTHON, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1"]
ROUNDS = 10
"""Each request is asked this many times during the outage: the log must not grow with them."""
MAX_OUTAGE_LOG_LINES = 6
"""One line per failure kind per minute (an OperationalError, perhaps a pool error, the leaderboard's
failed build) with room to spare; before, every failed request logged hundreds of lines."""


@dataclass
class OutageGateway:
    url: str
    process: ManagedProcess
    postgres: OwnedPostgres
    redis: OwnedRedis


@pytest.fixture(scope="module")
def outage_gateway() -> Iterator[OutageGateway]:
    with owned_postgres() as postgres, owned_redis() as redis_server:
        port = free_port()
        gateway = ManagedProcess(
            [*GATEWAY, "--port", str(port), "--no-access-log"],  # the count below is of error lines
            "outage-gateway",
            env={
                "ARENA_DATABASE_URL": postgres.url(),
                "ARENA_REDIS_URL": redis_server.url,
                "ARENA_BOOTSTRAP_ADMIN_KEY": ADMIN_KEY,
                "ARENA_LEADERBOARD_CACHE_S": "0.2",
                "ARENA_ACCESS_LOG": "0",
            },
        )
        try:
            url = f"http://127.0.0.1:{port}"
            gateway.wait_http(f"{url}/health", timeout=60)
            yield OutageGateway(url, gateway, postgres, redis_server)
        finally:
            gateway.stop()


def _ask(client: httpx.Client, method: str, path: str) -> httpx.Response:
    if method == "POST":
        body = {"game": "podracing", "bot_ids": [str(uuid.uuid4()), str(uuid.uuid4())]}
        return client.post(path, json=body)
    return client.get(path, headers={"Accept": "text/html"} if path in HTML_PAGES else {})


def test_database_outage_is_503_everywhere_quietly_and_ends_by_itself(outage_gateway: OutageGateway) -> None:
    url, gateway, postgres = outage_gateway.url, outage_gateway.process, outage_gateway.postgres
    requests = [("GET", path) for path in API_READS + HTML_PAGES] + [("POST", "/api/v1/matches")]
    with httpx.Client(base_url=url, headers={"X-API-Key": ADMIN_KEY}, timeout=30) as client:
        before = {(method, path): _ask(client, method, path).status_code for method, path in requests}
        assert all(status < 500 for status in before.values()), before
        time.sleep(0.5)  # the cached leaderboard page expires: it must be built during the outage

        postgres.kill()
        lines_before = len(gateway.log().splitlines())
        started = time.monotonic()
        for _ in range(ROUNDS):
            for method, path in requests:
                answer = _ask(client, method, path)
                assert answer.status_code == 503, (method, path, answer.status_code, answer.text[:300])
                assert answer.headers["Retry-After"] == "5", (method, path)
                if path in HTML_PAGES:
                    assert answer.headers["content-type"].startswith("text/html"), path
                    assert "the database is unreachable" in answer.text, path
                else:
                    assert answer.json() == {"detail": "the database is unreachable; try again later"}
        outage_s = time.monotonic() - started
        outage_log = gateway.log().splitlines()[lines_before:]
        print(
            f"\n{ROUNDS * len(requests)} requests in {outage_s:.1f} s during the outage: "
            f"{len(outage_log)} log lines ({len(outage_log) / outage_s:.1f}/s)"
        )
        assert len(outage_log) <= MAX_OUTAGE_LOG_LINES, "\n".join(outage_log[:80])
        assert not any("Traceback" in line for line in outage_log), "\n".join(outage_log[:80])

        postgres.start()
        back = time.monotonic()
        deadline = back + 30
        after: dict[tuple[str, str], int] = {}
        while time.monotonic() < deadline:
            after = {(method, path): _ask(client, method, path).status_code for method, path in requests}
            if after == before:
                break
            time.sleep(0.2)
        assert after == before
        print(f"every endpoint answered as before {time.monotonic() - back:.1f} s after PostgreSQL returned")


def test_redis_outage_is_never_a_500(outage_gateway: OutageGateway) -> None:
    """Reads need no Redis and still answer; what needs it (readiness here) is a 503."""
    requests = [("GET", path) for path in API_READS + HTML_PAGES] + [("POST", "/api/v1/matches")]
    with httpx.Client(base_url=outage_gateway.url, headers={"X-API-Key": ADMIN_KEY}, timeout=30) as client:
        before = {(method, path): _ask(client, method, path).status_code for method, path in requests}
        outage_gateway.redis.kill()
        try:
            lines_before = len(outage_gateway.process.log().splitlines())
            for _ in range(ROUNDS):
                during = {(method, path): _ask(client, method, path).status_code for method, path in requests}
                assert during == before
                assert client.get("/ready").status_code == 503
            outage_log = outage_gateway.process.log().splitlines()[lines_before:]
            asked = ROUNDS * (len(requests) + 1)
            print(f"\n{asked} requests during a Redis outage: {len(outage_log)} log lines")
            assert len(outage_log) <= MAX_OUTAGE_LOG_LINES, "\n".join(outage_log[:80])
        finally:
            outage_gateway.redis.start()


def _challenger(gateway: OutageGateway, client: httpx.Client) -> tuple[str, list[str]]:
    """A user who is not an admin (so the challenge rate limit, in Redis, applies to him), his API
    key and two bots of his."""
    answer = client.post("/api/v1/users", json={"name": f"challenger-{uuid.uuid4().hex[:8]}"})
    assert answer.status_code == 201, answer.text
    key = answer.json()["api_key"]["api_key"]
    user_id = uuid.UUID(client.get("/api/v1/me", headers={"X-API-Key": key}).json()["id"])
    with session_scope(gateway.postgres.url()) as session:
        bots = [
            Bot(
                owner_id=user_id,
                name=f"challenger-{uuid.uuid4().hex[:8]}",
                game="podracing",
                kind="http",
                endpoint="http://127.0.0.1:9",
                secret_encrypted=encrypt_secret(get_settings(), generate_secret()),
            )
            for _ in range(2)
        ]
        session.add_all(bots)
        session.flush()
        return key, [str(bot.id) for bot in bots]


def test_redis_side_503s_say_when_to_try_again(outage_gateway: OutageGateway) -> None:
    """What needs Redis answers 503 with Retry-After while it is down: a user's challenge (the rate
    limiter), an admin's challenge (the match queue; the match is stored as failed), readiness."""
    with httpx.Client(base_url=outage_gateway.url, headers={"X-API-Key": ADMIN_KEY}, timeout=30) as client:
        key, bot_ids = _challenger(outage_gateway, client)
        challenge = {"game": "podracing", "bot_ids": bot_ids}
        outage_gateway.redis.kill()
        try:
            lines_before = len(outage_gateway.process.log().splitlines())
            for _ in range(ROUNDS):
                answers = {
                    "user's challenge": client.post(
                        "/api/v1/matches", json=challenge, headers={"X-API-Key": key}
                    ),
                    "admin's challenge": client.post("/api/v1/matches", json=challenge),
                    "readiness": client.get("/ready"),
                }
                for what, answer in answers.items():
                    assert answer.status_code == 503, (what, answer.status_code, answer.text[:300])
                    assert answer.headers.get("Retry-After") == "5", (what, dict(answer.headers))
            assert "rate limiter" in answers["user's challenge"].json()["detail"]
            assert "queue is unreachable" in answers["admin's challenge"].json()["detail"]
            outage_log = outage_gateway.process.log().splitlines()[lines_before:]
            print(f"\n{3 * ROUNDS} Redis-side requests during a Redis outage: {len(outage_log)} log lines")
            assert len(outage_log) <= MAX_OUTAGE_LOG_LINES, "\n".join(outage_log[:80])
        finally:
            outage_gateway.redis.start()
