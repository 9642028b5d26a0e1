"""`arena evolve`: an evolution run on this machine, on the code the evolver worker runs.

Locally (no --server) the run is a row in a database (ARENA_DATABASE_URL when it answers, else an
embedded PostgreSQL under --data-dir), worked chunk after chunk in this process by the evolver's
own job handler; generated code runs in the hosted-bot sandbox and plays the built-in bots (and
any --opponent files). Without --llm-base-url the built-in mutation operator and rule-based root
stand in for the LLMs. With --server the run is submitted to a running Arena instead.

The API key comes from ARENA_LLM_API_KEY or OPENAI_API_KEY, never from the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from services.cli.errors import CliError, first_problem

if TYPE_CHECKING:
    from shared.config import Settings

DEFAULT_DATA_DIR = ".arena-data/evolve"
LOCAL_USER = "local"


def _config(args: argparse.Namespace) -> dict[str, Any]:
    """The run's EvolutionConfig as JSON, from the options (validated by the model)."""
    config: dict[str, Any] = {
        "llm": _llm_settings(args),
        "limits": _limit_settings(args),
        "evaluation": _evaluation_settings(args),
        "search": _search_settings(args),
        "seeds": [_read(path) for path in args.seed or []],
    }
    if args.random_seed is not None:
        config["random_seed"] = args.random_seed
    if args.chunk_seconds is not None:
        config["chunk_seconds"] = args.chunk_seconds
    return config


def _llm_settings(args: argparse.Namespace) -> dict[str, Any]:
    llm: dict[str, Any] = {}
    if args.llm_endpoint:
        if args.llm_base_url:
            raise CliError("--llm-endpoint names the server's endpoint; --llm-base-url is your own: pick one")
        if not args.server:
            raise CliError("--llm-endpoint names an endpoint of a server: it needs --server")
        llm["endpoint"] = args.llm_endpoint
        if args.llm_model:
            llm["child_model"] = args.llm_model
            llm["root_model"] = args.root_model or args.llm_model
    elif args.llm_base_url:
        llm["base_url"] = args.llm_base_url
        if not args.llm_model:
            raise CliError("--llm-base-url needs --llm-model (the children's model)")
        llm["child_model"] = args.llm_model
        llm["root_model"] = args.root_model or args.llm_model
    elif args.llm_model or args.root_model:
        raise CliError(
            "--llm-model and --root-model need --llm-base-url or --llm-endpoint (without either the "
            "built-in operator runs)"
        )
    return llm


def _limit_settings(args: argparse.Namespace) -> dict[str, Any]:
    limits: dict[str, Any] = {
        "max_generations": args.generations,
        "max_children_per_generation": args.children,
    }
    if args.budget_usd is not None:
        limits["max_cost_usd"] = args.budget_usd
    if args.max_minutes is not None:
        limits["max_wall_s"] = args.max_minutes * 60
    return limits


def _evaluation_settings(args: argparse.Namespace) -> dict[str, Any]:
    evaluation: dict[str, Any] = {}
    if args.quick is not None:
        evaluation["quick_matches"] = args.quick
    if args.tournament is not None:
        evaluation["tournament_matches"] = args.tournament
    if args.match_config:
        try:
            evaluation["match_config"] = json.loads(args.match_config)
        except json.JSONDecodeError as exc:
            raise CliError(f"--match-config is not JSON: {exc.msg}") from None
    if args.jobs is not None:
        evaluation["jobs"] = args.jobs
    if args.match_seeds is not None:
        evaluation["match_seeds"] = args.match_seeds
    if args.rematch:
        evaluation["rematch"] = True
        evaluation.setdefault("match_seeds", "generation")
    return evaluation


def _search_settings(args: argparse.Namespace) -> dict[str, Any]:
    search: dict[str, Any] = {}
    if args.islands is not None:
        search["islands"] = args.islands
    if args.exploration is not None:
        search["exploration_ratio"] = args.exploration
    if args.selection is not None:
        search["parent_selection"] = args.selection
    if args.constants_table is not None:
        search["constants_table"] = args.constants_table
    return search


def _read(path_text: str) -> str:
    path = Path(path_text)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {path}: {exc}") from None


def _validated(game: str, config: dict[str, Any], *, local: bool) -> Any:
    """The config as the run will have it, or a one-line error naming the setting. (A server
    validates what it is sent itself, and answers 422 naming the field.)"""
    from pydantic import ValidationError

    from shared.evolution import EvolutionConfig, EvolutionError, check_config

    if local:
        config = {**config, "evaluation": {**config["evaluation"], "tournament": "builtins"}}
    try:
        model = EvolutionConfig.model_validate(config)
    except ValidationError as exc:
        where, message = first_problem(exc)
        raise CliError(f"invalid evolution setting {where}: {message}") from None
    try:
        check_config(game, model)
    except EvolutionError as exc:
        raise CliError(exc.message) from None
    return model


def evolve(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.server:
        return _on_server(args, config)
    return _locally(args, config)


# ---------------------------------------------------------------- on a server
def _on_server(args: argparse.Namespace, config: dict[str, Any]) -> int:
    from services.cli.api_client import ApiClient

    body: dict[str, Any] = {
        "name": args.name or _default_name(args.game),
        "game": args.game,
        "config": config,
    }
    key = _api_key()
    if key and args.llm_base_url:
        body["api_key"] = key
    with ApiClient(args.server, args.api_key) as api:
        run = api.request("POST", "/evolution/runs", json=body)
    print(f"evolution run {run['id']} submitted to {args.server.rstrip('/')}/evolution/{run['id']}")
    return 0


LOCAL_NO_KEY = "arena-no-key"
"""Sent to a local model server when the environment holds no key (such servers take any)."""


def _api_key() -> str | None:
    from shared.config import llm_api_key

    return llm_api_key(os.environ)


def _default_name(game: str) -> str:
    return f"{game}-{time.strftime('%Y%m%d-%H%M%S')}"


# ---------------------------------------------------------------- locally
def _local_key(data_dir: Path) -> str:
    """A secret key for this data folder (bot secrets are encrypted with it), made once."""
    path = data_dir / "secret-key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(32)
    path.write_text(key)
    path.chmod(0o600)
    return key


def _database(data_dir: Path) -> tuple[str, Any]:
    """The database URL to use, and what stops it (an embedded server) or None."""
    from shared.db.embedded import ensure_database, postgres_reachable, start_embedded_postgres

    configured = os.environ.get("ARENA_DATABASE_URL")
    if configured:
        if not postgres_reachable(configured):
            raise CliError(f"ARENA_DATABASE_URL does not answer: {configured.split('@')[-1]}")
        ensure_database(configured)
        return configured, None
    print(f"starting an embedded PostgreSQL under {data_dir}/ …", flush=True)
    url, stop = start_embedded_postgres(data_dir, "arena_evolve")
    ensure_database(url)
    return url, stop


def _sandbox(requested: str) -> str:
    if requested == "process":
        print(
            "warning: --sandbox process runs generated code WITHOUT isolation (no network or file "
            "protection); use it only on a throwaway machine",
            file=sys.stderr,
        )
        return "process"
    if shutil.which("bwrap") is None:
        raise CliError(
            "bubblewrap (bwrap) is not installed, and generated code only runs in the sandbox; "
            "install bubblewrap, or pass --sandbox process on a machine you can throw away"
        )
    return "bwrap"


def _settings(data_dir: Path, **overrides: Any) -> Settings:
    """The environment's settings with this command's: this data folder's secret key unless
    ARENA_SECRET_KEY is set, `overrides`, and development mode with the `process` sandbox."""
    from shared.config import Settings

    if "ARENA_SECRET_KEY" not in os.environ:
        overrides["secret_key"] = _local_key(data_dir)
    if overrides.get("sandbox_backend") == "process":
        overrides["dev_mode"] = True
    return Settings(**overrides)


@contextmanager
def _platform(settings: Settings) -> Iterator[None]:
    """The platform's code in this process runs on `settings` (database sessions included) while
    the block runs; the environment is left as it was."""
    from shared.config import installed_settings
    from shared.db.session import get_engine, get_sessionmaker

    with installed_settings(settings):
        get_engine.cache_clear()
        get_sessionmaker.cache_clear()
        try:
            yield
        finally:
            get_engine().dispose()
            get_engine.cache_clear()
            get_sessionmaker.cache_clear()


def _local_user(session: Any) -> Any:
    from sqlalchemy import select

    from shared.db.models import User

    user = session.scalars(select(User).where(User.name == LOCAL_USER)).one_or_none()
    if user is None:
        user = User(name=LOCAL_USER)
        session.add(user)
        session.commit()
    return user


class _Interrupt:
    """First Ctrl+C: stop at the end of the current chunk (the run can be resumed); second: now."""

    def __init__(self) -> None:
        self.asked = False

    def __call__(self, _signum: int, _frame: FrameType | None) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True
        print(
            "\nstopping after the current step (Ctrl+C again to stop at once) …", file=sys.stderr, flush=True
        )


def _locally(args: argparse.Namespace, config: dict[str, Any]) -> int:
    data_dir = Path(args.data_dir)
    # The platform's settings are read when its modules load; this data folder's key comes first.
    with _platform(_settings(data_dir)):
        if not args.resume:
            _validated(args.game, config, local=True)  # a bad option fails before any database starts
        backend = _sandbox(args.sandbox)
        url, stop = _database(data_dir)
    try:
        with _platform(_settings(data_dir, database_url=url, sandbox_backend=backend)):
            from shared.db.migrations import migrate

            migrate(url)
            return _run_locally(args, config)
    finally:
        if stop is not None:
            stop()


def _run_locally(args: argparse.Namespace, config: dict[str, Any]) -> int:
    from services.evolver.handler import HANDLER
    from shared.config import get_settings
    from shared.db.models import EvolutionRun, Job
    from shared.db.session import session_scope
    from shared.evolution import new_run
    from shared.jobs import ChunkOutcome, run_chunk, stop_job
    from shared.jobs import resume_job as resume
    from shared.states import JobStatus

    settings = get_settings()
    with session_scope() as session:
        if args.resume:
            run = session.get(EvolutionRun, uuid.UUID(args.resume))
            if run is None:
                raise CliError(f"no evolution run {args.resume} in this database")
            run_id, job_id, name = run.id, run.job_id, run.name
        else:
            model = _validated(args.game, config, local=True)
            user = _local_user(session)
            run, job = new_run(
                session,
                settings,
                user,
                name=args.name or _default_name(args.game),
                game=args.game,
                config=model,
                # Locally the key in your environment is your own; a local server without keys
                # takes the placeholder.
                api_key=(_api_key() or LOCAL_NO_KEY) if model.llm.base_url else None,
            )
            session.commit()
            run_id, job_id, name = run.id, job.id, run.name
    if args.resume:
        try:
            resume(job_id, send=False)
        except Exception as exc:
            raise CliError(f"cannot resume run {run_id}: {exc}") from None
    out = Path(args.out) if args.out else Path("evolution") / name
    print(f"evolution run {run_id} ({args.game}); writing {out}/", flush=True)
    interrupt = _Interrupt()
    previous = signal.signal(signal.SIGINT, interrupt)
    status = JobStatus.QUEUED
    reported = -1
    try:
        while True:
            if interrupt.asked:
                stop_job(job_id)
            with session_scope() as session:
                row = session.get(Job, job_id)
                assert row is not None
                chunk, status = row.chunk, row.status
            if status in (JobStatus.FINISHED, JobStatus.STOPPED, JobStatus.FAILED):
                break
            outcome = run_chunk(HANDLER, job_id, chunk, send_next=False)
            reported = _progress_line(run_id, reported)
            _write(run_id, out)
            if outcome == ChunkOutcome.SKIPPED:
                time.sleep(1.0)
    finally:
        signal.signal(signal.SIGINT, previous)
    _write(run_id, out)
    return _summary(run_id, job_id, out)


def _progress_line(run_id: uuid.UUID, reported: int) -> int:
    """One line per generation, printed when it closes (or when the run ends inside it), with the
    run's figures at that moment; returns the last generation reported. A chunk ends at a
    generation's close, at the chunk's time limit or at the run's end, so most chunks close one
    generation and some close none."""
    from shared.db.models import EvolutionRun
    from shared.db.session import session_scope

    with session_scope() as session:
        run = session.get(EvolutionRun, run_id)
        assert run is not None
        closed = run.generation if run.termination_reason else run.generation - 1
        if closed <= reported:
            return reported
        best = "-" if run.best_fitness is None else f"{run.best_fitness:.3f}"
        print(
            f"generation {closed:3d}  best fitness {best}  LLM calls {run.llm_calls}  "
            f"spent ${run.spent_usd:.4f}  {run.elapsed_s:.0f} s",
            flush=True,
        )
        return closed


def _write(run_id: uuid.UUID, out: Path) -> None:
    from shared.db.models import EvolutionRun
    from shared.db.session import session_scope
    from shared.evolution.rundir import write_run_directory

    with session_scope() as session:
        run = session.get(EvolutionRun, run_id)
        assert run is not None
        write_run_directory(session, run, out)


def _summary(run_id: uuid.UUID, job_id: uuid.UUID, out: Path) -> int:
    from shared.db.models import EvolutionProgram, EvolutionRun, Job
    from shared.db.session import session_scope
    from shared.states import JobStatus

    with session_scope() as session:
        run = session.get(EvolutionRun, run_id)
        job = session.get(Job, job_id)
        assert run is not None
        assert job is not None
        best = session.get(EvolutionProgram, run.best_program_id) if run.best_program_id else None
        print(
            f"\nrun {run.id}: {job.status}"
            + (f" ({run.termination_reason})" if run.termination_reason else "")
        )
        if job.status == JobStatus.FAILED:
            print(f"error: {job.error}")
        if best is not None:
            print(f"best program p{best.seq}: fitness {best.fitness:.3f}; written to {out}/best_bot.py")
        if job.status == JobStatus.STOPPED:
            print(f"resume with: arena evolve {run.game} --resume {run.id} --out {out}")
        return 0 if job.status in (JobStatus.FINISHED, JobStatus.STOPPED) else 1
