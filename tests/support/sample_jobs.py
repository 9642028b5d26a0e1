"""A job kind for tests only, wired the way a real service wires its own (trainer, evolver): a route,
a handler, and a chunk task on the service's queue with its limits on the task.

    celery -A tests.support.sample_jobs worker -Q training -c 1

Every chunk logs "started" in its own committed transaction before it works (so a chunk killed
mid-way still shows it started), sleeps, and writes its result row in the transaction that commits
the checkpoint. Config: `chunks` (how many), `sleep_s`, `slow` ({chunk: seconds}), `fail_starts`
({chunk: n}: the chunk raises on its first n starts, counted across attempts and resumes),
`fail_permanently` ({chunk: message}: the chunk raises PermanentJobError with that message).
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, Uuid, func, insert, select
from sqlalchemy.orm import Session

from shared.config import get_settings
from shared.db.models import Job
from shared.db.session import get_engine
from shared.jobs import ChunkResult, ChunkWork, JobHandler, JobRoute, PermanentJobError, run_chunk
from shared.queue import QUEUE_TRAINING, celery_app

TASK_SAMPLE_CHUNK = "arena.tests.sample_chunk"
SAMPLE = JobRoute(kind="test-sample", task_name=TASK_SAMPLE_CHUNK, queue=QUEUE_TRAINING)

metadata = MetaData()
events = Table(
    "test_sample_job_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", Uuid, nullable=False, index=True),
    Column("chunk", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("event", String(16), nullable=False),
    Column("at", DateTime(timezone=True), server_default=func.now()),
)
"""What happened, committed as it happens: "started" per chunk start, "finished" per finish hook."""
results = Table(
    "test_sample_job_results",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", Uuid, nullable=False, index=True),
    Column("chunk", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("total", Integer, nullable=False),
)
"""The chunks' own writes: no unique key, so a chunk committed twice would show as two rows."""

STARTED = "started"
FINISHED = "finished"


def create_tables() -> None:
    metadata.create_all(get_engine())


class SampleHandler(JobHandler):
    kind = SAMPLE.kind

    def run_chunk(self, work: ChunkWork) -> ChunkResult:
        config: dict[str, Any] = work.config
        with get_engine().begin() as conn:
            conn.execute(
                insert(events).values(
                    job_id=work.job_id, chunk=work.chunk, attempt=work.attempt, event=STARTED
                )
            )
            starts = conn.execute(
                select(func.count())
                .select_from(events)
                .where(
                    events.c.job_id == work.job_id, events.c.chunk == work.chunk, events.c.event == STARTED
                )
            ).scalar_one()
        if starts <= int(config.get("fail_starts", {}).get(str(work.chunk), 0)):
            raise RuntimeError(f"boom in chunk {work.chunk} (start {starts})")
        if str(work.chunk) in config.get("fail_permanently", {}):
            raise PermanentJobError(config["fail_permanently"][str(work.chunk)])
        time.sleep(float(config.get("slow", {}).get(str(work.chunk), config.get("sleep_s", 1.0))))
        total = int(work.checkpoint.get("total", 0)) + work.chunk
        done = work.chunk + 1
        return ChunkResult(
            checkpoint={"total": total},
            progress={"chunks_done": done, "chunks": int(config["chunks"])},
            finished=done >= int(config["chunks"]),
            output=total,
        )

    def record(self, session: Session, work: ChunkWork, result: ChunkResult) -> None:
        session.execute(
            insert(results).values(
                job_id=work.job_id, chunk=work.chunk, attempt=work.attempt, total=result.output
            )
        )

    def on_finished(self, session: Session, job: Job) -> None:
        session.execute(insert(events).values(job_id=job.id, chunk=job.chunk, attempt=0, event=FINISHED))


HANDLER = SampleHandler()
_settings = get_settings()


@celery_app.task(
    name=TASK_SAMPLE_CHUNK,
    queue=QUEUE_TRAINING,
    soft_time_limit=_settings.job_chunk_soft_time_limit_s,
    time_limit=_settings.job_chunk_hard_time_limit_s,
    acks_late=True,
    ignore_result=True,
)
def sample_chunk(job_id: str, chunk: int) -> str:
    return str(run_chunk(HANDLER, job_id, chunk))


app = celery_app
