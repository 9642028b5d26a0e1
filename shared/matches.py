"""Creating, queueing and showing matches. Used by the gateway (challenges, every match it shows),
the ladder and the evolver (evaluation matches, as private as their evolution run)."""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import ColumnElement, or_, select, true
from sqlalchemy.orm import Session

from shared.db.models import Bot, BotVersion, EvolutionRun, Match, MatchParticipant, User
from shared.games.registry import UnknownGameError, get_game
from shared.queue import QUEUE_MATCHES, send_task
from shared.states import BotStatus, MatchKind, UserRole

TASK_PLAY_MATCH = "arena.matches.play"
"""Plays one match (services.match_runner.tasks), on the `matches` queue."""


class MatchRequestError(ValueError):
    """A match cannot be created as asked; the message says why (shown to API users)."""

    def __init__(self, message: str, status_code: int = 400) -> None:
        super().__init__(message)
        self.status_code = status_code


def create_match(
    session: Session,
    *,
    game: str,
    bot_ids: Sequence[uuid.UUID],
    kind: MatchKind = MatchKind.CHALLENGE,
    rated: bool = True,
    seed: int | None = None,
    config: dict[str, Any] | None = None,
    requested_by_id: uuid.UUID | None = None,
    version_ids: Sequence[uuid.UUID | None] | None = None,
    evolution_run_id: uuid.UUID | None = None,
) -> Match:
    """Insert a queued match with one participant per bot, in slot order. Does not commit.

    `version_ids` (one per bot, None for "the bot's current version") pins the versions played,
    e.g. the evolver's candidate. Evaluation matches may seat bots that are not active (the
    evolver's candidates are inactive, so the ladder never seats them); they are never rated, and
    belong to the evolution run they evaluate (`evolution_run_id`, by default the run whose
    candidate bot is seated), whose privacy they share (`visible_to`).
    """
    try:
        game_impl = get_game(game)
    except UnknownGameError as exc:
        raise MatchRequestError(str(exc.args[0])) from None
    if not game_impl.min_players <= len(bot_ids) <= game_impl.max_players:
        raise MatchRequestError(
            f"{game} needs {game_impl.min_players}..{game_impl.max_players} bots, got {len(bot_ids)}"
        )
    if len(set(bot_ids)) != len(bot_ids):
        raise MatchRequestError("a bot cannot play against itself")
    try:
        parsed = game_impl.parse_config(config)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise MatchRequestError(f"invalid {game} config: {problems}", 422) from None
    bots = {bot.id: bot for bot in session.scalars(select(Bot).where(Bot.id.in_(bot_ids)))}
    for bot_id in bot_ids:
        bot = bots.get(bot_id)
        if bot is None:
            raise MatchRequestError(f"bot {bot_id} does not exist", 404)
        if bot.game != game:
            raise MatchRequestError(f"bot {bot.name!r} plays {bot.game}, not {game}")
        if bot.status != BotStatus.ACTIVE and kind != MatchKind.EVALUATION:
            raise MatchRequestError(f"bot {bot.name!r} is {bot.status}", 409)
    if kind == MatchKind.EVALUATION and rated:
        raise MatchRequestError("evaluation matches are never rated")
    if kind == MatchKind.EVALUATION and evolution_run_id is None:
        evolution_run_id = _evaluated_run(session, bot_ids)
    elif kind != MatchKind.EVALUATION and evolution_run_id is not None:
        raise MatchRequestError("only evaluation matches belong to an evolution run")
    pinned = _pinned_versions(session, bot_ids, version_ids)
    match = Match(
        game=game,
        kind=kind,
        rated=rated,
        seed=seed if seed is not None else secrets.randbits(53),
        config=parsed.model_dump(mode="json", exclude_defaults=True),
        requested_by_id=requested_by_id,
        evolution_run_id=evolution_run_id,
        participants=[
            MatchParticipant(
                slot=slot, bot_id=bot_id, bot_version_id=pinned[slot] or bots[bot_id].current_version_id
            )
            for slot, bot_id in enumerate(bot_ids)
        ],
    )
    session.add(match)
    session.flush()
    return match


def _evaluated_run(session: Session, bot_ids: Sequence[uuid.UUID]) -> uuid.UUID | None:
    """The evolution run whose candidate bot (a run's own, inactive bot:
    services/evolver/store/bots.py) takes a seat; None when none does, and the match is then shown
    to admins only."""
    return session.scalar(
        select(EvolutionRun.id)
        .where(EvolutionRun.candidate_bot_id.in_(bot_ids))
        .order_by(EvolutionRun.created_at)
        .limit(1)
    )


def visible_to(viewer: User | None) -> ColumnElement[bool]:
    """Which matches `viewer` (None: anonymous) may see, as a condition on `Match`: every match but
    evaluation matches, which are as private as their evolution run (its owner's and admins', as
    shared.evolution.may_see has it). A match hidden from someone is as unknown to them as one
    that does not exist (404), so it is left out of every list too."""
    if viewer is not None and viewer.role == UserRole.ADMIN:
        return true()
    public = Match.kind != MatchKind.EVALUATION
    if viewer is None:
        return public
    owned_runs = select(EvolutionRun.id).where(EvolutionRun.owner_id == viewer.id)
    return or_(public, Match.evolution_run_id.in_(owned_runs))


def get_visible_match(session: Session, viewer: User | None, match_id: uuid.UUID) -> Match | None:
    """The match if it exists and `viewer` may see it (`visible_to`); None for both other cases."""
    return session.scalar(select(Match).where(Match.id == match_id, visible_to(viewer)))


def _pinned_versions(
    session: Session, bot_ids: Sequence[uuid.UUID], version_ids: Sequence[uuid.UUID | None] | None
) -> list[uuid.UUID | None]:
    """The version to pin per slot (None: current); each pinned version must belong to its bot."""
    if version_ids is None:
        return [None] * len(bot_ids)
    if len(version_ids) != len(bot_ids):
        raise MatchRequestError(f"got {len(version_ids)} version ids for {len(bot_ids)} bots")
    wanted = [v for v in version_ids if v is not None]
    rows = session.execute(select(BotVersion.id, BotVersion.bot_id).where(BotVersion.id.in_(wanted)))
    owners = {version_id: bot_id for version_id, bot_id in rows}
    for bot_id, version_id in zip(bot_ids, version_ids, strict=True):
        if version_id is not None and owners.get(version_id) != bot_id:
            raise MatchRequestError(f"version {version_id} is not a version of bot {bot_id}", 404)
    return list(version_ids)


def enqueue_match(match_id: uuid.UUID) -> None:
    """Send the match to the `matches` queue. Call after the match row is committed."""
    send_task(TASK_PLAY_MATCH, QUEUE_MATCHES, args=[str(match_id)])
