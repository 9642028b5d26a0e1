"""Evolution runs as plain functions over a Session: create, find, stop, resume, and read their
generations, programs, LLM calls, events and spend.

A run is an `evolution_runs` row and its long job (`jobs`, 1:1; shared.jobs): the job holds the
status, the chunk and the checkpoint the next chunk starts from; the evolver worker
(services/evolver) works the chunks on the `evolution` queue. Nothing here imports the evolver, so
the gateway calls these. Functions that change something commit.
"""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from shared.config import Settings
from shared.crypto import encrypt_secret
from shared.db.models import (
    EvolutionEvent,
    EvolutionGeneration,
    EvolutionLlmCall,
    EvolutionProgram,
    EvolutionRun,
    Job,
    User,
)
from shared.evolution.allowance import require_operator_allowance
from shared.evolution.config import (
    BUILTIN_CHILD_MODEL,
    BUILTIN_ROOT_MODEL,
    DEFAULT_FITNESS_WEIGHTS,
    FITNESS_COMPONENTS,
    EvolutionConfig,
    LlmConfig,
)
from shared.evolution.endpoint import check_llm_endpoint, operator_endpoint
from shared.evolution.errors import (
    EvolutionRunNotFound,
    EvolutionRunStateError,
    InvalidFitnessWeights,
    InvalidSeed,
    LlmCallNotFound,
    LlmKeyMisuse,
    LlmModelNotOffered,
    ProgramNotFound,
    UnevolvableGame,
)
from shared.jobs import JobRoute, OwnedRunKind, create_job
from shared.jobs import may_see as may_see
from shared.queue import QUEUE_EVOLUTION
from shared.sandbox.gate import check_source
from shared.states import EvolutionEventKind, HostedContract, LlmRole, ProgramStatus

log = logging.getLogger("shared.evolution")

TASK_EVOLVE_CHUNK = "arena.evolution.chunk"
"""Runs one chunk of an evolution run (services.evolver.tasks), on the `evolution` queue."""
EVOLUTION = JobRoute(kind="evolution", task_name=TASK_EVOLVE_CHUNK, queue=QUEUE_EVOLUTION)
EVOLVABLE_GAMES = ("battle", "podracing")


def _finished(run: EvolutionRun) -> str:
    return f"evolution run {run.id} is finished ({run.termination_reason}): start a new run to go on"


RUNS = OwnedRunKind(
    EvolutionRun,
    noun="evolution run",
    not_found=EvolutionRunNotFound,
    state_error=EvolutionRunStateError,
    finished=_finished,
    log=log,
)
"""Evolution runs as owned runs (shared.jobs.runs)."""
get_run = RUNS.get_run
list_runs = RUNS.list_runs
stop_run = RUNS.stop_run
resume_run = RUNS.resume_run


def check_config(game: str, config: EvolutionConfig) -> None:
    if game not in EVOLVABLE_GAMES:
        raise UnevolvableGame(game, EVOLVABLE_GAMES)
    unknown = sorted(set(config.evaluation.fitness_weights or {}) - set(FITNESS_COMPONENTS.get(game, ())))
    if unknown:
        raise InvalidFitnessWeights(
            f"{game} has no fitness component {', '.join(map(repr, unknown))}; "
            f"its components: {', '.join(FITNESS_COMPONENTS.get(game, ()))}"
        )
    for index, source in enumerate(config.seeds):
        problems = check_source(source, contract=HostedContract.DECIDE)
        if problems:
            listed = "; ".join(str(p) for p in problems[:10])
            raise InvalidSeed(f"seed {index} does not pass the static gate: {listed}")


def check_llm_source(
    session: Session, settings: Settings, owner: User, config: EvolutionConfig, api_key: str | None
) -> EvolutionConfig:
    """The run's LLM source is one of three, never a mix: the built-in operator (no key), one of the
    operator's endpoints (the operator's key, within the user's allowance) or the run's own base
    URL with the run's own key. Returns the config with an endpoint's default model filled in."""
    llm = config.llm
    if llm.endpoint is not None:
        if api_key:
            raise LlmKeyMisuse(
                f"api_key: a run on the endpoint {llm.endpoint!r} is called with the operator's key; "
                "send no api_key (or give your own llm.base_url with your own key)"
            )
        endpoint = operator_endpoint(settings, llm.endpoint)
        llm = _endpoint_models(llm, endpoint.models)
        require_operator_allowance(session, settings, owner)
        return config.model_copy(update={"llm": llm})
    if llm.base_url is not None:
        if not api_key:
            raise LlmKeyMisuse(
                "api_key: a run with its own llm.base_url must bring its own api_key (stored encrypted, "
                "never shown); this platform's keys are only used with its own endpoints (llm.endpoint). "
                "For a server that takes no key, send any placeholder"
            )
        check_llm_endpoint(settings, llm.base_url)
        return config
    if api_key:
        raise LlmKeyMisuse(
            "api_key: the built-in operator takes no key; a key goes with your own llm.base_url"
        )
    return config


def _endpoint_models(llm: LlmConfig, offered: list[str]) -> LlmConfig:
    """An operator endpoint's first model stands in for the built-in names; a model it does not
    offer is refused."""
    update: dict[str, str] = {}
    for field, builtin in (("root_model", BUILTIN_ROOT_MODEL), ("child_model", BUILTIN_CHILD_MODEL)):
        model = getattr(llm, field)
        if model == builtin:
            if not offered:
                raise LlmModelNotOffered(
                    f"llm.{field}: name the model to use on the endpoint {llm.endpoint!r}"
                )
            update[field] = offered[0]
        elif offered and model not in offered:
            raise LlmModelNotOffered(
                f"llm.{field}: the endpoint {llm.endpoint!r} offers {', '.join(offered)}, not {model!r}"
            )
    return llm.model_copy(update=update)


def new_run(
    session: Session,
    settings: Settings,
    owner: User,
    *,
    name: str,
    game: str,
    config: EvolutionConfig,
    api_key: str | None = None,
) -> tuple[EvolutionRun, Job]:
    """Insert a queued run and its job (not committed, nothing sent). The run stores its fitness
    weights (the game's defaults unless given), so changing the defaults never changes a run."""
    check_config(game, config)
    if config.evaluation.fitness_weights is None:
        weights = dict(DEFAULT_FITNESS_WEIGHTS.get(game, {"win_rate": 1.0}))
        evaluation = config.evaluation.model_copy(update={"fitness_weights": weights})
        config = config.model_copy(update={"evaluation": evaluation})
    config = check_llm_source(session, settings, owner, config, api_key)
    run_id = uuid.uuid4()
    job = create_job(session, EVOLUTION, {"run_id": str(run_id)})
    run = EvolutionRun(
        id=run_id,
        job_id=job.id,
        owner_id=owner.id,
        game=game,
        name=name,
        config=config.model_dump(mode="json"),
        parameters=config.initial_parameters(),
        generation=0,
        spent_usd=0.0,
        tokens=0,
        llm_calls=0,
        elapsed_s=0.0,
        islands={},
        api_key_encrypted=encrypt_secret(settings, api_key) if api_key else None,
    )
    session.add(run)
    session.flush()
    return run, job


def create_run(
    session: Session,
    settings: Settings,
    owner: User,
    *,
    name: str,
    game: str,
    config: EvolutionConfig,
    api_key: str | None = None,
) -> EvolutionRun:
    """A queued run with its job; its first chunk is sent after the commit. `api_key`, when given,
    is stored encrypted with the run (else the worker's environment supplies one)."""
    run, job = new_run(session, settings, owner, name=name, game=game, config=config, api_key=api_key)
    session.commit()
    RUNS.enqueue_quietly(run, job)
    log.info("evolution run %s (%s, %s) created for %s", run.id, name, game, owner.name)
    return run


# ---------------------------------------------------------------- reading a run
def generations(session: Session, run: EvolutionRun) -> list[EvolutionGeneration]:
    return list(
        session.scalars(
            select(EvolutionGeneration)
            .where(EvolutionGeneration.run_id == run.id)
            .order_by(EvolutionGeneration.number)
        )
    )


def programs(
    session: Session,
    run: EvolutionRun,
    *,
    generation: int | None = None,
    status: ProgramStatus | None = None,
    limit: int = 1000,
    offset: int = 0,
) -> tuple[list[EvolutionProgram], int]:
    query = select(EvolutionProgram).where(EvolutionProgram.run_id == run.id)
    if generation is not None:
        query = query.where(EvolutionProgram.generation == generation)
    if status is not None:
        query = query.where(EvolutionProgram.status == status)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(query.order_by(EvolutionProgram.seq).limit(limit).offset(offset)).all()
    return list(rows), total


PROGRAM_NAME = re.compile(r"p?([0-9]{1,9})", re.ASCII)


def parse_program_name(name: str) -> int | None:
    """ "p12" or "12" -> 12; None for anything else (ASCII digits only, at most nine)."""
    found = PROGRAM_NAME.fullmatch(name.strip())
    return int(found.group(1)) if found else None


def program(session: Session, run: EvolutionRun, name: str) -> EvolutionProgram:
    """A program by its name in the run ("p12", or just 12)."""
    seq = parse_program_name(name)
    row = (
        None
        if seq is None
        else session.scalars(
            select(EvolutionProgram).where(EvolutionProgram.run_id == run.id, EvolutionProgram.seq == seq)
        ).one_or_none()
    )
    if row is None:
        raise ProgramNotFound(run.id, name)
    return row


def seq_names(session: Session, run: EvolutionRun) -> dict[uuid.UUID, str]:
    """Program id -> "p<seq>" for the run (to show lineage by name)."""
    rows = session.execute(
        select(EvolutionProgram.id, EvolutionProgram.seq).where(EvolutionProgram.run_id == run.id)
    ).all()
    return {pid: f"p{seq}" for pid, seq in rows}


def llm_calls(
    session: Session, run: EvolutionRun, *, role: LlmRole | None = None, limit: int = 100, offset: int = 0
) -> tuple[list[EvolutionLlmCall], int]:
    query = select(EvolutionLlmCall).where(EvolutionLlmCall.run_id == run.id)
    if role is not None:
        query = query.where(EvolutionLlmCall.role == role)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.scalars(
        query.order_by(EvolutionLlmCall.created_at, EvolutionLlmCall.key).limit(limit).offset(offset)
    ).all()
    return list(rows), total


def llm_call(session: Session, run: EvolutionRun, call_id: uuid.UUID) -> EvolutionLlmCall:
    row = session.get(EvolutionLlmCall, call_id)
    if row is None or row.run_id != run.id:
        raise LlmCallNotFound(run.id, call_id)
    return row


def events(
    session: Session,
    run: EvolutionRun,
    *,
    after: int = 0,
    kinds: tuple[EvolutionEventKind, ...] = (),
    limit: int = 500,
) -> list[EvolutionEvent]:
    query = select(EvolutionEvent).where(EvolutionEvent.run_id == run.id, EvolutionEvent.id > after)
    if kinds:
        query = query.where(EvolutionEvent.kind.in_(kinds))
    return list(session.scalars(query.order_by(EvolutionEvent.id).limit(limit)))


@dataclass(frozen=True, slots=True)
class SpendLine:
    role: LlmRole
    model: str
    calls: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


def spend(session: Session, run: EvolutionRun) -> list[SpendLine]:
    """What the run's LLM calls cost, per role and model."""
    rows = session.execute(
        select(
            EvolutionLlmCall.role,
            EvolutionLlmCall.model,
            func.count(),
            func.count().filter(EvolutionLlmCall.status != "ok"),
            func.coalesce(func.sum(EvolutionLlmCall.prompt_tokens), 0),
            func.coalesce(func.sum(EvolutionLlmCall.completion_tokens), 0),
            func.coalesce(func.sum(EvolutionLlmCall.cost_usd), 0.0),
        )
        .where(EvolutionLlmCall.run_id == run.id)
        .group_by(EvolutionLlmCall.role, EvolutionLlmCall.model)
        .order_by(EvolutionLlmCall.role, EvolutionLlmCall.model)
    ).all()
    return [SpendLine(LlmRole(r[0]), r[1], r[2], r[3], int(r[4]), int(r[5]), float(r[6])) for r in rows]
