"""One Settings object for every service, read from `ARENA_*` environment variables.

Outside development mode the platform refuses to start with the built-in default secret key, so a
deployment can never run with a key that is published in this repository.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from shared.states import ReplayStorage

DEFAULT_SECRET_KEY = "arena-development-secret-key-change-me"
_S3_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
"""S3's bucket naming rules (the parts every S3-compatible store shares)."""
_ENDPOINT_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
ENV_FILE_VARIABLE = "ARENA_ENV_FILE"
"""Names the dotenv file Settings read besides the environment (unset: `.env` in the working
directory; empty: none). The demo sets it empty for its processes: `.env` is docker compose's file,
and its secret key would not decrypt what the demo stored."""


class ModelPrice(BaseModel):
    """USD per million tokens of one model."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    input: float = Field(ge=0, le=10_000)
    output: float = Field(ge=0, le=10_000)


class LlmEndpoint(BaseModel):
    """A model endpoint the operator configured, with the operator's key (or none: a local server)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(min_length=1, max_length=2048)
    api_key: SecretStr | None = None
    api_key_file: Path | None = None
    """A file holding the key (a Docker secret); read by the evolver worker when a chunk starts,
    so the gateway, which only checks run requests, never needs it."""
    models: list[str] = Field(default_factory=list, max_length=64)
    """The models runs may ask for (empty: any); the first is a run's default."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict, max_length=256)
    """Prices the built-in table lacks or that this provider charges differently; runs on this
    endpoint are charged these, never prices of their own."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        try:
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"base_url {value!r}: {exc}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
            raise ValueError(f"base_url {value!r} must be an http:// or https:// URL with a host and port")
        return value.strip().rstrip("/")

    @model_validator(mode="after")
    def _one_key_source(self) -> LlmEndpoint:
        if self.api_key is not None and self.api_key_file is not None:
            raise ValueError("give api_key or api_key_file, not both")
        return self


LLM_KEY_VARIABLES = ("ARENA_LLM_API_KEY", "OPENAI_API_KEY")
"""Where `arena evolve` finds your own key, in this order; the services never read them."""


def llm_api_key(source: LlmEndpoint | Mapping[str, str]) -> str | None:
    """The key to call a model with, from one source; None: call it without a key.

    An operator's endpoint (`llm_endpoints`): its `api_key`, else the contents of its `api_key_file`
    (OSError when that cannot be read); never the environment, so the operator's key goes to its
    endpoints only. An environment (`arena evolve` on your own machine): `ARENA_LLM_API_KEY`, else
    `OPENAI_API_KEY`. Each value is stripped of surrounding whitespace (a key file ends with a
    newline), and a value that is then empty counts as unset: the next one in order is read.
    """
    if isinstance(source, LlmEndpoint):
        values = [
            source.api_key.get_secret_value() if source.api_key is not None else None,
            source.api_key_file.read_text(encoding="utf-8") if source.api_key_file is not None else None,
        ]
    else:
        values = [source.get(name) for name in LLM_KEY_VARIABLES]
    return next((value.strip() for value in values if value and value.strip()), None)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ARENA_", env_file=".env", extra="ignore")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The usual sources, with the dotenv file that `ARENA_ENV_FILE` names when it is set."""
        env_file = os.environ.get(ENV_FILE_VARIABLE)
        if env_file is not None:
            dotenv_settings = DotEnvSettingsSource(settings_cls, env_file=env_file or None)
        return init_settings, env_settings, dotenv_settings, file_secret_settings

    # Infrastructure
    database_url: str = "postgresql+psycopg://postgres@127.0.0.1:5432/arena"
    redis_url: str = "redis://127.0.0.1:6379/0"
    events_redis_url: str | None = None
    """The Redis that carries live events (shared/events); unset: `redis_url`."""
    events_enabled: bool = True
    """Off: events are not published (the match runner still plays and rates as always)."""
    events_namespace: str = Field(default="", pattern=r"^[A-Za-z0-9_.-]{0,64}$")
    """Every live-event channel is `arena:events:<namespace>:<topic>`: Redis pub/sub ignores the
    database number, so deployments sharing a Redis server are kept apart by this alone. Empty:
    `<PostgreSQL database name>.<events Redis database number>` (e.g. `arena.0`; see
    shared.events.namespace), the same in every process of a deployment and different for one on
    another database. Give two deployments the same value to share their events on purpose."""
    live_frames_enabled: bool = True
    """Off: the match runner publishes no `match.frames` (live viewers then see only start and end)."""
    data_dir: Path = Path(".arena-data")
    broker_connection_max_retries: int | None = Field(default=None, ge=1)
    """How many times a worker that lost Redis tries to connect again before it gives up and exits;
    None (the default): it never gives up, however long the outage (kombu waits 1 s, 2 s, 3 s... up
    to `broker_reconnect_max_s` between tries, and the worker logs the outage once a minute). A
    number only for tests and for deployments whose supervisor would rather restart the worker."""
    broker_reconnect_max_s: float = Field(default=5.0, gt=0, le=60)
    """Longest wait between a worker's tries to reach Redis again (kombu's own cap is 30 s): after a
    long outage the worker is back within this long of Redis's return, and its lost matches follow
    within the lost-message check's grace (the 30 s recovery bound of docs/match-runner.md)."""

    # Security
    secret_key: SecretStr = SecretStr(DEFAULT_SECRET_KEY)
    """Encrypts bot secrets at rest and peppers API-key hashes."""
    dev_mode: bool = False
    """Development mode alone allows bot endpoints on loopback/private addresses and the insecure
    `process` sandbox backend."""
    bootstrap_admin_key: SecretStr | None = None
    """If set, an admin user with this API key is created at start-up (first deployment, demo)."""

    # Match runner
    turn_timeout_ms: int = Field(default=1000, ge=10, le=60_000)
    first_turn_timeout_ms: int = Field(default=3000, ge=10, le=60_000)
    health_timeout_s: float = Field(default=5.0, gt=0)
    max_consecutive_failures: int = Field(default=10, ge=1)
    max_response_bytes: int = Field(default=64 * 1024, ge=1024)
    sign_legacy_v1: bool = True
    """Sign requests to HTTP bots with the deprecated v1 entry too, next to v2 (docs/protocol.md):
    on while the deprecation lasts, so bots that only check v1 keep working; off, one HMAC per
    request instead of two. Hosted bots never get v1 (they run the SDK, which requires v2)."""
    bot_client: Literal["httptools", "httpx"] = "httptools"
    """How the runner talks HTTP to bots: httptools (shared/botclient/http1.py), or the previous httpx
    path (shared/botclient/httpx_client.py), kept only as the baseline `scripts/bench_platform.py
    --baseline` measures against."""
    static_hosts: dict[str, list[str]] | None = None
    """If set (JSON, e.g. `{"bot.test": ["127.0.0.1"]}`), bot host names resolve from this table only
    and DNS is never asked: the test suite sets it; closed networks may too."""
    bot_networks: list[str] | None = None
    """If set (JSON list of CIDR blocks, e.g. `["203.0.113.0/24"]`), bot endpoints must resolve into
    these networks only, in development mode too: an operator's fence around where bots may live.
    The test suite sets it to loopback so that no test can ever connect off the machine."""
    llm_allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Host names that a run's own LLM base URL may name although they resolve to private addresses
    (a model server inside the deployment's network: `ollama,vllm.internal` or the JSON list
    `["ollama", "vllm.internal"]`). Other base URLs of runs
    must resolve to public addresses, as bot endpoints must (development mode allows any). The
    operator's endpoints (`llm_endpoints`) need no entry here."""
    llm_endpoints: dict[str, LlmEndpoint] = Field(default_factory=dict)
    """The operator's model endpoints by name (JSON, e.g. `{"openai": {"base_url":
    "https://api.openai.com/v1", "api_key_file": "/run/secrets/openai", "models": ["gpt-4o-mini"],
    "prices": {"gpt-4o-mini": {"input": 0.15, "output": 0.6}}}}`). The operator's keys are used
    with these endpoints only: a run names one (`llm.endpoint`) or brings its own base URL and key."""
    llm_operator_usd_per_user: float = Field(default=1.0, ge=0)
    """What one user's runs may spend on the operator's endpoints within `llm_operator_window_days`
    (admins are exempt): a run is refused (429) once it is used up, and a running run stops."""
    llm_operator_window_days: float = Field(default=30.0, gt=0)
    """The rolling window of `llm_operator_usd_per_user`, in days."""
    match_soft_time_limit_s: int = 900
    match_hard_time_limit_s: int = 960
    broker_visibility_timeout_s: int = 3600
    """Longer than the hard time limit of every task (see `task_hard_time_limits`), so Redis never
    hands a task that is still running to a second worker (late acks; see docs/long-jobs.md)."""
    beat_task_soft_time_limit_s: int = 60
    beat_task_hard_time_limit_s: int = 90
    """Limits of the short periodic tasks (ladder tick, reaper)."""
    heartbeat_interval_s: float = 2.0
    stale_match_after_s: float = 30.0
    """A running match whose heartbeat is older than this is considered abandoned by a dead worker."""
    max_match_attempts: int = 3
    lost_match_after_s: float = Field(default=600.0, gt=0)
    """A match still queued this long after its play message was sent is sent again: the message may
    be lost (a broker restarted without persistence, a send that failed). Keep it above the longest
    wait a match normally has in the queue; a message that was not lost only costs a no-op duplicate.
    The lost-message check (`lost_message_check_s`) finds most lost messages far sooner; this is the
    fallback for what it cannot see (a message held by a worker that died, a broker it cannot read)."""
    lost_message_check_s: float = Field(default=3.0, ge=0)
    """How often the beat looks for queued matches whose play message, and queued long jobs whose
    chunk message, is neither waiting in the broker nor held by a worker, and sends those again
    (services/match_runner/lost.py, shared/jobs/lost.py); 0: never. The other `lost_message_*`
    settings serve both checks."""
    lost_message_grace_s: float = Field(default=5.0, gt=0)
    """A queued match is looked for in the broker only once its message was sent this long ago:
    longer than a send takes after its commit."""
    lost_message_reserved_s: float = Field(default=60.0, gt=0)
    """A play message a worker took (or whose countdown ended) this long ago while its match is
    still queued counts as lost too: a worker starts what it takes at once, so it let go of this
    one (a worker drops what it holds when it loses Redis; one that died holds nothing). The rare
    exception, a retry whose countdown ended while every process of its worker was busy, is then
    played by another worker, and its own copy finds the match claimed: a no-op."""
    lost_message_scan_limit: int = Field(default=20_000, ge=1)
    """The check reads the whole matches queue; past this many messages there it skips the round
    (the reaper's `lost_match_after_s` still resends) rather than read megabytes every few seconds."""
    challenge_rate_limit: int = Field(default=20, ge=1)
    """Challenges (POST /matches) one user may request per window, across every gateway process."""
    challenge_rate_window_s: int = Field(default=600, ge=1)
    """The fixed window of that limit, in seconds (counted in Redis; admins are not limited)."""
    leaderboard_cache_s: float = Field(default=2.0, ge=0)
    """How long a gateway process reuses a built leaderboard page; a rated match's end, or a write
    through the same process, drops it sooner. 0: every request reads the database."""
    access_log: bool = True
    """One gateway log line per HTTP request (client, request line, status, milliseconds) on
    standard output; it replaces uvicorn's own access log, which the gateway then quiets."""
    access_log_flush_s: float = Field(default=1.0, gt=0, le=60)
    """Access log lines are written together at least this often (and every 256 lines): a line is
    at most this late, and a process killed outright loses at most this much of its log."""
    secret_grace_s: float = Field(default=24 * 3600, ge=0)
    """After a secret rotation the runner also signs with the previous secret for this long."""
    health_suspend_after: int = Field(default=3, ge=1)
    """Consecutive failed pre-match health checks after which a bot is suspended."""
    health_backoff_s: float = Field(default=60.0, ge=0)
    """The ladder skips a bot whose last check failed for this long, doubling per further failure."""

    # Ladder
    ladder_interval_s: float = 5.0
    ladder_max_pending: int = 4
    """The ladder only queues a new match while fewer than this many ladder matches are pending."""
    reaper_interval_s: float = 30.0
    ladder_rating_window: float = Field(default=5.0, ge=0)
    """Mu distance (beyond twice the pair's combined sigma) within which every pair of active bots
    is meant to meet; see services/match_runner/ladder.py."""

    # Quotas (shared/quotas.py; docs/deploy.md, "Quotas"): per user, counted from the database rows
    # across every gateway process; over one: 429 with Retry-After. Admins are exempt.
    quota_runs_per_hour: int = Field(default=20, ge=1)
    """Training and evolution runs (together) a user may create in any hour."""
    quota_active_runs: int = Field(default=4, ge=1)
    """Training and evolution runs (together) a user may have queued, running or stopping at once;
    creating or resuming one more is refused."""
    quota_training_seconds_per_day: float = Field(default=4 * 3600.0, gt=0)
    """Training time (the iterations' wall seconds) a user's training runs may use in any 24 h.
    Once used up, creating and resuming training runs is refused, and a running one fails at its
    next chunk, saying why (a chunk trains at most what is left)."""
    quota_llm_usd_per_day: float = Field(default=20.0, gt=0)
    """LLM money (USD, the calls' recorded cost) a user's evolution runs may spend in any 24 h; once
    spent, creating and resuming evolution runs is refused (a run's own max_cost_usd still caps a
    running one)."""
    quota_bots_per_hour: int = Field(default=10, ge=1)
    """Bots (HTTP and hosted) a user may register in any hour."""
    quota_uploads_per_hour: int = Field(default=30, ge=1)
    """New hosted bot versions a user may upload in any hour (training exports count too)."""

    # Long jobs (shared.jobs): training and evolution runs, worked through in bounded chunks
    job_chunk_soft_time_limit_s: int = 600
    job_chunk_hard_time_limit_s: int = 660
    """A chunk's limits: minutes, never hours; the checkpoint is written at the end of each chunk."""
    job_heartbeat_interval_s: float = Field(default=5.0, gt=0)
    stale_job_after_s: float = Field(default=60.0, gt=0)
    """A running job whose heartbeat is older than this lost its worker: the reaper requeues it."""
    max_job_chunk_attempts: int = Field(default=3, ge=1)
    """Claims of one chunk (crashes and handler errors) before the job fails."""
    job_resend_after_s: float = Field(default=900.0, gt=0)
    """A job queued for longer than this gets its chunk message sent again (a duplicate is a no-op):
    the fallback for what the lost-message check (`lost_message_check_s`) cannot see."""

    # Trainer (services/trainer; docs/trainer-service.md)
    training_chunk_seconds: float = Field(default=120.0, gt=0)
    """Training time per chunk: iterations start until this much has passed, then the chunk saves
    a checkpoint and queues the next. Shorter: more checkpoints (less work lost to a crash, config
    changes seen sooner by pages); longer: less time spent saving. Must stay well within the chunk's
    soft time limit (at most half of it), since the last iteration, the save and the export follow."""
    training_checkpoint_dir: Path | None = None
    """Where checkpoint files live, one folder per run; unset: `<data_dir>/training`."""
    training_keep_checkpoints: int = Field(default=3, ge=1)
    """Checkpoint files kept per run (the newest); files of exported checkpoints are always kept."""
    training_torch_threads: int = Field(default=0, ge=0)
    """CPU threads torch may use in the trainer worker; 0: torch's default (one per core). Set it
    when the trainer shares its cores with other work: contended threads slow torch down a lot."""

    # Prometheus ports of the workers (docs/deploy.md, "Metrics, dashboards and alerts"); 0: off.
    # The match runner's is ARENA_WORKER_METRICS_PORT (services/match_runner/worker.py).
    trainer_metrics_port: int = Field(default=0, ge=0, le=65535)
    """The trainer worker's pool process serves /metrics here (compose: 9102)."""
    evolver_metrics_port: int = Field(default=0, ge=0, le=65535)
    """The evolver worker's pool process serves /metrics here (compose: 9103)."""

    # Hosted bots
    sandbox_backend: Literal["bwrap", "process"] = "bwrap"
    """`bwrap` (bubblewrap: the isolation boundary) or `process` (no isolation; development only)."""
    hosted_code_max_chars: int = Field(default=100_000, ge=100)
    sandbox_uid_base: int = Field(default=1_900_000_000, ge=1, le=4_000_000_000)
    """The first host uid (and gid) of the range sandboxes run as, one each while they live, so the
    limits the kernel keeps per uid (pipe buffers, process count) are each sandbox's own; used when
    the worker runs as root. The default lies between systemd's container range (524288-1879048191)
    and its foreign range (from 2147352576): no system, regular or container user has these uids.
    Hosts whose workers do not share `sandbox_uid_lock_dir` (containers) need ranges that do not
    overlap. The upper bound keeps base + count below the invalid uid 2**32 - 1."""
    sandbox_uid_count: int = Field(default=1024, ge=1, le=65_536)
    """How many sandboxes may run at once on the host (warm pools' included); one more is refused
    with a SandboxError until one ends. Each uid in use holds a lock file in `sandbox_uid_lock_dir`."""
    sandbox_uid_lock_dir: Path = Path("/run/arena/sandbox-uids")
    """Where the lock files of the uids in use live, shared by every worker process on the host; it
    must belong to the worker's user and be writable by no one else (it is created mode 0700)."""
    sandbox_reuse_matches: int = Field(default=50, ge=1, le=10_000)
    """Matches one sandbox of a hosted bot (`decide` contract) may play in a row, each with the
    bot's module loaded afresh, before the worker replaces it; 1 starts a sandbox for every match.
    A sandbox is kept only after a match it played cleanly (shared/sandbox/reuse.py)."""
    sandbox_reuse_idle: int = Field(default=4, ge=0, le=256)
    """Sandboxes each worker process keeps, frozen, waiting for their bot's next match."""
    sandbox_reuse_idle_s: float = Field(default=60.0, gt=0)
    """A waiting sandbox not asked for within this many seconds is stopped."""

    # Replays (shared/replay_store; docs/deploy.md, "Replays in object storage")
    replay_store: ReplayStorage = ReplayStorage.FILESYSTEM
    """Where new replays are written: `filesystem` (files under `replay_dir`, enough for one machine or
    a volume every gateway and match runner mounts) or `s3` (a bucket on any S3-compatible store).
    The `replays` table records each replay's place, so replays written elsewhere stay readable."""
    replay_dir: Path | None = None
    """The filesystem store's folder; unset: `<data_dir>/replays`."""
    replay_s3_endpoint: str | None = None
    """The S3 endpoint URL (`http://minio:9000`); unset: AWS S3 in `replay_s3_region`."""
    replay_s3_bucket: str | None = None
    """The bucket that holds the replays; required by the `s3` store, created on first write if missing."""
    replay_s3_access_key: str | None = None
    replay_s3_secret_key: SecretStr | None = None
    """Both or neither; unset: boto3's own credential chain (AWS_* variables, instance roles)."""
    replay_s3_region: str = "us-east-1"
    replay_sweep_interval_s: float = Field(default=6 * 3600.0, ge=0)
    """How often the beat removes orphan replay objects (written by an attempt whose finishing commit
    then failed, and no longer referenced by any match: shared/replay_store/sweep.py); 0: never."""
    replay_sweep_min_age_s: float = Field(default=3600.0, gt=0)
    """Objects younger than this are never removed by the sweep, whatever the database says."""

    @model_validator(mode="after")
    def _refuse_default_secret(self) -> Settings:
        if not self.dev_mode and self.secret_key.get_secret_value() == DEFAULT_SECRET_KEY:
            raise ValueError("ARENA_SECRET_KEY is the built-in default; set a secret key or ARENA_DEV_MODE=1")
        if not self.dev_mode and self.sandbox_backend == "process":
            raise ValueError("the 'process' sandbox backend is only allowed with ARENA_DEV_MODE=1")
        if self.match_hard_time_limit_s <= self.match_soft_time_limit_s:
            raise ValueError("match_hard_time_limit_s must exceed match_soft_time_limit_s")
        if self.job_chunk_hard_time_limit_s <= self.job_chunk_soft_time_limit_s:
            raise ValueError("job_chunk_hard_time_limit_s must exceed job_chunk_soft_time_limit_s")
        if self.beat_task_hard_time_limit_s <= self.beat_task_soft_time_limit_s:
            raise ValueError("beat_task_hard_time_limit_s must exceed beat_task_soft_time_limit_s")
        name, longest = max(self.task_hard_time_limits().items(), key=lambda item: item[1])
        if self.broker_visibility_timeout_s <= longest:
            raise ValueError(
                f"broker_visibility_timeout_s ({self.broker_visibility_timeout_s}) must exceed the longest "
                f"task hard time limit, {name} ({longest})"
            )
        if self.stale_job_after_s <= 2 * self.job_heartbeat_interval_s:
            raise ValueError("stale_job_after_s must exceed twice job_heartbeat_interval_s")
        if self.training_chunk_seconds > self.job_chunk_soft_time_limit_s / 2:
            raise ValueError(
                "training_chunk_seconds must be at most half of job_chunk_soft_time_limit_s: the last "
                "iteration, the checkpoint and the export still follow"
            )
        return self

    @field_validator("llm_allowed_hosts", mode="before")
    @classmethod
    def _host_list(cls, value: object) -> object:
        """From the environment: comma-separated names, or a JSON list of them."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text.startswith("["):
            return [name.strip() for name in text.split(",") if name.strip()]
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(
                f"{value!r} is neither a JSON list nor comma-separated host names; "
                'write ARENA_LLM_ALLOWED_HOSTS=ollama,vllm.internal or \'["ollama", "vllm.internal"]\''
            ) from None

    @field_validator("llm_endpoints")
    @classmethod
    def _endpoint_names(cls, value: dict[str, LlmEndpoint]) -> dict[str, LlmEndpoint]:
        for name in value:
            if not _ENDPOINT_NAME.fullmatch(name):
                raise ValueError(
                    f"LLM endpoint name {name!r}: 1 to 64 lowercase letters, digits, '.', '_' or '-', "
                    "starting with a letter or digit"
                )
        return value

    @field_validator(
        "replay_s3_endpoint",
        "replay_s3_bucket",
        "replay_s3_access_key",
        "replay_s3_secret_key",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """`ARENA_REPLAY_S3_ACCESS_KEY=` (Compose's `${VAR:-}`) means unset, not an empty key."""
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _check_replay_store(self) -> Settings:
        if self.replay_store == ReplayStorage.DATABASE:
            raise ValueError(
                "ARENA_REPLAY_STORE=database is not a place to write replays (old rows are still read "
                "from it); use 'filesystem' or 's3'"
            )
        if self.replay_s3_bucket is not None and not _S3_BUCKET.fullmatch(self.replay_s3_bucket):
            raise ValueError(
                f"ARENA_REPLAY_S3_BUCKET {self.replay_s3_bucket!r} is not a valid bucket name: 3 to 63 "
                "lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit"
            )
        if self.replay_s3_endpoint is not None:
            parts = urlsplit(self.replay_s3_endpoint)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(
                    f"ARENA_REPLAY_S3_ENDPOINT {self.replay_s3_endpoint!r} must be an http:// or https:// "
                    "URL with a host, e.g. http://minio:9000"
                )
        if (self.replay_s3_access_key is None) != (self.replay_s3_secret_key is None):
            raise ValueError(
                "set both ARENA_REPLAY_S3_ACCESS_KEY and ARENA_REPLAY_S3_SECRET_KEY, or neither "
                "(then boto3's own credential chain is used)"
            )
        if self.replay_store == ReplayStorage.S3 and self.replay_s3_bucket is None:
            raise ValueError(
                "ARENA_REPLAY_STORE=s3 needs ARENA_REPLAY_S3_BUCKET (the bucket that holds replays)"
            )
        return self

    def replay_path(self) -> Path:
        """The filesystem replay store's folder (`replay_dir`, or under data_dir)."""
        return self.replay_dir or self.data_dir / "replays"

    def task_hard_time_limits(self) -> dict[str, int]:
        """Every task's hard time limit, by setting: the broker's visibility timeout must outlast them
        all. A service that adds a limit of its own lists it here."""
        return {
            "match_hard_time_limit_s": self.match_hard_time_limit_s,
            "job_chunk_hard_time_limit_s": self.job_chunk_hard_time_limit_s,
            "beat_task_hard_time_limit_s": self.beat_task_hard_time_limit_s,
        }

    def training_checkpoints_path(self) -> Path:
        """Where the trainer keeps its checkpoint files (`training_checkpoint_dir`, or under data_dir)."""
        return self.training_checkpoint_dir or self.data_dir / "training"

    def fernet_key(self) -> bytes:
        """A Fernet key derived from the secret key (so one setting rules all at-rest encryption)."""
        digest = hashlib.sha256(b"arena-bot-secrets:" + self.secret_key.get_secret_value().encode()).digest()
        return base64.urlsafe_b64encode(digest)


_installed: list[Settings] = []
"""The Settings a front end installed (`installed_settings`), innermost last."""


@cache
def get_settings() -> Settings:
    """This process's Settings: the installed ones, else those read from the environment, once."""
    return _installed[-1] if _installed else Settings()


@contextmanager
def installed_settings(settings: Settings) -> Iterator[Settings]:
    """Make `get_settings()` answer `settings` in this process, every thread, until the block ends.

    A front end that builds its settings from its own options (`arena evolve`) hands them to the
    platform's code this way instead of writing them into `os.environ`, which would outlive the
    block and reach every process it starts. Code that read its settings earlier (a module's
    `get_settings()` at import) keeps what it read, so install them before importing it.
    """
    _installed.append(settings)
    get_settings.cache_clear()
    try:
        yield settings
    finally:
        _installed.pop()
        get_settings.cache_clear()
