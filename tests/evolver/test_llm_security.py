"""The evolver's LLM path as an attacker with an ordinary account meets it, through a real evolver
worker process and loopback "model servers" that record the Authorization header of every request.

- The operator's key (in the worker's environment and in its endpoint registry) reaches only the
  operator's endpoint; a run with a base URL of its own uses its own key, and a run without one is
  refused, at creation and by the worker (a row stored before keys were required).
- Spending on the operator's endpoint stops at the owner's allowance; the next run is refused 429.
- A redirect from a model server is not followed, and nothing of its target lands in the call log.
- The worker connects to the address it checked: a name that resolves elsewhere for the system
  resolver (DNS rebinding, played here by the injected resolver against /etc/hosts) is never asked.
- An answer with NUL, `\\u0000` in tool arguments and lone surrogates is recorded (and paid) once.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import update
from sqlalchemy.orm import Session

from services.evolver.commands import worker_command
from shared.config import LlmEndpoint, ModelPrice, Settings, get_settings
from shared.db.models import EvolutionLlmCall, User
from shared.db.session import session_scope
from shared.evolution import (
    EvolutionConfig,
    LlmKeyMisuse,
    LlmMoneyCapReached,
    create_run,
    new_run,
    operator_allowance,
)
from shared.jobs import enqueue_job
from shared.states import JobStatus, UserRole
from tests.support.evolver_engine import (
    PRICED_MODEL,
    PRICES,
    LlmStub,
    Reply,
    calls,
    config,
    is_root,
    job_row,
    make_user,
    run_row,
    stop_earlier_runs,
    tool_answer,
)
from tests.support.processes import PYTHON, ManagedProcess

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("database_url", "redis_url")]

OPERATOR_KEY = "sk-operator-" + uuid.uuid4().hex
USER_KEY = "sk-user-own-" + uuid.uuid4().hex
INTERNAL_SECRET = "INTERNAL-" + uuid.uuid4().hex
ALLOWANCE_USD = 1.5
"""The operator's allowance per user in these tests: a handful of calls at PRICED_MODEL's price."""
DAILY_LLM_USD = 2.5
"""The daily LLM quota per user in these tests (every run's calls count)."""
ENDPOINT = "house"


class InternalService:
    """Something inside the deployment's network: it must never be asked anything."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.requests: list[tuple[str, str, str]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                service.requests.append((self.command, self.path, self.headers.get("Authorization", "")))
                raw = INTERNAL_SECRET.encode()
                self.send_response(500)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(address, Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address: (host, port)
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def operator_stub() -> Iterator[LlmStub]:
    stub = LlmStub()
    yield stub
    stub.close()


@pytest.fixture(scope="module")
def internal() -> Iterator[InternalService]:
    service = InternalService(("127.0.0.1", 0))
    yield service
    service.close()


def pair_on_one_port() -> tuple[LlmStub, InternalService]:
    """A model server on 127.0.0.2 and an internal service on 127.0.0.1, on the same port."""
    for _ in range(20):
        stub = LlmStub(address=("127.0.0.2", 0))
        try:
            return stub, InternalService(("127.0.0.1", stub.port))
        except OSError:
            stub.close()
    raise AssertionError("no port free on both 127.0.0.1 and 127.0.0.2")


@pytest.fixture(scope="module")
def rebinding() -> Iterator[tuple[LlmStub, InternalService]]:
    stub, service = pair_on_one_port()
    yield stub, service
    stub.close()
    service.close()


def registry(operator_stub: LlmStub) -> dict[str, LlmEndpoint]:
    return {
        ENDPOINT: LlmEndpoint(
            base_url=operator_stub.url,
            api_key=SecretStr(OPERATOR_KEY),
            models=[PRICED_MODEL],
            prices={model: ModelPrice(**price) for model, price in PRICES.items()},
        )
    }


@pytest.fixture(scope="module")
def settings(operator_stub: LlmStub) -> Settings:
    """What the gateway and the worker are configured with (the worker through its environment)."""
    return get_settings().model_copy(
        update={"llm_endpoints": registry(operator_stub), "llm_operator_usd_per_user": ALLOWANCE_USD}
    )


@pytest.fixture(scope="module")
def worker(
    database_url: str,  # noqa: ARG001 (requested for its side effect)
    redis_url: str,  # noqa: ARG001 (requested for its side effect)
    operator_stub: LlmStub,
    rebinding: tuple[LlmStub, InternalService],  # noqa: ARG001 (requested for its side effect)
) -> Iterator[ManagedProcess]:
    stop_earlier_runs()  # this worker takes the runs of this module's tests only
    endpoints = {
        name: {**e.model_dump(mode="json"), "api_key": OPERATOR_KEY}
        for name, e in registry(operator_stub).items()
    }
    process = ManagedProcess(
        [
            *worker_command(name=f"evolver-sec-{uuid.uuid4().hex[:6]}@%h", python=PYTHON),
            "--without-heartbeat",
        ],
        "evolver-security",
        env={
            "ARENA_LLM_ENDPOINTS": json.dumps(endpoints),
            "ARENA_LLM_OPERATOR_USD_PER_USER": str(ALLOWANCE_USD),
            "ARENA_QUOTA_LLM_USD_PER_DAY": str(DAILY_LLM_USD),
            # The operator's key where the evolver used to look for one: it must not leak from there.
            "ARENA_LLM_API_KEY": OPERATOR_KEY,
            "OPENAI_API_KEY": OPERATOR_KEY,
            # The injected resolver says localhost is 127.0.0.2; /etc/hosts says 127.0.0.1.
            "ARENA_STATIC_HOSTS": json.dumps({"localhost": ["127.0.0.2"]}),
        },
    )
    process.wait_log("ready.", timeout=60)
    yield process
    process.stop()


def small(llm: dict[str, Any]) -> EvolutionConfig:
    return config(
        llm={"max_attempts": 1, **llm},
        limits={"max_generations": 1, "max_children_per_generation": 1, "max_cost_usd": None},
        evaluation={"quick_matches": 1},
    )


def _new_owner(session: Session) -> User:
    """A fresh user of its own for a run, read in `session`."""
    user = session.get(User, make_user("sec"))
    assert user is not None
    return user


def start(
    settings: Settings, cfg: EvolutionConfig, api_key: str | None = None
) -> tuple[uuid.UUID, uuid.UUID]:
    with session_scope() as session:
        run = create_run(
            session,
            settings,
            _new_owner(session),
            name=f"sec-{uuid.uuid4().hex[:6]}",
            game="battle",
            config=cfg,
            api_key=api_key,
        )
        return run.id, run.job_id


def start_legacy(settings: Settings, cfg: EvolutionConfig) -> tuple[uuid.UUID, uuid.UUID]:
    """A run as stored before runs had to bring their key (none stored), its chunk sent only once
    the row says so: the worker, idle and waiting, must never see the run with its key."""
    with session_scope() as session:
        run, job = new_run(
            session,
            settings,
            _new_owner(session),
            name=f"sec-{uuid.uuid4().hex[:6]}",
            game="battle",
            config=cfg,
            api_key=USER_KEY,
        )
        run.api_key_encrypted = None
        session.commit()
        enqueue_job(job)  # as create_run sends it: after the commit
        return run.id, job.id


def wait_at_rest(job_id: uuid.UUID, worker: ManagedProcess, timeout: float = 180) -> JobStatus:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = job_row(job_id).status
        if status in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED):
            return status
        if not worker.alive():
            raise AssertionError(f"the worker died:\n{worker.log()[-3000:]}")
        time.sleep(0.2)
    raise AssertionError(
        f"job {job_id} still {job_row(job_id).status} after {timeout}s\n{worker.log()[-3000:]}"
    )


def call_log_text(run_id: uuid.UUID) -> str:
    return json.dumps(
        [[c.answer, c.error, c.tool_calls, c.rejected_tool_calls] for c in calls(run_id)], ensure_ascii=False
    )


def test_a_run_of_its_own_url_uses_its_own_key_and_never_the_operators(
    settings: Settings, worker: ManagedProcess
) -> None:
    stub = LlmStub()
    try:
        cfg = small({"base_url": stub.url, "root_model": PRICED_MODEL, "child_model": PRICED_MODEL})
        with pytest.raises(LlmKeyMisuse, match="must bring its own api_key"):
            start(settings, cfg)
        _, job_id = start(settings, cfg, api_key=USER_KEY)
        assert wait_at_rest(job_id, worker) == JobStatus.FINISHED
        assert stub.authorizations, "the run called its model server"
        assert set(stub.authorizations) == {f"Bearer {USER_KEY}"}

        # A run stored before runs had to bring their key: the worker refuses it, sends nothing.
        asked = len(stub.authorizations)
        legacy_id, legacy_job = start_legacy(settings, cfg)
        assert wait_at_rest(legacy_job, worker) == JobStatus.FAILED
        assert "no key of its own" in (job_row(legacy_job).error or "")
        assert len(stub.authorizations) == asked, "nothing was sent without the run's own key"
        assert all(OPERATOR_KEY not in header for header in stub.authorizations)
        assert calls(legacy_id) == []
    finally:
        stub.close()


def test_the_operators_endpoint_gets_the_operators_key_up_to_the_allowance(
    settings: Settings, worker: ManagedProcess, operator_stub: LlmStub
) -> None:
    from services.gateway.app import create_app

    admin_key = "arena_admin_" + uuid.uuid4().hex
    gateway_settings = settings.model_copy(update={"bootstrap_admin_key": SecretStr(admin_key)})
    with TestClient(create_app(gateway_settings), raise_server_exceptions=False) as gateway:
        made = gateway.post(
            "/api/v1/users",
            json={"name": f"allowance-{uuid.uuid4().hex[:6]}"},
            headers={"X-API-Key": admin_key},
        )
        assert made.status_code == 201, made.text
        owner_id = uuid.UUID(made.json()["user"]["id"])
        headers = {"X-API-Key": made.json()["api_key"]["api_key"]}
        cfg = config(
            llm={"endpoint": ENDPOINT, "max_attempts": 1, "root_max_tokens": 200, "child_max_tokens": 512},
            limits={"max_generations": 20, "max_children_per_generation": 2, "max_cost_usd": None},
            evaluation={"quick_matches": 1},
        )
        with session_scope() as session:
            user = session.get(User, owner_id)
            assert user is not None
            with pytest.raises(LlmKeyMisuse, match="operator's key"):
                new_run(session, settings, user, name="with-key", game="battle", config=cfg, api_key=USER_KEY)
            run = create_run(
                session, settings, user, name=f"house-{uuid.uuid4().hex[:6]}", game="battle", config=cfg
            )
            run_id, job_id = run.id, run.job_id
            assert EvolutionConfig.model_validate(run.config).llm.root_model == PRICED_MODEL, (
                "the endpoint's model"
            )
        assert wait_at_rest(job_id, worker) == JobStatus.FINISHED
        assert operator_stub.authorizations
        assert set(operator_stub.authorizations) == {f"Bearer {OPERATOR_KEY}"}
        assert "allowance" in (run_row(run_id).termination_reason or "")
        with session_scope() as session:
            allowance = operator_allowance(session, settings, owner_id)
        assert allowance.spent_usd == pytest.approx(run_row(run_id).spent_usd)
        assert allowance.spent_usd <= ALLOWANCE_USD, "the worst case of each call was checked first"
        assert allowance.spent_usd > ALLOWANCE_USD / 2

        # The next run on the operator's endpoint is refused until enough spending leaves the window.
        with session_scope() as session:
            session.execute(
                update(EvolutionLlmCall)
                .where(EvolutionLlmCall.run_id == run_id)
                .values(cost_usd=ALLOWANCE_USD)
            )
            session.commit()
            user = session.get(User, owner_id)
            assert user is not None
            with pytest.raises(LlmMoneyCapReached) as refused:
                new_run(session, settings, user, name="more", game="battle", config=cfg)
        assert 29 * 86_400 < refused.value.retry_after_s <= 30 * 86_400
        body = {"name": "more", "game": "battle", "config": {"llm": {"endpoint": ENDPOINT}}}
        answer = gateway.post("/api/v1/evolution/runs", json=body, headers=headers)
        assert answer.status_code == 429, answer.text
        assert 29 * 86_400 < int(answer.headers["Retry-After"]) <= 30 * 86_400
        assert "ARENA_LLM_OPERATOR_USD_PER_USER" in answer.json()["detail"]
        listed = gateway.get("/api/v1/evolution/endpoints", headers=headers)
        assert listed.status_code == 200, listed.text
        assert [e["name"] for e in listed.json()["endpoints"]] == [ENDPOINT]
        assert OPERATOR_KEY not in listed.text
        assert operator_stub.url not in listed.text
        assert listed.json()["allowance_usd"] == ALLOWANCE_USD
    with session_scope() as session:
        session.execute(update(User).where(User.id == owner_id).values(role=UserRole.ADMIN))
        session.commit()
        admin = session.get(User, owner_id)
        assert admin is not None
        new_run(session, settings, admin, name="admin", game="battle", config=cfg)  # admins: no allowance
        session.rollback()


def test_a_running_run_stops_at_its_owners_daily_llm_quota(
    settings: Settings, worker: ManagedProcess
) -> None:
    stub = LlmStub()
    try:
        cfg = config(
            llm={
                "base_url": stub.url,
                "root_model": PRICED_MODEL,
                "child_model": PRICED_MODEL,
                "prices": PRICES,
            },
            limits={"max_generations": 50, "max_children_per_generation": 2, "max_cost_usd": None},
            evaluation={"quick_matches": 1},
        )
        run_id, job_id = start(settings, cfg, api_key=USER_KEY)
        assert wait_at_rest(job_id, worker, timeout=300) == JobStatus.FINISHED
        assert "ARENA_QUOTA_LLM_USD_PER_DAY" in (run_row(run_id).termination_reason or "")
        assert 0 < run_row(run_id).spent_usd <= DAILY_LLM_USD, "stopped before a call could pass it"
    finally:
        stub.close()


def test_a_redirect_is_not_followed_and_its_target_is_never_shown(
    settings: Settings, worker: ManagedProcess, internal: InternalService
) -> None:
    stub = LlmStub(lambda _body, _index: Reply(307, {}, headers={"Location": f"{internal.url}/admin"}))
    try:
        cfg = small({"base_url": stub.url, "root_model": PRICED_MODEL, "child_model": PRICED_MODEL})
        run_id, job_id = start(settings, cfg, api_key=USER_KEY)
        wait_at_rest(job_id, worker)
        assert stub.requests, "the run asked its model server"
        assert internal.requests == [], "the redirect's target was never asked"
        recorded = calls(run_id)
        assert recorded, [c.error for c in recorded]
        assert all("redirect" in (c.error or "") for c in recorded), [c.error for c in recorded]
        assert INTERNAL_SECRET not in call_log_text(run_id)
        assert internal.url not in call_log_text(run_id)
    finally:
        stub.close()


def test_the_worker_connects_to_the_address_it_checked(
    settings: Settings, worker: ManagedProcess, rebinding: tuple[LlmStub, InternalService]
) -> None:
    checked, elsewhere = rebinding
    cfg = small(
        {
            "base_url": f"http://localhost:{checked.port}/v1",
            "root_model": PRICED_MODEL,
            "child_model": PRICED_MODEL,
        }
    )
    run_id, job_id = start(settings, cfg, api_key=USER_KEY)
    assert wait_at_rest(job_id, worker) == JobStatus.FINISHED
    assert elsewhere.requests == [], "the system resolver's answer was never used"
    assert checked.authorizations
    assert set(checked.authorizations) == {f"Bearer {USER_KEY}"}
    assert len(calls(run_id)) == len(checked.requests)


def test_nul_and_lone_surrogates_in_an_answer_are_recorded_and_paid_once(
    settings: Settings, worker: ManagedProcess
) -> None:
    poison = "a\x00b \ud800 c\udfff"

    def poisoned(body: dict[str, Any], index: int) -> Reply | None:
        if is_root(body) and index == 0:
            answer = tool_answer(
                "modify_parameters", {"updates": {"quick_matches": 1}, "reasoning": poison}, text=poison
            )
            return Reply(200, answer)
        if not is_root(body) and index == 0:
            return Reply(200, tool_answer("x\x00y", {"arg": poison}, text=poison))
        return None

    stub = LlmStub(poisoned)
    try:
        cfg = small(
            {"base_url": stub.url, "root_model": PRICED_MODEL, "child_model": PRICED_MODEL, "prices": PRICES}
        )
        run_id, job_id = start(settings, cfg, api_key=USER_KEY)
        assert wait_at_rest(job_id, worker) == JobStatus.FINISHED
        recorded = calls(run_id)
        keys = [c.key for c in recorded]
        assert len(keys) == len(set(keys)) == len(stub.requests), "each call made once and recorded once"
        first = next(c for c in recorded if c.key == "root:0")
        assert first.answer is not None
        assert "\x00" not in first.answer
        assert "a\ufffdb" in first.answer
        assert "\\u0000" not in json.dumps(first.tool_calls)
        assert run_row(run_id).spent_usd == pytest.approx(sum(c.cost_usd for c in recorded))
        assert all(c.cost_usd > 0 for c in recorded)
    finally:
        stub.close()


def test_a_connection_goes_nowhere_but_the_checked_address() -> None:
    """The pinned client refuses a request to any other host, whatever asks for it."""
    from shared.botclient.ssrf import ResolvedEndpoint, parse_endpoint
    from shared.evolution.endpoint import pinned_http_client

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    endpoint = ResolvedEndpoint(parse_endpoint(f"http://model.test:{port}"), "model.test", port, "127.0.0.1")
    with (
        pinned_http_client(endpoint, timeout_s=2) as http,
        pytest.raises(httpx.UnsupportedProtocol, match="outside the endpoint"),
    ):
        http.get(f"http://127.0.0.1:{port}/")
    listener.close()
