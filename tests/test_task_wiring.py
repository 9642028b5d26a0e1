"""Per-service task wiring: the shared Celery app knows no service, and every task declares its own
queue and time limits, all within the broker's visibility timeout."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from celery.exceptions import QueueNotFound
from pydantic import ValidationError
from sqlalchemy.exc import OperationalError

from shared.config import Settings, get_settings
from shared.queue import (
    OUTAGE_RETRY_MAX_S,
    QUEUE_MATCHES,
    QUEUES,
    ArenaTask,
    celery_app,
    create_celery,
    outage_retry_delay_s,
    send_task,
)
from tests.support.environment import ROOT

TASK_MODULES = sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts) for path in (ROOT / "services").glob("*/tasks.py")
)
"""Every service's task module, present and future (services/<service>/tasks.py)."""
TEST_TASK_MODULES = ["tests.support.sample_jobs"]

pytestmark = pytest.mark.filterwarnings(
    # Celery 5 warns that the task-level `queue` will stop routing `.delay()` in 6.0 (pyproject pins
    # <6). Arena never relies on it for routing: senders always name the queue (send_task).
    r"ignore:\s*The 'queue' task attribute is deprecated"
)


def test_the_shared_app_knows_no_service() -> None:
    for app in (celery_app, create_celery(Settings(dev_mode=True))):
        conf = app.conf
        assert not conf.include, "services register their own tasks (their worker module imports them)"
        assert conf.task_time_limit is None, "limits go on the task"
        assert conf.task_soft_time_limit is None, "limits go on the task"
        assert not conf.task_routes, "senders name the queue"
        assert {queue.name for queue in conf.task_queues} == set(QUEUES)
        assert {queue.routing_key for queue in conf.task_queues} == set(QUEUES), "one route per queue"
        assert conf.task_acks_late
        assert conf.task_reject_on_worker_lost
        assert conf.worker_prefetch_multiplier == 1
        assert conf.accept_content == ["json"]
        assert conf.task_serializer == "json"
        assert conf.broker_connection_retry_on_startup
    assert not create_celery(Settings(dev_mode=True)).conf.beat_schedule
    source = (ROOT / "shared" / "queue.py").read_text()
    assert "arena." not in source
    assert "beat_schedule" not in source


def test_every_task_declares_its_queue_and_limits() -> None:
    assert "services.match_runner.tasks" in TASK_MODULES
    for module in [*TASK_MODULES, *TEST_TASK_MODULES]:
        importlib.import_module(module)
    import services.match_runner.worker  # noqa: F401  (the beat schedule's tasks must exist)

    visibility = get_settings().broker_visibility_timeout_s
    tasks = {name: task for name, task in celery_app.tasks.items() if name.startswith("arena.")}
    assert {"arena.matches.play", "arena.matches.ladder_tick", "arena.matches.reap_stale"} <= set(tasks)
    for name, task in tasks.items():
        # `queue` is a task option that celery-types' Task leaves out.
        assert task.queue in QUEUES, name  # type: ignore[attr-defined]
        assert task.soft_time_limit, name
        assert task.time_limit, name
        assert task.soft_time_limit < task.time_limit < visibility, name
        assert task.acks_late, name
    for entry in celery_app.conf.beat_schedule.values():
        assert entry["task"] in tasks
        assert entry["options"]["queue"] == tasks[entry["task"]].queue  # type: ignore[attr-defined]
    periodic = {entry["task"] for entry in celery_app.conf.beat_schedule.values()}
    for name, task in tasks.items():
        assert isinstance(task, ArenaTask), name
        # Work a lost message would lose (a match, a chunk) is retried through an outage; a beat
        # tick is not (the next tick does its work).
        assert task.retry_on_outage is (name not in periodic), name


def test_sending_names_the_queue_and_an_undeclared_queue_is_refused() -> None:
    with pytest.raises(QueueNotFound):
        send_task("arena.nowhere", "no-such-queue")
    with pytest.raises(QueueNotFound):
        celery_app.send_task("arena.nowhere")  # no queue named: refused, never a silent default


def test_the_broker_must_outlive_every_tasks_hard_limit() -> None:
    with pytest.raises(ValidationError, match="job_chunk_hard_time_limit_s"):
        Settings(dev_mode=True, job_chunk_soft_time_limit_s=3500, job_chunk_hard_time_limit_s=3700)
    with pytest.raises(ValidationError, match="match_hard_time_limit_s"):
        Settings(dev_mode=True, match_soft_time_limit_s=3900, match_hard_time_limit_s=4000)
    with pytest.raises(ValidationError, match="stale_job_after_s"):
        Settings(dev_mode=True, job_heartbeat_interval_s=10, stale_job_after_s=15)
    ok = Settings(
        dev_mode=True,
        job_chunk_soft_time_limit_s=3500,
        job_chunk_hard_time_limit_s=3700,
        broker_visibility_timeout_s=4000,
    )
    assert max(ok.task_hard_time_limits().values()) == 3700


def test_task_modules_are_found_where_services_keep_them() -> None:
    assert all(Path(ROOT, *module.split(".")).with_suffix(".py").is_file() for module in TASK_MODULES)


def _database_down() -> OperationalError:
    return OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))


def test_a_task_is_retried_through_a_database_outage_and_only_then() -> None:
    """Run eagerly: a retry runs at once, so the test sees every try (a worker waits its countdown)."""
    app = create_celery(Settings(dev_mode=True))
    tries: list[str] = []

    def flaky(error: str, fail_times: int) -> int:
        tries.append(error)
        if len(tries) <= fail_times:
            raise _database_down() if error == "outage" else ValueError("a bug")
        return len(tries)

    task = app.task(name="arena.test.flaky", queue=QUEUE_MATCHES)(flaky)
    periodic = app.task(name="arena.test.tick", queue=QUEUE_MATCHES, retry_on_outage=False)(flaky)

    assert task.apply(args=("outage", 3)).get() == 4
    tries.clear()
    with pytest.raises(ValueError, match="a bug"):
        task.apply(args=("bug", 3)).get()
    assert len(tries) == 1
    tries.clear()
    with pytest.raises(OperationalError):
        periodic.apply(args=("outage", 3)).get()
    assert len(tries) == 1


def test_outage_retries_back_off_to_a_cap() -> None:
    for retries in range(30):
        ceiling = min(OUTAGE_RETRY_MAX_S, 2.0**retries)
        assert ceiling / 2 <= outage_retry_delay_s(retries) <= ceiling
