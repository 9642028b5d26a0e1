"""Long jobs (training runs, evolution runs): a database row worked through in bounded, idempotent
chunks on the owning service's queue, resumed from the last checkpoint when a worker dies.

A service defines a `JobRoute` (kind, chunk task name, queue) next to the domain function that
creates its jobs, a `JobHandler` for the kind, and a chunk task that calls `run_chunk`; the
match runner's beat calls `reap_stale_jobs` and `resend_lost_chunks`. A job owned by a user's run
(training, evolution) is found, listed, stopped and resumed through the kind's `OwnedRunKind`.
See docs/long-jobs.md.
"""

from shared.jobs.chunks import ChunkOutcome, run_chunk, worker_name
from shared.jobs.handler import ChunkResult, ChunkWork, JobHandler, JobRoute, PermanentJobError
from shared.jobs.lost import resend_lost_chunks
from shared.jobs.runs import OwnedRunKind, may_see
from shared.jobs.store import (
    ChunkMessage,
    JobNotFound,
    JobStateError,
    ReapReport,
    create_job,
    enqueue_job,
    reap_stale_jobs,
    resume_job,
    start_job,
    stop_job,
)

__all__ = [
    "ChunkMessage",
    "ChunkOutcome",
    "ChunkResult",
    "ChunkWork",
    "JobHandler",
    "JobNotFound",
    "JobRoute",
    "JobStateError",
    "OwnedRunKind",
    "PermanentJobError",
    "ReapReport",
    "create_job",
    "enqueue_job",
    "may_see",
    "reap_stale_jobs",
    "resend_lost_chunks",
    "resume_job",
    "run_chunk",
    "start_job",
    "stop_job",
    "worker_name",
]
