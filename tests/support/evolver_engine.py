"""What the engine tests share: an OpenAI-compatible server on loopback that answers like the
built-in root and child unless a test intercepts a request, runs created in the test database,
and a driver that works a run's chunks in this process (as `arena evolve` does)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import redis
from sqlalchemy import select, update

from services.evolver.llm import builtin_completion
from services.evolver.store import programs as program_store
from shared.config import get_settings
from shared.db.models import EvolutionEvent, EvolutionLlmCall, EvolutionProgram, EvolutionRun, Job, User
from shared.db.session import session_scope
from shared.evolution import EvolutionConfig, new_run
from shared.jobs import run_chunk
from shared.queue import QUEUE_EVOLUTION
from shared.states import EvolutionEventKind, JobStatus

PRICED_MODEL = "test-priced"
PRICES = {PRICED_MODEL: {"input": 100.0, "output": 200.0}}
"""$100 / $200 per million tokens: a built-in-sized call costs cents, so caps bite quickly."""
RUN_KEY = "sk-run-own-key-" + uuid.uuid4().hex[:12]
"""The key runs on the stub bring: their own, never the platform's."""
FAST_BATTLE = {"time_limit_s": 4.0}
"""20 decision turns: a match in a fraction of a second."""

Intercept = Callable[[dict[str, Any], int], "Reply | None"]
"""(request body, index of this request among those of its role) -> a reply, or None for the
built-in answer."""


class Reply:
    def __init__(
        self,
        status: int = 200,
        body: Any = None,
        *,
        delay_s: float = 0.0,
        drop: bool = False,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.delay_s = delay_s
        self.drop = drop
        self.headers = headers or {}


def is_root(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


class LlmStub:
    """Answers every chat completion like the built-in models (with usage), unless intercepted."""

    def __init__(
        self,
        intercept: Intercept | None = None,
        *,
        delay_s: float = 0.0,
        address: tuple[str, int] = ("127.0.0.1", 0),
    ) -> None:
        self.intercept = intercept
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        """The Authorization header of every request, in order (empty string when there was none)."""
        self.lock = threading.Lock()
        self.release = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with stub.lock:
                    index = sum(1 for r in stub.requests if is_root(r) == is_root(body))
                    stub.requests.append(body)
                    stub.authorizations.append(self.headers.get("Authorization", ""))
                reply = stub.intercept(body, index) if stub.intercept else None
                if reply is None:
                    reply = Reply(200, builtin_completion(body), delay_s=stub.delay_s)
                if reply.delay_s:
                    stub.release.wait(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    return
                raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(address, Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        host = self.server.server_address[0]
        assert isinstance(host, str)  # an AF_INET server's address: (host, port)
        return f"http://{host}:{self.port}/v1"

    def count(self, root: bool | None = None) -> int:
        with self.lock:
            return sum(1 for r in self.requests if root is None or is_root(r) == root)

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def tool_answer(name: str, arguments: dict[str, Any], text: str = "scripted") -> dict[str, Any]:
    body = builtin_completion({"model": "x", "messages": [{"role": "user", "content": "x"}]})
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {
                "id": f"call_{uuid.uuid4().hex[:8]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }
    body["choices"][0]["finish_reason"] = "tool_calls"
    return body


def text_answer(text: str) -> dict[str, Any]:
    body = builtin_completion({"model": "x", "messages": [{"role": "user", "content": "x"}]})
    body["choices"][0]["message"] = {"role": "assistant", "content": text}
    body["choices"][0]["finish_reason"] = "stop"
    return body


def config(**overrides: Any) -> EvolutionConfig:
    """A small battle run: fast matches, the tournament against the built-ins in process."""
    base: dict[str, Any] = {
        "limits": {"max_generations": 2, "max_children_per_generation": 2, "max_cost_usd": None},
        "evaluation": {
            "quick_matches": 2,
            "tournament_matches": 0,
            "tournament": "builtins",
            "match_config": FAST_BATTLE,
            "smoke_turns": 5,
        },
        "chunk_seconds": 60,
        "promotion_threshold": 1.0,
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return EvolutionConfig.model_validate(base)


def stop_earlier_runs() -> None:
    """Stop the evolution runs that earlier tests of this session left queued or running, and empty
    the evolution queue: an evolver worker started next takes only what its test queues then. (The
    API tests create runs that no worker takes; a worker started later would work them first, a
    chunk for up to its `chunk_seconds`.)"""
    with session_scope() as session:
        session.execute(
            update(Job)
            .where(Job.queue == QUEUE_EVOLUTION, Job.status.in_([JobStatus.QUEUED, JobStatus.RUNNING]))
            .values(status=JobStatus.STOPPED, lease_owner=None, lease_token=None)
        )
    redis.Redis.from_url(get_settings().redis_url).delete(QUEUE_EVOLUTION)


def make_user(prefix: str = "evo") -> uuid.UUID:
    with session_scope() as session:
        user = User(name=f"{prefix}-{uuid.uuid4().hex[:8]}")
        session.add(user)
        session.commit()
        return user.id


def make_run(
    cfg: EvolutionConfig, *, game: str = "battle", owner: uuid.UUID | None = None
) -> tuple[uuid.UUID, uuid.UUID]:
    """A queued run (nothing sent to a broker): (run id, job id)."""
    owner_id = owner or make_user()
    with session_scope() as session:
        user = session.get(User, owner_id)
        assert user is not None
        run, job = new_run(
            session,
            get_settings(),
            user,
            name=f"test-{uuid.uuid4().hex[:6]}",
            game=game,
            config=cfg,
            api_key=RUN_KEY if cfg.llm.base_url else None,
        )
        session.commit()
        return run.id, job.id


def drive(job_id: uuid.UUID, max_chunks: int = 50) -> JobStatus:
    """Work the run's chunks in this process until it is at rest."""
    from services.evolver.handler import HANDLER

    for _ in range(max_chunks):
        with session_scope() as session:
            job = session.get(Job, job_id)
            assert job is not None
            chunk, status = job.chunk, job.status
        if status in (JobStatus.FINISHED, JobStatus.STOPPED, JobStatus.FAILED):
            return status
        run_chunk(HANDLER, job_id, chunk, send_next=False)
    raise AssertionError(f"job {job_id} did not come to rest in {max_chunks} chunks")


def run_row(run_id: uuid.UUID) -> EvolutionRun:
    with session_scope() as session:
        run = session.get(EvolutionRun, run_id)
        assert run is not None
        session.expunge(run)
        return run


def job_row(job_id: uuid.UUID) -> Job:
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        session.expunge(job)
        return job


def programs(run_id: uuid.UUID) -> list[EvolutionProgram]:
    """Every program of the run, oldest first (the worker's own read)."""
    return program_store.programs(run_id)


def calls(run_id: uuid.UUID) -> list[EvolutionLlmCall]:
    with session_scope() as session:
        rows = list(
            session.scalars(
                select(EvolutionLlmCall)
                .where(EvolutionLlmCall.run_id == run_id)
                .order_by(EvolutionLlmCall.created_at)
            )
        )
        for row in rows:
            session.expunge(row)
        return rows


def events(run_id: uuid.UUID, kind: EvolutionEventKind | None = None) -> list[EvolutionEvent]:
    with session_scope() as session:
        query = select(EvolutionEvent).where(EvolutionEvent.run_id == run_id)
        if kind is not None:
            query = query.where(EvolutionEvent.kind == kind)
        rows = list(session.scalars(query.order_by(EvolutionEvent.id)))
        for row in rows:
            session.expunge(row)
        return rows


def tools_called(run_id: uuid.UUID) -> list[str]:
    return [str(e.data["tool"]) for e in events(run_id, EvolutionEventKind.TOOL_RESULT)]
