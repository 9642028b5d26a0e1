"""A chunk message that reaches a worker while the database is down is not acknowledged away: the
chunk task is retried with a capped backoff (shared.queue.ArenaTask), and the job runs on, every
chunk committed once, soon after the database returns. A real sample worker on a PostgreSQL and a
Redis of this test's own (killed and started again), no reaper: only the retry can save the chunk."""

from __future__ import annotations

import time
import uuid

import pytest
from sqlalchemy import select

from shared.config import get_settings
from shared.db.models import Job
from shared.db.session import get_engine, session_scope
from shared.jobs import create_job
from shared.queue import QUEUE_TRAINING, create_celery
from shared.states import JobStatus
from tests.support.owned_services import owned_postgres, owned_redis
from tests.support.processes import PYTHON, ManagedProcess
from tests.support.sample_jobs import SAMPLE, TASK_SAMPLE_CHUNK, metadata, results

pytestmark = pytest.mark.slow

OUTAGE_S = 8.0
RECOVERY_LIMIT_S = 30.0
"""The issue's bound: no work waits more than this past its dependency's return."""


def test_a_chunk_sent_during_a_database_outage_runs_once_after_it() -> None:
    with owned_postgres() as postgres, owned_redis() as redis_server:
        url = postgres.url()
        metadata.create_all(get_engine(url))
        with session_scope(url) as session:
            job_id = create_job(session, SAMPLE, {"chunks": 2, "sleep_s": 0.2}).id
        command = [PYTHON, "-m", "celery", "-A", "tests.support.sample_jobs", "worker", "-Q", QUEUE_TRAINING]
        command += ["-c", "1", "-n", f"outage-{uuid.uuid4().hex[:6]}@%h", "--loglevel", "INFO"]
        command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        worker = ManagedProcess(
            command,
            "outage-sample-worker",
            env={"ARENA_DATABASE_URL": url, "ARENA_REDIS_URL": redis_server.url},
        )
        app = create_celery(get_settings().model_copy(update={"redis_url": redis_server.url}))
        try:
            worker.wait_log("ready.", timeout=60)
            postgres.kill()
            task_id = app.send_task(TASK_SAMPLE_CHUNK, args=[str(job_id), 0], queue=QUEUE_TRAINING).id
            worker.wait_log(f"[{task_id}] received", timeout=20)
            time.sleep(OUTAGE_S)
            postgres.start()
            back = time.monotonic()
            status = None
            while time.monotonic() - back < RECOVERY_LIMIT_S and status != JobStatus.FINISHED:
                time.sleep(0.2)
                with session_scope(url) as session:
                    status = session.scalars(select(Job.status).where(Job.id == job_id)).one()
            print(f"\nthe job was {status} {time.monotonic() - back:.1f} s after the database returned")
            assert status == JobStatus.FINISHED, worker.log()[-3000:]
            with session_scope(url) as session:
                chunks = sorted(session.scalars(select(results.c.chunk).where(results.c.job_id == job_id)))
            assert chunks == [0, 1]  # each chunk committed once
        finally:
            app.close()
            worker.stop()
            get_engine(url).dispose()
