"""The run's hosted bots: a new best at or above the promotion threshold becomes a version of the
run's bot; a program that plays a tournament is pinned as a version of the run's inactive
candidate bot."""

from __future__ import annotations

import uuid

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from shared import bots
from shared.config import Settings, get_settings
from shared.db.models import Bot, EvolutionProgram, EvolutionRun, User
from shared.db.session import session_scope
from shared.evolution.config import EvolutionConfig
from shared.states import BotOrigin, BotStatus, HostedContract


def promote(session: Session, settings: Settings, run: EvolutionRun, row: EvolutionProgram) -> uuid.UUID:
    """Make `row` the newest version of the run's bot (registered on the first promotion, owned by
    the run's owner, on the ladder); the version's id."""
    notes = {"evolution_run": str(run.id), "program": f"p{row.seq}", "fitness": row.fitness}
    bot = session.get(Bot, run.bot_id) if run.bot_id else None
    if bot is None:
        owner = session.get(User, run.owner_id)
        assert owner is not None
        config = EvolutionConfig.model_validate(run.config)
        name = config.bot_name or f"evo-{run.name}"[:64]
        bot = bots.register_hosted_bot(
            session,
            settings,
            owner,
            name=_free_name(session, run.game, name),
            game=run.game,
            source=row.code,
            origin=BotOrigin.EVOLVER,
            notes=notes,
        )
        locked = session.get(EvolutionRun, run.id, with_for_update=True)
        assert locked is not None
        locked.bot_id = bot.id
        version_id = bot.current_version_id
    else:
        version = bots.add_version(session, settings, bot, source=row.code, notes=notes)
        version_id = version.id
    assert version_id is not None
    row.promoted_version_id = version_id
    return version_id


def _free_name(session: Session, game: str, name: str) -> str:
    taken = set(session.scalars(select(Bot.name).where(Bot.game == game, Bot.name.startswith(name[:56]))))
    if name not in taken:
        return name
    for n in range(2, 10_000):
        candidate = f"{name[:56]}-{n}"
        if candidate not in taken:
            return candidate
    return f"{name[:40]}-{uuid.uuid4().hex[:12]}"


def candidate_version(run_id: uuid.UUID, program_id: uuid.UUID) -> tuple[uuid.UUID, uuid.UUID]:
    """(bot id, version id) pinning this program for tournament matches: a version of the run's
    candidate bot, which is inactive so the ladder never seats it. Made once per program."""
    settings = get_settings()
    with session_scope() as session:
        run = session.get(EvolutionRun, run_id, with_for_update=True)
        row = session.get(EvolutionProgram, program_id, with_for_update=True)
        assert run is not None
        assert row is not None
        bot = session.get(Bot, run.candidate_bot_id) if run.candidate_bot_id else None
        if bot is not None and row.version_id is not None:
            return bot.id, row.version_id
        if bot is None:
            owner = session.get(User, run.owner_id)
            assert owner is not None
            bot = bots.register_hosted_bot(
                session,
                settings,
                owner,
                name=_free_name(session, run.game, f"evo-{str(run.id)[:8]}-candidates"),
                game=run.game,
                source=row.code,
                origin=BotOrigin.EVOLVER,
                notes={"evolution_run": str(run.id), "program": f"p{row.seq}"},
                status=BotStatus.INACTIVE,
                status_reason="evolution candidates: plays only the run's evaluation matches",
            )
            run = session.get(EvolutionRun, run_id, with_for_update=True)
            row = session.get(EvolutionProgram, program_id, with_for_update=True)
            assert run is not None
            assert row is not None
            run.candidate_bot_id = bot.id
            version_id = bot.current_version_id
            assert version_id is not None
            row.version_id = version_id
            session.commit()
            return bot.id, version_id
        version = bots.add_version(
            session,
            settings,
            bot,
            source=row.code,
            contract=HostedContract.DECIDE,
            notes={"evolution_run": str(run.id), "program": f"p{row.seq}"},
        )
        # add_version committed; pin the version on the program in a second short transaction
    with session_scope() as session:
        session.execute(
            update(EvolutionProgram).where(EvolutionProgram.id == program_id).values(version_id=version.id)
        )
        session.commit()
    return bot.id, version.id
