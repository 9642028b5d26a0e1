"""The trainer's and the evolver's metrics move when the work they count is done, through the code
paths that do it: a real training chunk in this process (tiny config, on the CPU), and a small
evolution run worked in this process against an OpenAI-compatible server on loopback (the engine
tests' stub), whose calls are priced, one of which fails. Plus the gateway's scrape-time gauges:
queue lengths from Redis, the stalest heartbeat of running work from the database."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from prometheus_client import REGISTRY, CollectorRegistry
from sqlalchemy import delete

from shared.db.models import Job, User
from shared.db.session import session_scope
from shared.queue import QUEUE_TRAINING
from shared.states import JobStatus, LlmRole, ProgramStatus
from tests.support.evolver_engine import (
    PRICED_MODEL,
    PRICES,
    LlmStub,
    Reply,
    calls,
    config,
    drive,
    is_root,
    make_run,
    programs,
    run_row,
)

pytestmark = pytest.mark.usefixtures("database_url", "redis_url")

TINY_TRAINING: dict[str, Any] = {
    "num_envs": 16,
    "num_steps": 16,
    "num_minibatches": 2,
    "update_epochs": 1,
    "device": "cpu",
    "total_steps": 16 * 16,
    "evaluation": {"every_chunks": 0},
}
"""One iteration of 256 environment steps, then the run's step budget is spent: the chunk ends (no
evaluation against the built-ins after it)."""


def value(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def read(series: dict[str, tuple[str, dict[str, str]]]) -> dict[str, float]:
    """What each named series of this process's registry holds now."""
    return {key: value(name, labels) for key, (name, labels) in series.items()}


def gained(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {key: after[key] - before[key] for key in before}


@pytest.mark.slow
def test_a_training_chunk_records_each_iteration(redis_url: str) -> None:
    import torch

    from services.trainer import metrics
    from services.trainer.handler import HANDLER
    from shared.jobs import run_chunk
    from shared.training import TrainingConfig, create_run

    with session_scope() as session:
        user = User(name=f"metrics-{uuid.uuid4().hex[:8]}")
        session.add(user)
        session.flush()
        run = create_run(
            session, user, name="metrics", game="podracing", config=TrainingConfig(**TINY_TRAINING)
        )
        job_id = run.job_id
    redis.Redis.from_url(redis_url).delete(QUEUE_TRAINING)  # this test runs the chunk itself

    iterations = value("arena_trainer_iterations_total")
    steps = value("arena_trainer_env_steps_total")
    timed = value("arena_trainer_iteration_seconds_count")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the machine's cores are shared: contended threads slow torch down
    try:
        run_chunk(HANDLER, job_id, 0, send_next=False)
    finally:
        torch.set_num_threads(threads)

    assert value("arena_trainer_iterations_total") == iterations + 1
    assert value("arena_trainer_env_steps_total") == steps + 256
    assert value("arena_trainer_iteration_seconds_count") == timed + 1
    assert value("arena_trainer_sps") > 0
    assert math.isfinite(value("arena_trainer_reward_mean"))
    assert value("arena_trainer_last_iteration_timestamp_seconds") > datetime.now(UTC).timestamp() - 120
    for opponent in metrics.OPPONENTS:  # every opponent's series exists before its first race
        assert REGISTRY.get_sample_value("arena_trainer_episodes_total", {"opponent": opponent}) is not None


def test_race_counts_and_win_rates_become_races_and_wins_by_opponent() -> None:
    from services.trainer import metrics

    series = {
        f"{counter} {opponent}": (f"arena_trainer_{counter}_total", {"opponent": opponent})
        for counter in ("episodes", "wins")
        for opponent in ("runner", "idle")
    }
    before = read(series)
    metrics.record_iteration(
        {
            "seconds": 0.5,
            "sps": 512,
            "reward_mean": float("nan"),  # not finite: skipped, never an error
            "episodes_runner": 8,
            "win_rate_runner": 0.25,
            "episodes_idle": 0,
            "win_rate_idle": None,
        },
        env_steps=256,
    )
    assert gained(before, read(series)) == {
        "episodes runner": 8,
        "wins runner": 2,
        "episodes idle": 0,
        "wins idle": 0,
    }
    assert value("arena_trainer_sps") == 512


def test_the_opponent_labels_are_the_trainers_opponent_kinds() -> None:
    from services.trainer import metrics
    from services.trainer.opponents import OpponentKind

    assert tuple(kind.name.lower() for kind in OpponentKind) == metrics.OPPONENTS


@pytest.fixture
def stub() -> Iterator[LlmStub]:
    server = LlmStub()
    yield server
    server.close()


@pytest.mark.slow
def test_an_evolution_run_records_calls_tokens_spend_failures_candidates_and_generations(
    stub: LlmStub,
) -> None:
    from services.evolver import metrics
    from services.evolver.evaluation.cascade import EvalStage

    def first_child_is_refused(body: dict[str, Any], index: int) -> Reply | None:
        if not is_root(body) and index == 0:
            return Reply(400, {"error": {"message": "no"}})  # a client error: not retried
        return None

    stub.intercept = first_child_is_refused
    llm = {"base_url": stub.url, "root_model": PRICED_MODEL, "child_model": PRICED_MODEL, "prices": PRICES}
    run_id, job_id = make_run(
        config(
            llm={**llm, "max_attempts": 1},
            limits={"max_generations": 2, "max_children_per_generation": 1},
            evaluation={"quick_matches": 1},
        )
    )
    game = "battle"
    series: dict[str, tuple[str, dict[str, str]]] = {
        "root calls ok": ("arena_evolver_llm_calls_total", {"role": LlmRole.ROOT, "status": "ok"}),
        "child calls ok": ("arena_evolver_llm_calls_total", {"role": LlmRole.CHILD, "status": "ok"}),
        "child calls failed": ("arena_evolver_llm_calls_total", {"role": LlmRole.CHILD, "status": "failed"}),
        "root prompt tokens": ("arena_evolver_llm_tokens_total", {"role": LlmRole.ROOT, "kind": "prompt"}),
        "child completion tokens": (
            "arena_evolver_llm_tokens_total",
            {"role": LlmRole.CHILD, "kind": "completion"},
        ),
        "root spend": ("arena_evolver_llm_cost_usd_total", {"role": LlmRole.ROOT}),
        "child spend": ("arena_evolver_llm_cost_usd_total", {"role": LlmRole.CHILD}),
        "client errors": ("arena_evolver_failures_total", {"kind": "llm_client_error"}),
        "generations": ("arena_evolver_generation_duration_seconds_count", {"game": game}),
        "evaluations timed": ("arena_evolver_evaluation_seconds_count", {"game": game}),
    }
    series.update(
        {
            f"candidates {status} {stage}": (
                "arena_evolver_candidates_evaluated_total",
                {"game": game, "status": status, "stage": stage},
            )
            for status in metrics.EVALUATION_STATUSES
            for stage in EvalStage
        }
    )
    before = read(series)

    assert drive(job_id) == JobStatus.FINISHED

    moved = gained(before, read(series))
    for key in [k for k in series if not k.startswith("candidates")]:
        assert moved[key] > 0, f"{key} did not move: {moved}"
    assert moved["client errors"] == moved["child calls failed"] == 1
    assert moved["root spend"] + moved["child spend"] == pytest.approx(run_row(run_id).spent_usd)
    assert run_row(run_id).spent_usd == pytest.approx(sum(c.cost_usd for c in calls(run_id)))
    evaluated = [p for p in programs(run_id) if p.status in (ProgramStatus.EVALUATED, ProgramStatus.FAILED)]
    assert evaluated
    assert sum(moved[k] for k in series if k.startswith("candidates")) == len(evaluated)
    assert moved["evaluations timed"] == len(evaluated)


def test_the_gateway_reads_queue_lengths_from_redis(redis_url: str) -> None:
    from services.gateway.metrics import QueueCollector

    queues = (f"metrics-test-{uuid.uuid4().hex[:6]}", f"metrics-test-{uuid.uuid4().hex[:6]}")
    broker = redis.Redis.from_url(redis_url)
    broker.rpush(queues[0], "a", "b", "c")
    try:
        registry = CollectorRegistry()
        registry.register(QueueCollector(redis_url, queues))
        assert registry.get_sample_value("arena_queue_length", {"queue": queues[0]}) == 3
        assert registry.get_sample_value("arena_queue_length", {"queue": queues[1]}) == 0
    finally:
        broker.delete(*queues)


def test_the_gateway_reads_the_stalest_heartbeat_of_running_jobs() -> None:
    from services.gateway.metrics import PlatformCollector

    kind = f"metrics-test-{uuid.uuid4().hex[:6]}"
    with session_scope() as session:
        for age in (5, 95):
            session.add(
                Job(
                    kind=kind,
                    status=JobStatus.RUNNING,
                    heartbeat_at=datetime.now(UTC) - timedelta(seconds=age),
                    task_name="nothing",
                    queue="nowhere",
                )
            )
        session.commit()
    try:
        registry = CollectorRegistry()
        registry.register(PlatformCollector())
        stalest = registry.get_sample_value("arena_work_heartbeat_age_seconds", {"kind": kind})
        assert stalest is not None
        assert 95 <= stalest < 120
        assert registry.get_sample_value("arena_jobs", {"kind": kind, "status": "running"}) == 2
        assert registry.get_sample_value("arena_work_heartbeat_age_seconds", {"kind": "match"}) is not None
    finally:
        with session_scope() as session:
            session.execute(delete(Job).where(Job.kind == kind))
            session.commit()
