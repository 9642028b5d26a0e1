"""A trainer worker killed outright (kill -9) in the middle of a chunk: the chunk's lease goes stale,
the reaper hands the run to another worker, and the run goes on from its last committed checkpoint;
the iterations the dead worker trained past it are trained again and its rows overwritten, so the
metrics stay one row per iteration."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from shared.jobs import reap_stale_jobs
from shared.states import JobStatus
from tests.support.accounts import Account
from tests.support.processes import ManagedProcess
from tests.support.training import (
    API,
    MAX_ATTEMPTS,
    STALE_AFTER_S,
    checkpoint_rows,
    create_run,
    job_of,
    metric_rows,
    run_row,
    start_trainers,
    wait_for,
    wait_status,
)

pytestmark = pytest.mark.slow

LONGER_CHUNKS = {"ARENA_TRAINING_CHUNK_SECONDS": "4"}
"""Room for several iterations after a chunk's start-up (loading a checkpoint, a new track pool)
even on a busy machine, so that there is a chunk well under way to kill."""


NEVER = 10.0**9
"""The reaper here resends no queued chunk: runs other tests left queued must not train now."""


def _heartbeat_age(run_id: str) -> float:
    beat = job_of(run_id).heartbeat_at
    assert beat is not None
    return (datetime.now(UTC) - beat).total_seconds()


def _holder(workers: list[ManagedProcess], job_id: str, chunk: int) -> ManagedProcess:
    """The worker that claimed the chunk (the claim's log line is in its log only)."""
    claimed = f"job {job_id} (training): chunk {chunk}, attempt 1"
    (holder,) = [w for w in workers if claimed in w.log()]
    return holder


@pytest.mark.usefixtures("empty_queue")
def test_a_run_whose_worker_was_killed_mid_chunk_goes_on_from_its_last_checkpoint(
    client: TestClient, owner: Account
) -> None:
    workers = start_trainers("one", "two", env=LONGER_CHUNKS)
    try:
        run_id = create_run(client, owner)["id"]

        def mid_chunk() -> bool:
            saved = checkpoint_rows(run_id)
            return bool(saved) and run_row(run_id).iteration >= saved[-1].iteration + 2

        wait_for(mid_chunk, "a chunk well under way after a committed one", *workers, timeout=60)
        job = job_of(run_id)
        doomed = _holder(workers, str(job.id), job.chunk)
        (rescue,) = [w for w in workers if w is not doomed]
        doomed.kill()  # SIGKILL to the worker's whole process group: no ack, no cleanup, no commit
        doomed.proc.wait(timeout=10)

        committed = checkpoint_rows(run_id)[-1]
        job = job_of(run_id)
        live = run_row(run_id).iteration
        assert job.status == JobStatus.RUNNING
        assert job.attempts == 1
        assert job.checkpoint["iteration"] == committed.iteration
        assert live > committed.iteration, "the dead chunk's rows are there"
        assert max(metric_rows(run_id)) == live, "the dead chunk's rows are there"
        time.sleep(0.5)
        assert job_of(run_id).attempts == 1, "nothing takes a chunk over before the reaper"

        wait_for(
            lambda: _heartbeat_age(run_id) > STALE_AFTER_S + 0.2, "the dead chunk's heartbeat going stale"
        )
        reaped = reap_stale_jobs(STALE_AFTER_S, MAX_ATTEMPTS, resend_after_s=NEVER)
        assert job.id in reaped.requeued
        wait_for(
            lambda: checkpoint_rows(run_id)[-1].iteration > live, "the rescue committing past it", rescue
        )
        rescue.wait_log(f"job {job.id} (training): chunk {job.chunk}, attempt 2", timeout=5)
        rescue.wait_log(f"training run {run_id}: iteration {committed.iteration + 1},", timeout=5)
        saved = [c.iteration for c in checkpoint_rows(run_id)]
        assert saved == sorted(set(saved))
        assert committed.iteration in saved
        detail = client.get(f"{API}/{run_id}", headers=owner.headers).json()
        assert detail["status"] in ("running", "queued")
        assert detail["error"] is None

        assert client.post(f"{API}/{run_id}/stop", headers=owner.headers).status_code == 200
        wait_status(run_id, JobStatus.STOPPED, rescue)
        stopped = run_row(run_id)
        assert sorted(metric_rows(run_id)) == list(range(1, stopped.iteration + 1)), "one row per iteration"
    finally:
        for worker in reversed(workers):
            worker.stop()
