"""The trainer service for real: tiny training configs, trainer workers started as compose starts
them, runs created through the gateway, and the rows a run leaves in the database."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from services.trainer.commands import worker_command
from shared.db.models import Job, TrainingCheckpoint, TrainingMetric, TrainingRun
from shared.db.session import session_scope
from shared.events import EventStream, TrainingEvent
from shared.states import JobStatus
from tests.support.accounts import Account, unique
from tests.support.processes import PYTHON, ManagedProcess

API = "/api/v1/training/runs"
TINY: dict[str, Any] = {
    "num_envs": 16,
    "num_steps": 16,
    "num_minibatches": 2,
    "update_epochs": 2,
    "device": "cpu",
    "evaluation": {"every_chunks": 0},
}
"""256 environment steps per iteration: a fifth of a second on one core; no evaluation against the
built-ins (test_training.py turns a small one on where it tests it)."""
STEPS_PER_ITERATION = TINY["num_envs"] * TINY["num_steps"]
HEARTBEAT_S = 0.25
STALE_AFTER_S = 2.0
MAX_ATTEMPTS = 3
WORKER_ENV = {
    "ARENA_TRAINING_CHUNK_SECONDS": "1.5",
    "ARENA_TRAINING_KEEP_CHECKPOINTS": "1",
    "ARENA_TRAINING_TORCH_THREADS": "1",
    "ARENA_JOB_HEARTBEAT_INTERVAL_S": str(HEARTBEAT_S),
    "ARENA_STALE_JOB_AFTER_S": str(STALE_AFTER_S),
    "ARENA_MAX_JOB_CHUNK_ATTEMPTS": str(MAX_ATTEMPTS),
}
"""Chunks of 1.5 s (several iterations each), one checkpoint file kept (and exported ones), a stop
seen within a quarter second, a chunk whose heartbeat is 2 s old lost its worker; torch on one
thread (the machine's cores are shared)."""


class EventLog:
    """Every training event published while it is open (topic `training:*`), from a thread of its own."""

    def __init__(self) -> None:
        self.events: list[TrainingEvent] = []
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._listen()), daemon=True)

    async def _listen(self) -> None:
        async with EventStream(["training:*"]) as stream:
            self._ready.set()

            async def close_when_asked() -> None:
                await asyncio.to_thread(self._stop.wait)
                await stream.aclose()

            closer = asyncio.create_task(close_when_asked())
            async for event in stream:
                if isinstance(event, TrainingEvent):
                    self.events.append(event)
            await closer

    def __enter__(self) -> EventLog:
        self._thread.start()
        assert self._ready.wait(10), "not subscribed to training events"
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def of(self, run_id: str) -> list[TrainingEvent]:
        return [e for e in list(self.events) if str(e.run_id) == run_id]


def start_trainers(*names: str, env: dict[str, str] | None = None) -> list[ManagedProcess]:
    """Real trainer workers, as compose starts them (plus unique names), started side by side."""
    processes = []
    for name in names:
        command = [
            *worker_command(name=f"{name}-{uuid.uuid4().hex[:6]}@%h", python=PYTHON),
            "--without-heartbeat",
        ]
        processes.append(ManagedProcess(command, name, env={**WORKER_ENV, **(env or {})}))
    for process in processes:
        process.wait_log("ready.", timeout=60)
    return processes


def create_run(
    client: TestClient,
    owner: Account,
    config: dict[str, Any] | None = None,
    **body: Any,
) -> dict[str, Any]:
    payload = {"name": f"run-{uuid.uuid4().hex[:6]}", "config": {**TINY, **(config or {})}, **body}
    answer = client.post(API, json=payload, headers=owner.headers)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def create_default_run(client: TestClient, owner: Account, **config: Any) -> dict[str, Any]:
    """A training run of `owner` with the default config (but `config`) and a 100,000-step budget,
    created through the API (for the pages: no worker takes it)."""
    answer = client.post(
        API,
        json={"name": unique("run"), "budget": {"steps": 100_000}, "config": config},
        headers=owner.headers,
    )
    assert answer.status_code == 201, answer.text
    run: dict[str, Any] = answer.json()
    return run


def wait_for(check: Callable[[], Any], what: str, *workers: ManagedProcess, timeout: float = 30.0) -> Any:
    """Poll until `check()` is truthy (returned); a worker that dies fails at once with its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        for worker in workers:
            assert worker.alive(), f"{worker.name} died:\n{worker.log()[-3000:]}"
        time.sleep(0.05)
    logs = "\n".join(w.log()[-3000:] for w in workers)
    raise AssertionError(f"{what}: not reached in {timeout}s\n{logs}")


def job_of(run_id: str) -> Job:
    with session_scope() as session:
        job = session.scalars(
            select(Job)
            .join(TrainingRun, TrainingRun.job_id == Job.id)
            .where(TrainingRun.id == uuid.UUID(run_id))
        ).one()
        return job


def run_row(run_id: str) -> TrainingRun:
    with session_scope() as session:
        run = session.get(TrainingRun, uuid.UUID(run_id))
        assert run is not None
        return run


def metric_rows(run_id: str) -> dict[int, dict[str, Any]]:
    """Every stored metrics row of the run (the API hides rows past the run's iteration; this does not)."""
    with session_scope() as session:
        rows = session.scalars(
            select(TrainingMetric)
            .where(TrainingMetric.run_id == uuid.UUID(run_id))
            .order_by(TrainingMetric.iteration)
        )
        return {row.iteration: row.metrics for row in rows}


def checkpoint_rows(run_id: str) -> list[TrainingCheckpoint]:
    with session_scope() as session:
        return list(
            session.scalars(
                select(TrainingCheckpoint)
                .where(TrainingCheckpoint.run_id == uuid.UUID(run_id))
                .order_by(TrainingCheckpoint.iteration)
            )
        )


def wait_status(run_id: str, status: JobStatus, *workers: ManagedProcess, timeout: float = 30.0) -> Job:
    job: Job = wait_for(
        lambda: (job := job_of(run_id)).status == status and job,
        f"run {run_id} {status}",
        *workers,
        timeout=timeout,
    )
    return job
