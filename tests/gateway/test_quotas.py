"""Per-user quotas (shared/quotas.py) through the real gateway: runs created per hour, runs at once,
the day's training time and LLM spend, bots and uploads per hour. Over one: 429, a Retry-After that
says when the window frees up, and a message naming the quota's setting. Admins are exempt; other
users are not affected.

The in-process app gets tight limits per test (its Settings are swapped); a real uvicorn gateway
with tight limits in its environment shows that the count is the database's, shared by processes,
exact under concurrent requests, and that the `arena` command line shows a 429 in one line.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from shared.db.models import BotVersion, EvolutionLlmCall, EvolutionRun, TrainingMetric, TrainingRun
from shared.db.session import session_scope
from shared.ports import free_port
from shared.states import LlmCallStatus, LlmRole
from tests.support.accounts import Account, unique
from tests.support.cli import BOTS, assert_one_line_error, run_cli
from tests.support.gateway import ADMIN_KEY, DECIDE_SOURCE
from tests.support.processes import PYTHON, ManagedProcess

if TYPE_CHECKING:
    # What Starlette's TestClient answers with (it prefers httpx2 to httpx when both are installed).
    from httpx2 import Response

TRAINING = "/api/v1/training/runs"
EVOLUTION = "/api/v1/evolution/runs"
TINY = {"num_envs": 16, "num_steps": 16, "num_minibatches": 2, "update_epochs": 2, "device": "cpu"}
HOUR_S = 3600
DAY_S = 24 * HOUR_S


@pytest.fixture
def limit(client: TestClient) -> Iterator[Callable[..., None]]:
    """Set quotas (Settings fields) on the in-process app for this test only."""
    app: Any = client.app
    original = app.state.settings

    def _limit(**quotas: float) -> None:
        app.state.settings = original.model_copy(update=quotas)

    yield _limit
    app.state.settings = original


def new_training_run(client: TestClient, who: Account) -> Response:
    return client.post(TRAINING, json={"name": unique("run"), "config": TINY}, headers=who.headers)


def new_evolution_run(client: TestClient, who: Account) -> Response:
    return client.post(EVOLUTION, json={"name": unique("evo"), "game": "podracing"}, headers=who.headers)


def new_hosted_bot(client: TestClient, who: Account) -> Response:
    body = {"name": unique("h"), "game": "podracing", "source": DECIDE_SOURCE}
    return client.post("/api/v1/bots/hosted", json=body, headers=who.headers)


def new_http_bot(client: TestClient, who: Account) -> Response:
    body = {"name": unique("web"), "game": "podracing", "endpoint": "http://127.0.0.1:9/"}
    return client.post("/api/v1/bots", json=body, headers=who.headers)


def upload(client: TestClient, who: Account, bot_id: str) -> Response:
    return client.post(f"/api/v1/bots/{bot_id}/versions", json={"source": DECIDE_SOURCE}, headers=who.headers)


def created(answer: Response) -> dict[str, Any]:
    assert answer.status_code == 201, answer.text
    body: dict[str, Any] = answer.json()
    return body


def refused(answer: Response, setting: str, retry_after: tuple[float, float]) -> str:
    """A 429 in the gateway's error format naming `setting`, with Retry-After within the bounds."""
    assert answer.status_code == 429, answer.text
    detail: str = answer.json()["detail"]
    assert setting in detail, detail
    assert detail.startswith("quota reached: "), detail
    low, high = retry_after
    assert low <= int(answer.headers["Retry-After"]) <= high, (answer.headers["Retry-After"], detail)
    return detail


def backdate(model: type[TrainingRun] | type[EvolutionRun], run_id: str, seconds: float) -> None:
    with session_scope() as session:
        session.execute(
            update(model)
            .where(model.id == uuid.UUID(run_id))
            .values(created_at=datetime.now(UTC) - timedelta(seconds=seconds))
        )


def training_seconds(run_id: str, *iterations: tuple[float, float]) -> None:
    """Iterations of (seconds trained, how long ago) on the run, as the trainer worker writes them."""
    now = datetime.now(UTC)
    with session_scope() as session:
        for number, (seconds, ago) in enumerate(iterations, start=1):
            session.add(
                TrainingMetric(
                    run_id=uuid.UUID(run_id),
                    iteration=number,
                    global_step=256 * number,
                    metrics={"iteration": number, "seconds": seconds},
                    created_at=now - timedelta(seconds=ago),
                )
            )


def llm_spend(run_id: str, *calls: tuple[float, float]) -> None:
    """LLM calls of (cost in USD, how long ago) on the run, as the evolver worker records them."""
    now = datetime.now(UTC)
    with session_scope() as session:
        for cost, ago in calls:
            session.add(
                EvolutionLlmCall(
                    run_id=uuid.UUID(run_id),
                    key=f"g0:child:{uuid.uuid4().hex[:8]}",
                    role=LlmRole.CHILD,
                    model="child-model",
                    generation=0,
                    status=LlmCallStatus.OK,
                    cost_usd=cost,
                    created_at=now - timedelta(seconds=ago),
                )
            )


def stop(client: TestClient, who: Account, path: str) -> None:
    answer = client.post(f"{path}/stop", headers=who.headers)
    assert answer.status_code == 200, answer.text


# --------------------------------------------------------------------------------------- runs


def test_runs_created_per_hour_count_both_kinds_and_free_up_as_the_hour_slides(
    client: TestClient, limit: Callable[..., None], make_user: Callable[..., Account], admin: Account
) -> None:
    limit(quota_runs_per_hour=2, quota_active_runs=100)
    alice, bob = make_user("alice"), make_user("bob")
    first = created(new_training_run(client, alice))
    created(new_evolution_run(client, alice))
    detail = refused(new_training_run(client, alice), "ARENA_QUOTA_RUNS_PER_HOUR", (HOUR_S - 30, HOUR_S))
    assert "2 runs (training and evolution together) created in the last hour" in detail
    refused(new_evolution_run(client, alice), "ARENA_QUOTA_RUNS_PER_HOUR", (HOUR_S - 30, HOUR_S))

    # Retry-After is when the oldest run leaves the hour, and then one more passes.
    backdate(TrainingRun, first["id"], HOUR_S - 100)
    refused(new_evolution_run(client, alice), "ARENA_QUOTA_RUNS_PER_HOUR", (90, 100))
    backdate(TrainingRun, first["id"], HOUR_S + 1)
    created(new_evolution_run(client, alice))
    refused(new_training_run(client, alice), "ARENA_QUOTA_RUNS_PER_HOUR", (HOUR_S - 30, HOUR_S))

    created(new_training_run(client, bob))
    for _ in range(3):
        created(new_training_run(client, admin))


def test_runs_at_once_count_queued_and_running_runs_and_a_stop_frees_a_slot(
    client: TestClient, limit: Callable[..., None], make_user: Callable[..., Account], admin: Account
) -> None:
    limit(quota_active_runs=2, quota_runs_per_hour=100)
    alice, bob = make_user("alice"), make_user("bob")
    training = f"{TRAINING}/{created(new_training_run(client, alice))['id']}"
    created(new_evolution_run(client, alice))
    detail = refused(new_training_run(client, alice), "ARENA_QUOTA_ACTIVE_RUNS", (60, 60))
    assert "2 of your runs are queued or running" in detail
    assert "stop one" in detail
    refused(new_evolution_run(client, alice), "ARENA_QUOTA_ACTIVE_RUNS", (60, 60))

    stop(client, alice, training)
    third = f"{EVOLUTION}/{created(new_evolution_run(client, alice))['id']}"
    refused(client.post(f"{training}/resume", headers=alice.headers), "ARENA_QUOTA_ACTIVE_RUNS", (60, 60))
    stop(client, alice, third)
    resumed = client.post(f"{training}/resume", headers=alice.headers)
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["status"] == "queued", resumed.text
    refused(client.post(f"{third}/resume", headers=alice.headers), "ARENA_QUOTA_ACTIVE_RUNS", (60, 60))
    nothing = client.post(f"{training}/resume", headers=alice.headers)
    assert nothing.status_code == 409, "a run that is queued already is not the quota's business"

    created(new_training_run(client, bob))
    created(new_evolution_run(client, bob))
    for _ in range(3):
        created(new_evolution_run(client, admin))


def test_the_days_training_time_refuses_new_and_resumed_training_runs(
    client: TestClient, limit: Callable[..., None], make_user: Callable[..., Account], admin: Account
) -> None:
    limit(quota_training_seconds_per_day=100.0)
    alice, bob = make_user("alice"), make_user("bob")
    run = created(new_training_run(client, alice))["id"]
    stop(client, alice, f"{TRAINING}/{run}")
    # 60 s trained 23.5 h ago and 50 s just now: over the 100 s until the older ones leave the 24 h.
    training_seconds(run, (60.0, DAY_S - 1800), (50.0, 0.0), (0.5, DAY_S + 60))
    detail = refused(new_training_run(client, alice), "ARENA_QUOTA_TRAINING_SECONDS_PER_DAY", (1770, 1800))
    assert "110 s of training time in the last 24 h; at most 100 s of training time" in detail
    resumed = client.post(f"{TRAINING}/{run}/resume", headers=alice.headers)
    refused(resumed, "ARENA_QUOTA_TRAINING_SECONDS_PER_DAY", (1770, 1800))
    created(new_evolution_run(client, alice))  # LLM runs are not training time

    created(new_training_run(client, bob))
    mine = created(new_training_run(client, admin))["id"]
    training_seconds(mine, (500.0, 10.0))
    created(new_training_run(client, admin))


def test_a_training_run_out_of_the_days_time_fails_at_its_next_chunk_saying_why(
    client: TestClient, make_user: Callable[..., Account]
) -> None:
    """The trainer worker's own check, before each chunk (with the default allowance)."""
    from services.trainer.handler import HANDLER
    from shared.config import get_settings
    from shared.jobs import ChunkOutcome, run_chunk

    alice = make_user("alice")
    run = created(new_training_run(client, alice))
    training_seconds(run["id"], (get_settings().quota_training_seconds_per_day + 1, 3600.0))
    with session_scope() as session:
        row = session.get(TrainingRun, uuid.UUID(run["id"]))
        assert row is not None
        job_id = row.job_id
    assert run_chunk(HANDLER, job_id, 0, send_next=False) == ChunkOutcome.FAILED
    failed = client.get(f"{TRAINING}/{run['id']}", headers=alice.headers).json()
    assert failed["status"] == "failed"
    assert "ARENA_QUOTA_TRAINING_SECONDS_PER_DAY" in failed["error"], failed["error"]
    assert "the run stopped here: resume it in" in failed["error"], failed["error"]
    resumed = client.post(f"{TRAINING}/{run['id']}/resume", headers=alice.headers)
    refused(resumed, "ARENA_QUOTA_TRAINING_SECONDS_PER_DAY", (DAY_S - 3600 - 30, DAY_S - 3600))


def test_the_days_llm_spend_refuses_new_and_resumed_evolution_runs(
    client: TestClient, limit: Callable[..., None], make_user: Callable[..., Account], admin: Account
) -> None:
    limit(quota_llm_usd_per_day=1.0)
    alice, bob = make_user("alice"), make_user("bob")
    run = created(new_evolution_run(client, alice))["id"]
    stop(client, alice, f"{EVOLUTION}/{run}")
    llm_spend(run, (0.4, 100.0))
    created(new_evolution_run(client, alice))  # 0.40 USD spent: under the limit
    # 0.70 USD 20 h ago: over 1 USD until it leaves the 24 h (then 0.40 + 0.05 remain).
    llm_spend(run, (0.7, 20 * HOUR_S), (0.05, 0.0), (5.0, DAY_S + 60))
    detail = refused(
        new_evolution_run(client, alice), "ARENA_QUOTA_LLM_USD_PER_DAY", (4 * HOUR_S - 30, 4 * HOUR_S)
    )
    assert "1.1500 USD of LLM calls in the last 24 h; at most 1 USD of LLM calls" in detail
    resumed = client.post(f"{EVOLUTION}/{run}/resume", headers=alice.headers)
    refused(resumed, "ARENA_QUOTA_LLM_USD_PER_DAY", (4 * HOUR_S - 30, 4 * HOUR_S))
    created(new_training_run(client, alice))  # training is not LLM money

    created(new_evolution_run(client, bob))
    mine = created(new_evolution_run(client, admin))["id"]
    llm_spend(mine, (50.0, 10.0))
    created(new_evolution_run(client, admin))


# --------------------------------------------------------------------------------------- bots


def test_bots_registered_per_hour_count_http_and_hosted_bots(
    client: TestClient, limit: Callable[..., None], make_user: Callable[..., Account], admin: Account
) -> None:
    limit(quota_bots_per_hour=2)
    alice, bob = make_user("alice"), make_user("bob")
    created(new_hosted_bot(client, alice))
    created(new_http_bot(client, alice))
    detail = refused(new_hosted_bot(client, alice), "ARENA_QUOTA_BOTS_PER_HOUR", (HOUR_S - 30, HOUR_S))
    assert "2 bots registered in the last hour; at most 2 per hour per user" in detail
    refused(new_http_bot(client, alice), "ARENA_QUOTA_BOTS_PER_HOUR", (HOUR_S - 30, HOUR_S))
    created(new_http_bot(client, bob))
    for _ in range(3):
        created(new_hosted_bot(client, admin))


def test_uploads_per_hour_count_new_versions_but_not_the_evolvers(
    client: TestClient, limit: Callable[..., None], make_user: Callable[..., Account], admin: Account
) -> None:
    from shared import bots
    from shared.config import get_settings
    from shared.db.models import User
    from shared.states import BotOrigin

    limit(quota_uploads_per_hour=2)
    alice, bob = make_user("alice"), make_user("bob")
    with session_scope() as session:  # the evolver's candidate bot of one of alice's runs
        owner = session.get(User, uuid.UUID(alice.id))
        assert owner is not None
        settings = get_settings()
        candidates = bots.register_hosted_bot(
            session, settings, owner, name=unique("evo"), game="podracing", source=DECIDE_SOURCE,
            origin=BotOrigin.EVOLVER,
        )  # fmt: skip
        for _ in range(3):
            bots.add_version(session, settings, candidates, source=DECIDE_SOURCE)
    bot = created(new_hosted_bot(client, alice))["id"]
    created(upload(client, alice, bot))
    created(upload(client, alice, bot))
    detail = refused(upload(client, alice, bot), "ARENA_QUOTA_UPLOADS_PER_HOUR", (HOUR_S - 30, HOUR_S))
    assert "2 hosted code uploads (new versions and training exports) in the last hour" in detail
    with session_scope() as session:
        versions = session.query(BotVersion).filter(BotVersion.bot_id == uuid.UUID(bot)).count()
    assert versions == 3, "the refused upload stored nothing"

    theirs = created(new_hosted_bot(client, bob))["id"]
    created(upload(client, bob, theirs))
    for _ in range(3):
        created(upload(client, admin, bot))


def test_training_exports_count_as_uploads(
    client: TestClient, limit: Callable[..., None], make_user: Callable[..., Account]
) -> None:
    from shared.db.models import TrainingCheckpoint
    from shared.states import HostedContract, TrainingStage

    limit(quota_uploads_per_hour=2)
    alice = make_user("alice")
    run = created(new_training_run(client, alice))["id"]
    with session_scope() as session:  # a checkpoint with its exported bot, as the trainer writes it
        checkpoint = TrainingCheckpoint(
            run_id=uuid.UUID(run), iteration=1, global_step=256, stage=TrainingStage.SOLO, path="x.pt",
            bot_source=DECIDE_SOURCE, bot_contract=HostedContract.DECIDE, summary={},
        )  # fmt: skip
        session.add(checkpoint)
        session.flush()
        session.execute(
            update(TrainingRun)
            .where(TrainingRun.id == uuid.UUID(run))
            .values(latest_checkpoint_id=checkpoint.id)
        )
    export = f"{TRAINING}/{run}/export"
    assert created(client.post(export, headers=alice.headers))["bot_created"] is True
    assert created(client.post(export, headers=alice.headers))["version"]["number"] == 2
    refused(client.post(export, headers=alice.headers), "ARENA_QUOTA_UPLOADS_PER_HOUR", (HOUR_S - 30, HOUR_S))
    bot = created(new_hosted_bot(client, alice))["id"]
    refused(upload(client, alice, bot), "ARENA_QUOTA_UPLOADS_PER_HOUR", (HOUR_S - 30, HOUR_S))


# ------------------------------------------------------------ another gateway process, the CLI

QUOTA_ENV = {"ARENA_QUOTA_BOTS_PER_HOUR": "3", "ARENA_QUOTA_UPLOADS_PER_HOUR": "1"}


@pytest.fixture(scope="module")
def quota_gateway(client: TestClient) -> Iterator[str]:  # noqa: ARG001 (requested for its side effect)
    """A real uvicorn gateway on the same database, with tight quotas from its environment."""
    port = free_port()
    process = ManagedProcess(
        [PYTHON, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1", "--port", str(port)],
        "gateway-quotas",
        env={"ARENA_BOOTSTRAP_ADMIN_KEY": ADMIN_KEY, **QUOTA_ENV},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        process.wait_http(f"{url}/health", timeout=60)
        yield url
    finally:
        process.stop()


@pytest.mark.slow
def test_concurrent_registrations_across_processes_never_overshoot(
    client: TestClient, limit: Callable[..., None], quota_gateway: str, make_user: Callable[..., Account]
) -> None:
    """Eight registrations at once through a second gateway process: exactly the quota's three
    pass; the in-process gateway then counts them too."""
    limit(quota_bots_per_hour=3)
    alice = make_user("alice")
    body = {"game": "podracing", "source": DECIDE_SOURCE}

    def register(_: int) -> int:
        answer = httpx.post(
            f"{quota_gateway}/api/v1/bots/hosted", json={**body, "name": unique("h")}, headers=alice.headers,
            timeout=30,
        )  # fmt: skip
        return answer.status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = sorted(pool.map(register, range(8)))
    assert statuses == [201] * 3 + [429] * 5
    refused(new_hosted_bot(client, alice), "ARENA_QUOTA_BOTS_PER_HOUR", (HOUR_S - 60, HOUR_S))


@pytest.mark.slow
def test_the_cli_shows_a_quota_refusal_in_one_line(
    quota_gateway: str, make_user: Callable[..., Account], tmp_path: Path
) -> None:
    user = make_user("cli")
    env = {"ARENA_URL": quota_gateway, "ARENA_API_KEY": user.key}
    source = str(BOTS / "podracing_decide.py")
    uploaded = run_cli(
        "bots", "upload", source, "--game", "podracing", "--name", unique("q"), cwd=tmp_path, env=env
    )
    assert uploaded.returncode == 0, uploaded.stderr
    bot_id = uploaded.stdout.split("id ")[1].split(",")[0]
    assert run_cli("bots", "upload", source, "--bot", bot_id, cwd=tmp_path, env=env).returncode == 0
    again = run_cli("bots", "upload", source, "--bot", bot_id, cwd=tmp_path, env=env)
    assert_one_line_error(again, "HTTP 429", "quota reached", "ARENA_QUOTA_UPLOADS_PER_HOUR", "try again in")
