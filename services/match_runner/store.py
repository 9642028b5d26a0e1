"""The match runner's database work: claiming a match, heartbeats, and finishing exactly once.

Ownership of a match is (status "running", attempts = N): claiming increments `attempts`, and
every later write checks that the attempt number is still ours. A worker that was presumed dead and
comes back can therefore never overwrite the result of the attempt that replaced it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session, selectinload

from shared import ratings
from shared.db.models import Bot, BotVersion, Match, MatchParticipant, Replay
from shared.db.session import get_engine, session_scope
from shared.games.replay import compress
from shared.jsonsafe import safe_number, safe_text, storable
from shared.play.turns import PlayedMatch
from shared.replay_store import ReplayStore, discard, replay_key, replay_store
from shared.states import BotKind, HostedContract, MatchKind, MatchStatus

MAX_MATCH_ERROR_CHARS = 2000
MAX_SAMPLE_CHARS = 500
"""Error samples are a bot owner's debugging aid: a few short texts, never a bot's whole answer."""
MAX_SAMPLES = 12
MAX_METRICS = 64
MAX_METRIC_KEY_CHARS = 64
END_REASON_CHARS = 32
"""The width of matches.end_reason."""

_STATES = {state.value: state.value for state in MatchStatus}
"""Raw SQL below names states as bound parameters (:queued, :running, ...), never as literals."""

_CLAIM = text(
    """
    UPDATE matches
       SET status = :running, attempts = attempts + 1, worker = :worker,
           heartbeat_at = now(), started_at = now(), error = NULL
     WHERE id = :id
       AND (status = :queued
            OR (status = :running AND (heartbeat_at IS NULL
                                        OR heartbeat_at < now() - make_interval(secs => :stale))))
    RETURNING attempts
    """
)


def claim_match(match_id: uuid.UUID, worker: str, stale_after_s: float) -> int | None:
    """Atomically take a queued (or abandoned) match; our attempt number, or None if not ours to play.

    None covers every redelivery case: the match is finished, failed, cancelled, unknown, or
    running with a fresh heartbeat on another worker.
    """
    with get_engine().begin() as conn:
        row = conn.execute(
            _CLAIM, {"id": match_id, "worker": worker, "stale": stale_after_s, **_STATES}
        ).first()
    return int(row[0]) if row else None


def heartbeat(match_id: uuid.UUID, attempt: int) -> bool:
    """Mark the match alive; False when it is no longer ours (requeued by the reaper, cancelled)."""
    with get_engine().begin() as conn:
        result = conn.execute(
            update(Match)
            .where(Match.id == match_id, Match.status == MatchStatus.RUNNING, Match.attempts == attempt)
            .values(heartbeat_at=func.now())
        )
    return result.rowcount == 1


def fail_match(match_id: uuid.UUID, attempt: int | None, error: str) -> bool:
    """Mark a match failed (not rated). With an attempt number, only if that attempt still owns it."""
    with get_engine().begin() as conn:
        stmt = update(Match).where(Match.id == match_id)
        if attempt is not None:
            stmt = stmt.where(Match.status == MatchStatus.RUNNING, Match.attempts == attempt)
        result = conn.execute(
            stmt.values(
                status=MatchStatus.FAILED,
                error=safe_text(error, MAX_MATCH_ERROR_CHARS),
                finished_at=datetime.now(UTC),
                worker=None,
            )
        )
    return result.rowcount == 1


@dataclass(frozen=True, slots=True)
class Seat:
    """One participant as the runner needs it: how to reach the bot and with which secret."""

    slot: int
    bot_id: uuid.UUID
    bot_name: str
    kind: BotKind
    endpoint: str | None
    secret_encrypted: bytes
    source: str | None = None
    contract: HostedContract | None = None
    previous_secret_encrypted: bytes | None = None
    secret_rotated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class MatchPlan:
    id: uuid.UUID
    game: str
    seed: int
    config: dict[str, Any]
    rated: bool
    kind: MatchKind
    seats: list[Seat] = field(default_factory=list)


def load_plan(match_id: uuid.UUID) -> MatchPlan:
    """Everything needed to play the match, read once; the version is the one pinned at creation."""
    with session_scope() as session:
        match = session.scalars(
            select(Match)
            .where(Match.id == match_id)
            .options(selectinload(Match.participants).selectinload(MatchParticipant.bot))
        ).one()
        seats = []
        for participant in match.participants:
            bot: Bot = participant.bot
            version_id = participant.bot_version_id or bot.current_version_id
            version = session.get(BotVersion, version_id) if version_id else None
            seats.append(
                Seat(
                    slot=participant.slot,
                    bot_id=bot.id,
                    bot_name=bot.name,
                    kind=bot.kind,
                    endpoint=bot.endpoint,
                    secret_encrypted=bot.secret_encrypted,
                    source=version.source if version else None,
                    contract=version.contract if version else None,
                    previous_secret_encrypted=bot.previous_secret_encrypted,
                    secret_rotated_at=bot.secret_rotated_at,
                )
            )
        return MatchPlan(
            id=match.id,
            game=match.game,
            seed=match.seed,
            config=dict(match.config or {}),
            rated=match.rated,
            kind=match.kind,
            seats=seats,
        )


def _lock_if_ours(session: Session, match_id: uuid.UUID, attempt: int) -> Match | None:
    match = session.scalars(select(Match).where(Match.id == match_id).with_for_update()).one_or_none()
    if match is None or match.status != MatchStatus.RUNNING or match.attempts != attempt:
        return None
    return match


@dataclass(frozen=True, slots=True)
class StorableParticipant:
    """One player's figures, made safe to store: what finish_match writes to its participant row."""

    rank: int
    score: float | None
    metrics: dict[str, Any]
    error_samples: list[Any]
    errors: int
    timeouts: int
    forfeited: bool
    latency_p50_ms: float | None
    latency_p99_ms: float | None


@dataclass(frozen=True, slots=True)
class StorableMatch:
    """Everything finish_match writes, after `storable_result`: no NUL, no lone surrogate, no NaN."""

    participants: dict[int, StorableParticipant]
    replay_blob: bytes
    replay_frames: int
    end_reason: str


def _number(value: float | None) -> float | None:
    return None if value is None else safe_number(float(value))


def storable_result(played: PlayedMatch) -> StorableMatch:
    """The played match as the database will accept it, whatever the bots sent.

    The one place where bot-controlled data (error texts, metrics, scores, replay actions and
    frames, the end reason) is made safe: PostgreSQL refuses NUL and lone surrogates in text and
    JSONB and NaN/Infinity in JSONB; a refused insert would leave the match running for the reaper.
    """
    participants = {}
    for outcome in played.result.players:
        stats = played.stats[outcome.player]
        samples: list[Any] = list(stats.error_samples)
        if stats.forfeit_reason:
            samples.append({"turn": None, "error": stats.forfeit_reason})
        participants[outcome.player] = StorableParticipant(
            rank=outcome.rank,
            score=_number(outcome.score),
            metrics=storable(dict(outcome.metrics), max_chars=MAX_METRIC_KEY_CHARS, max_items=MAX_METRICS),
            error_samples=storable(samples, max_chars=MAX_SAMPLE_CHARS, max_items=MAX_SAMPLES, max_depth=3),
            errors=stats.errors,
            timeouts=stats.timeouts,
            forfeited=stats.forfeited,
            latency_p50_ms=_number(stats.latency_p50_ms),
            latency_p99_ms=_number(stats.latency_p99_ms),
        )
    blob = compress(played.replay)
    return StorableMatch(
        participants=participants,
        replay_blob=blob,
        replay_frames=len(played.replay["frames"]),
        end_reason=safe_text(played.end_reason, END_REASON_CHARS),
    )


@dataclass(frozen=True, slots=True)
class FinishedSeat:
    slot: int
    bot_id: uuid.UUID
    rank: int
    score: float | None
    rating: ratings.RatingChange | None
    """None when the match was not rated."""


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """What finish_match committed, for reporting it afterwards (live events) without a re-read."""

    rated: bool
    turns: int
    end_reason: str
    error: str | None
    seats: list[FinishedSeat]
    """In slot order."""


def finish_match(
    match_id: uuid.UUID,
    attempt: int,
    played: PlayedMatch,
    unrated_reason: str | None = None,
    replays: ReplayStore | None = None,
) -> FinishedMatch | None:
    """Write the result, ratings, replay index and status in ONE transaction; None if no longer ours.

    The match row is locked first and checked to be running with our attempt number, so two
    attempts can never both finish (and rate) the same match. What is written is made safe first
    (storable_result), so a bot cannot make the insert fail and leave the match running.

    The replay's bytes go to the replay store BEFORE that transaction, under a key of this match and
    attempt: a crash in between leaves an orphan object, never a result whose replay is missing, and
    no other attempt can overwrite it. A store that cannot be written raises ReplayStoreError with
    nothing committed (the match stays running for the reaper to hand out again).

    Orphans: the object of an attempt that turns out not to own the match is deleted at once. One
    whose commit failed (the database went away) cannot be: the commit may have happened after all.
    The attempt that finishes the match later deletes the objects of every attempt before it (none
    of them can commit any more: the match was ours, running, under our lock), and the periodic
    sweep (shared/replay_store/sweep.py) whatever is left, such as those of a match that failed.
    """
    safe = storable_result(played)
    now = datetime.now(UTC)
    replays = replays or replay_store()
    key = replay_key(match_id, attempt)
    replays.put(key, safe.replay_blob)
    finished = _commit_result(match_id, attempt, played, unrated_reason, safe, replays, key, now)
    if finished is None:
        discard(replays, key)  # not ours after all: nothing will ever point at this object
        return None
    for earlier in range(1, attempt):
        discard(replays, replay_key(match_id, earlier))
    return finished


def _commit_result(
    match_id: uuid.UUID,
    attempt: int,
    played: PlayedMatch,
    unrated_reason: str | None,
    safe: StorableMatch,
    replays: ReplayStore,
    key: str,
    now: datetime,
) -> FinishedMatch | None:
    with session_scope() as session:
        match = _lock_if_ours(session, match_id, attempt)
        if match is None:
            return None
        participants: list[MatchParticipant] = list(
            session.scalars(
                select(MatchParticipant)
                .where(MatchParticipant.match_id == match_id)
                .order_by(MatchParticipant.slot)
            )
        )
        by_player = safe.participants
        for participant in participants:
            outcome = by_player[participant.slot]
            participant.rank = outcome.rank
            participant.score = outcome.score
            participant.metrics = outcome.metrics
            participant.errors = outcome.errors
            participant.timeouts = outcome.timeouts
            participant.forfeited = outcome.forfeited
            participant.latency_p50_ms = outcome.latency_p50_ms
            participant.latency_p99_ms = outcome.latency_p99_ms
            participant.error_samples = outcome.error_samples
        if unrated_reason is not None:
            match.rated = False  # a bot failed its pre-match check: see play.py
        changes: list[ratings.RatingChange | None] = [None] * len(participants)
        if match.rated:
            applied = ratings.apply_match_result(
                session,
                match.game,
                [p.bot_id for p in participants],
                [by_player[p.slot].rank for p in participants],
            )
            changes = list(applied)
            for participant, change in zip(participants, applied, strict=True):
                participant.mu_before, participant.sigma_before = change.before.mu, change.before.sigma
                participant.mu_after, participant.sigma_after = change.after.mu, change.after.sigma
        session.merge(
            Replay(
                match_id=match_id,
                storage=replays.kind,
                key=key,
                data=None,
                size_bytes=len(safe.replay_blob),
                frames=safe.replay_frames,
            )
        )
        session.execute(
            update(Bot).where(Bot.id.in_([p.bot_id for p in participants])).values(last_match_at=now)
        )
        match.status = MatchStatus.FINISHED
        match.finished_at = now
        match.heartbeat_at = now
        match.turns = played.turns
        match.end_reason = safe.end_reason
        match.error = unrated_reason
        finished = FinishedMatch(
            rated=match.rated,
            turns=played.turns,
            end_reason=safe.end_reason,
            error=unrated_reason,
            seats=[
                FinishedSeat(p.slot, p.bot_id, by_player[p.slot].rank, by_player[p.slot].score, change)
                for p, change in zip(participants, changes, strict=True)
            ],
        )
    return finished


_REQUEUE = text(
    """
    UPDATE matches SET status = :queued, worker = NULL, sent_at = now()
     WHERE status = :running AND attempts < :max_attempts
       AND (heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => :stale))
    RETURNING id
    """
)
_GIVE_UP = text(
    """
    UPDATE matches
       SET status = :failed, worker = NULL, finished_at = now(),
           error = 'abandoned: its worker stopped ' || attempts || ' times (heartbeat lost)'
     WHERE status = :running AND attempts >= :max_attempts
       AND (heartbeat_at IS NULL OR heartbeat_at < now() - make_interval(secs => :stale))
    RETURNING id, error
    """
)
_RESEND = text(
    """
    UPDATE matches SET sent_at = now()
     WHERE status = :queued AND sent_at < now() - make_interval(secs => :lost)
    RETURNING id
    """
)
"""Moving `sent_at` forward in the same statement that picks the rows is what makes a resend happen
once per `lost_after_s`: a concurrent reaper blocks on the row lock, then sees the new `sent_at`."""


_QUEUED_BEFORE = text(
    """
    SELECT id FROM matches
     WHERE status = :queued AND sent_at < now() - make_interval(secs => :grace)
    """
)
_MARK_RESENT = text(
    """
    UPDATE matches SET sent_at = now()
     WHERE id = ANY(:ids) AND status = :queued AND sent_at < now() - make_interval(secs => :grace)
    RETURNING id
    """
)
"""Only a match still queued and not sent again meanwhile (by the reaper, another check, a requeue)
is picked, and its `sent_at` moves forward in the same statement: one resend per grace period."""


def queued_before(grace_s: float) -> list[uuid.UUID]:
    """Queued matches whose play message was sent more than `grace_s` ago."""
    with get_engine().begin() as conn:
        return [row[0] for row in conn.execute(_QUEUED_BEFORE, {"grace": grace_s, **_STATES})]


def mark_resent(match_ids: list[uuid.UUID], grace_s: float) -> list[uuid.UUID]:
    """Of `match_ids`, those still queued and last sent more than `grace_s` ago, now marked sent:
    the caller sends them (after this commit)."""
    if not match_ids:
        return []
    with get_engine().begin() as conn:
        rows = conn.execute(_MARK_RESENT, {"ids": match_ids, "grace": grace_s, **_STATES})
        return [row[0] for row in rows]


@dataclass(frozen=True, slots=True)
class ReapedMatches:
    """What one reaper round changed; the caller sends and announces after the commit."""

    requeued: list[uuid.UUID] = field(default_factory=list)
    """Running matches whose worker stopped heartbeating: queued again, to send again."""
    failed: list[tuple[uuid.UUID, str]] = field(default_factory=list)
    """The same, out of attempts: failed, with the stored error (to announce)."""
    resent: list[uuid.UUID] = field(default_factory=list)
    """Queued matches whose message was sent longer than `lost_after_s` ago: to send again."""

    def to_send(self) -> list[uuid.UUID]:
        return [*self.requeued, *self.resent]


def reap_stale(stale_after_s: float, max_attempts: int, lost_after_s: float) -> ReapedMatches:
    """Requeue running matches whose worker stopped heartbeating (fail those out of attempts), and
    pick the queued matches whose play message seems lost: sent longer than `lost_after_s` ago.

    A requeued match counts as sent now, so it is never resent in the same round. Resending a
    message that was not lost after all is harmless: the claim turns the duplicate into a no-op.
    """
    params = {"stale": stale_after_s, "max_attempts": max_attempts, "lost": lost_after_s, **_STATES}
    with get_engine().begin() as conn:
        failed = [(row[0], str(row[1])) for row in conn.execute(_GIVE_UP, params)]
        requeued = [row[0] for row in conn.execute(_REQUEUE, params)]
        resent = [row[0] for row in conn.execute(_RESEND, params)]
    return ReapedMatches(requeued=requeued, failed=failed, resent=resent)
