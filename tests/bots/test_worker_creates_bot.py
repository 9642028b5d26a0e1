"""A real Celery worker registers a hosted bot and a new version through shared.bots, and the API
cannot tell it from one registered through the API: same fields, rating, current version, source
hash, and the same refusal (with the same message and problems) for code the gate rejects."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from shared.db.models import Bot, BotVersion
from shared.db.session import session_scope
from shared.queue import celery_app
from shared.states import BotOrigin, HostedContract
from tests.support import bot_tasks
from tests.support.accounts import Account, unique
from tests.support.environment import TEST_REDIS_URL
from tests.support.gateway import DECIDE_SOURCE
from tests.support.processes import PYTHON, ManagedProcess

pytestmark = pytest.mark.slow

SECOND_SOURCE = DECIDE_SOURCE + "\n\nSPEED = 90  # version two\n"
REFUSED_SOURCE = "import os\n\n\ndef decide(observation):\n    return os.getcwd()\n"
WHEN = {"id", "name", "created_at", "updated_at"}
"""What differs between two bots registered one after the other."""


@pytest.fixture(scope="module")
def bots_worker(database_url: str, redis_url: str) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    """A worker for the test tasks only, with the runner's worker flags (see
    services.match_runner.commands): one process, no gossip, mingle or heartbeat."""
    command = [PYTHON, "-m", "celery", "-A", "tests.support.bot_tasks", "worker"]
    command += ["-Q", bot_tasks.QUEUE, "-c", "1", "--loglevel", "INFO"]
    command += ["-n", f"bots-{uuid.uuid4().hex[:6]}@%h", "--without-gossip", "--without-mingle"]
    command += ["--without-heartbeat"]
    process = ManagedProcess(command, "bots-worker")
    try:
        process.wait_log("ready.", timeout=60)
        yield process
    finally:
        process.stop()


@pytest.fixture
def carol(make_user: Callable[..., Account]) -> Account:
    return make_user("carol")


def _send(task: str, **kwargs: Any) -> str:
    """Send a test task by name; the key under which the worker will record its outcome."""
    key = f"arena-test-bots:{uuid.uuid4().hex}"
    celery_app.send_task(task, kwargs={"report_key": key, **kwargs}, queue=bot_tasks.QUEUE)
    return key


def _send_register_hosted(owner: Account, name: str, source: str, origin: BotOrigin, **extra: Any) -> str:
    """The registration task for a podracing bot with the decide contract, as the API's default."""
    return _send(
        bot_tasks.TASK_REGISTER_HOSTED,
        owner_id=owner.id,
        name=name,
        game="podracing",
        source=source,
        contract=HostedContract.DECIDE,
        origin=origin,
        **extra,
    )


def _wait(check: Callable[[], Any], worker: ManagedProcess, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        if not worker.alive():
            raise AssertionError(f"the worker died before {what}:\n{worker.log()[-3000:]}")
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {timeout}s:\n{worker.log()[-3000:]}")


def _bot_id(name: str) -> uuid.UUID | None:
    with session_scope() as session:
        return session.scalar(select(Bot.id).where(Bot.name == name))


def _versions(bot_id: uuid.UUID) -> int:
    with session_scope() as session:
        return session.scalar(select(func.count()).where(BotVersion.bot_id == bot_id)) or 0


def _outcome(key: str) -> dict[str, Any] | None:
    client = redis.Redis.from_url(TEST_REDIS_URL)
    try:
        raw = client.get(key)
    finally:
        client.close()
    assert raw is None or isinstance(raw, bytes), raw
    if not raw:
        return None
    outcome = json.loads(raw)
    assert isinstance(outcome, dict), outcome
    return outcome


def _bot(client: TestClient, owner: Account, bot_id: object) -> dict[str, Any]:
    answer = client.get(f"/api/v1/bots/{bot_id}", headers=owner.headers)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _version_list(client: TestClient, owner: Account, bot_id: object) -> list[dict[str, Any]]:
    answer = client.get(f"/api/v1/bots/{bot_id}/versions", headers=owner.headers)
    assert answer.status_code == 200, answer.text
    return [{k: v for k, v in version.items() if k not in ("id", "created_at")} for version in answer.json()]


def _without(view: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in keys}


def test_a_worker_registers_a_hosted_bot_and_a_version_as_the_api_does(
    client: TestClient, carol: Account, bots_worker: ManagedProcess
) -> None:
    name = unique("worker-bot")
    _send_register_hosted(carol, name, DECIDE_SOURCE, BotOrigin.HUMAN)
    via_api = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("api-bot"), "game": "podracing", "source": DECIDE_SOURCE},
        headers=carol.headers,
    )
    assert via_api.status_code == 201, via_api.text
    api_id = via_api.json()["id"]
    worker_id = _wait(lambda: _bot_id(name), bots_worker, f"bot {name} in the database")

    made_by_worker, made_by_api = _bot(client, carol, worker_id), _bot(client, carol, api_id)
    assert made_by_worker["name"] == name
    assert _without(made_by_worker, WHEN) == _without(made_by_api, WHEN)
    assert made_by_worker["kind"] == "hosted"
    assert made_by_worker["status"] == "active"
    assert made_by_worker["origin"] == "human"
    assert made_by_worker["current_version"] == 1
    assert made_by_worker["rating"] is not None
    assert made_by_worker["rating"]["matches_played"] == 0
    assert _version_list(client, carol, worker_id) == _version_list(client, carol, api_id)
    first = client.get(f"/api/v1/bots/{worker_id}/versions/1", headers=carol.headers).json()
    assert first["source"] == DECIDE_SOURCE
    assert first["source_sha256"] == hashlib.sha256(DECIDE_SOURCE.encode()).hexdigest()

    notes = {"parent": "v1", "run": "worker-test"}
    key = _send(bot_tasks.TASK_ADD_VERSION, bot_id=str(worker_id), source=SECOND_SOURCE, notes=notes)
    uploaded = client.post(
        f"/api/v1/bots/{api_id}/versions",
        json={"source": SECOND_SOURCE, "notes": notes},
        headers=carol.headers,
    )
    assert uploaded.status_code == 201, uploaded.text
    _wait(lambda: _versions(worker_id) == 2, bots_worker, "version 2 in the database")
    outcome = _wait(lambda: _outcome(key), bots_worker, "the version task's outcome")
    assert outcome["number"] == 2
    assert "error" not in outcome

    made_by_worker, made_by_api = _bot(client, carol, worker_id), _bot(client, carol, api_id)
    assert _without(made_by_worker, WHEN) == _without(made_by_api, WHEN)
    assert made_by_worker["current_version"] == 2
    versions = _version_list(client, carol, worker_id)
    assert versions == _version_list(client, carol, api_id)
    assert [(v["number"], v["current"]) for v in versions] == [(1, False), (2, True)]
    assert versions[1]["notes"] == notes
    assert versions[1]["source_sha256"] == hashlib.sha256(SECOND_SOURCE.encode()).hexdigest()


def test_a_worker_gets_the_same_refusal_for_bad_code_as_the_api(
    client: TestClient, carol: Account, bots_worker: ManagedProcess
) -> None:
    name = unique("refused")
    key = _send_register_hosted(carol, name, REFUSED_SOURCE, BotOrigin.EVOLVER)
    answer = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("refused"), "game": "podracing", "source": REFUSED_SOURCE},
        headers=carol.headers,
    )
    assert answer.status_code == 422
    outcome = _wait(lambda: _outcome(key), bots_worker, "the registration task's outcome")
    assert outcome["error"] == "InvalidBotSource"
    assert outcome["message"] == answer.json()["detail"]
    assert "'os'" in outcome["message"]
    assert outcome["details"] == answer.json()["errors"]
    assert outcome["details"][0]["line"] == 1
    assert _bot_id(name) is None

    hosted = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("base"), "game": "podracing", "source": DECIDE_SOURCE},
        headers=carol.headers,
    ).json()
    key = _send(bot_tasks.TASK_ADD_VERSION, bot_id=hosted["id"], source=REFUSED_SOURCE)
    outcome = _wait(lambda: _outcome(key), bots_worker, "the version task's outcome")
    upload = client.post(
        f"/api/v1/bots/{hosted['id']}/versions", json={"source": REFUSED_SOURCE}, headers=carol.headers
    )
    assert upload.status_code == 422
    assert outcome["error"] == "InvalidBotSource"
    assert outcome["message"] == upload.json()["detail"]
    assert _bot(client, carol, hosted["id"])["current_version"] == 1


def test_a_worker_registers_bots_of_its_own_origin(
    client: TestClient, carol: Account, bots_worker: ManagedProcess
) -> None:
    name = unique("evolved")
    _send_register_hosted(carol, name, DECIDE_SOURCE, BotOrigin.EVOLVER, notes={"generation": 3})
    bot_id = _wait(lambda: _bot_id(name), bots_worker, f"bot {name} in the database")
    assert _bot(client, carol, bot_id)["origin"] == "evolver"
    public = client.get("/api/v1/bots/public", params={"limit": 200}).json()["items"]
    assert [b["origin"] for b in public if b["id"] == str(bot_id)] == ["evolver"]
    assert _version_list(client, carol, bot_id)[0]["notes"] == {"generation": 3}
