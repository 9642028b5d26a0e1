"""Every closed set of states and kinds Arena stores, in one place.

They are `StrEnum`s so a member is its own database value and JSON value: models, services, raw SQL
(as bound parameters) and API schemas all use these names, and no state is spelled as a bare string
anywhere else. Changing a value means a data migration.
"""

from __future__ import annotations

from enum import StrEnum


class UserRole(StrEnum):
    USER = "user"
    ADMIN = "admin"
    """May create users and keys, run rated challenges, act on any bot."""


class BotKind(StrEnum):
    HTTP = "http"
    """An endpoint somebody runs, anywhere, in any language."""
    HOSTED = "hosted"
    """Python code Arena runs in a sandbox."""


class BotOrigin(StrEnum):
    """Where a bot came from; shown on its page, never changes how it is judged."""

    HUMAN = "human"
    EVOLVER = "evolver"
    TRAINER = "trainer"
    BUILTIN = "builtin"


class BotStatus(StrEnum):
    """Where a bot stands with the ladder; only ACTIVE bots are seated."""

    ACTIVE = "active"
    INACTIVE = "inactive"
    """Deactivated by its owner or an admin, or registered without a verified secret yet."""
    SUSPENDED = "suspended"
    """Taken off the ladder by the runner after repeated failed pre-match health checks; the
    owner's reactivation (which runs the health check again) brings it back."""


class HostedContract(StrEnum):
    """How a hosted bot's code talks to the runner."""

    DECIDE = "decide"
    """A module with `decide(observation) -> action`."""
    CODINGAME = "codingame"
    """A stdin/stdout script in CodinGame's format (podracing only)."""


class MatchKind(StrEnum):
    LADDER = "ladder"
    """Scheduled by the ladder; rated."""
    CHALLENGE = "challenge"
    """Requested through the API; rated only when an admin asks."""
    EVALUATION = "evaluation"
    """Played for the evolver or the trainer; never rated."""


class MatchStatus(StrEnum):
    """QUEUED -> RUNNING -> FINISHED | FAILED | CANCELLED; RUNNING goes back to QUEUED when a
    worker dies and the reaper hands the match out again."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @classmethod
    def pending(cls) -> tuple[MatchStatus, ...]:
        """States from which a match can still produce a result."""
        return (cls.QUEUED, cls.RUNNING)

    @property
    def is_final(self) -> bool:
        return self not in MatchStatus.pending()


class ReplayStorage(StrEnum):
    """Where a replay's gzip bytes live (`replays.storage`; shared/replay_store)."""

    DATABASE = "database"
    """In the row itself (`replays.data`): every replay stored before object storage existed.
    Still read; never written any more (`python -m shared.replay_store.migrate` moves them out)."""
    FILESYSTEM = "filesystem"
    """A file under `ARENA_REPLAY_DIR` (default `<data_dir>/replays`) that every reader can see."""
    S3 = "s3"
    """An object in an S3-compatible bucket (MinIO, AWS S3, ...)."""


class JobStatus(StrEnum):
    """A long job (training run, evolution run), worked through in chunks; see docs/long-jobs.md.

    QUEUED -> RUNNING -> QUEUED (next chunk) ... -> FINISHED; a chunk that keeps failing -> FAILED.
    Stop: QUEUED -> STOPPED at once, RUNNING -> STOPPING -> STOPPED when the running chunk ends.
    Resume: STOPPED or FAILED -> QUEUED (from the last checkpoint); STOPPING -> RUNNING (the stop
    is called off). The reaper puts RUNNING back to QUEUED when its worker stopped heartbeating."""

    QUEUED = "queued"
    """A chunk message for `chunk` is in (or on its way to) the queue."""
    RUNNING = "running"
    """A worker holds the lease on chunk `chunk` and heartbeats."""
    STOPPING = "stopping"
    """Stop asked while a chunk runs: that chunk still commits, then the job stops."""
    STOPPED = "stopped"
    FINISHED = "finished"
    FAILED = "failed"

    @classmethod
    def holding_lease(cls) -> tuple[JobStatus, ...]:
        """States in which a worker owns the job (and must heartbeat)."""
        return (cls.RUNNING, cls.STOPPING)

    @classmethod
    def resumable(cls) -> tuple[JobStatus, ...]:
        """At rest with a consistent checkpoint: resuming runs the next chunk from it."""
        return (cls.STOPPED, cls.FAILED)


class TrainingStage(StrEnum):
    """The trainer's curriculum stages (`services.trainer.curriculum.Stage` is this enum), here so
    that the gateway and the database know them without importing the trainer (torch).

    IMITATE (a run with a teacher starts there) -> RUNNER; SOLO (from scratch) -> RUNNER ->
    SELF_PLAY -> LEAGUE, each on its exit condition or by hand."""

    IMITATE = "imitate"
    SOLO = "solo"
    RUNNER = "runner"
    SELF_PLAY = "self_play"
    LEAGUE = "league"


class ProgramStatus(StrEnum):
    """An evolution program: PENDING (passed the static gate) -> EVALUATED | FAILED; REJECTED never
    ran (the gate refused it, or the child's answer held no usable program)."""

    PENDING = "pending"
    REJECTED = "rejected"
    FAILED = "failed"
    """Ran and failed its smoke run or every match (crash, timeout, forfeit): fitness 0."""
    EVALUATED = "evaluated"


class ProgramOrigin(StrEnum):
    """How an evolution program was made."""

    SEED = "seed"
    DIFF = "diff"
    """A child's SEARCH/REPLACE blocks applied to its parent."""
    REWRITE = "rewrite"
    """A child's whole program (asked for, or the fallback after blocks that did not apply)."""


class ParentSelection(StrEnum):
    """What an evolution run's exploitation ranks parents by."""

    NASH = "nash"
    """Nash-averaged fitness: a win counts by how strong the opponent is (live-fleet runs, where
    many weak bots would otherwise be farmed)."""
    FITNESS = "fitness"
    """The plain fitness over all matches: every opponent counts the same, and all of a program's
    matches count (against few opponents, the Nash mixture rests on one opponent's few matches)."""


class LlmRole(StrEnum):
    ROOT = "root"
    CHILD = "child"


class LlmCallStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"


class EvolutionEventKind(StrEnum):
    """What the evolution log (and the root's decision log) records."""

    RUN_STARTED = "run_started"
    ROOT_DECISION = "root_decision"
    """The root's answer: its reasoning text and the tool calls it made."""
    TOOL_RESULT = "tool_result"
    GENERATION_ADVANCED = "generation_advanced"
    PARAMETERS_CHANGED = "parameters_changed"
    MIGRATION = "migration"
    PROGRAM_PROMOTED = "program_promoted"
    PROGRAM_REMATCHED = "program_rematched"
    """A kept program played a new round of matches; its fitness is over all its matches now."""
    LLM_FAILURE = "llm_failure"
    FALLBACK = "fallback"
    """The system decided in the root's place (its call failed, or it made no tool call)."""
    LIMIT_REACHED = "limit_reached"
    TERMINATED = "terminated"
