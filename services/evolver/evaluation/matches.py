"""Playing a candidate program's evaluation matches: here (LocalExecutor) or on the `matches`
queue by any number of match-runner workers (QueueExecutor).

Generated code only ever runs in the hosted-bot sandbox (shared.sandbox.start_bot: no network,
an empty environment, frozen between turns), reached over its Unix socket with the platform's
signed client, exactly as the match runner plays hosted bots. Built-in bots are the platform's own
code and run in this process. The turn loop is the platform's (shared.play.turns.play_match): the
same timeouts, default actions and forfeits as a ladder match, and the same turn metrics
(`arena_runner_*{job="evolver"}`, shared.play.prometheus).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from sqlalchemy import select, update
from sqlalchemy.orm import Session, selectinload

from services.evolver.evaluation.records import (
    BOT_PREFIX,
    BUILTIN_PREFIX,
    FILE_PREFIX,
    MatchRecord,
    MatchSpec,
    Outcome,
    outcome_of,
)
from shared.botclient import BotEndpointError, HttpBotConnection
from shared.botclient.inprocess import InProcessBot
from shared.config import Settings
from shared.db.models import Bot, Match, Rating
from shared.games.base import JSON, Decide, Game, MatchResult, StepResult
from shared.games.base import Match as GameMatch
from shared.games.registry import get_game
from shared.play.local_seats import last_line
from shared.play.prometheus import PrometheusTurnMetrics
from shared.play.turns import PlayedMatch, TurnClient, UnreachableBot, play_match
from shared.protocol.signing import generate_secret
from shared.sandbox import SandboxError, SandboxLimits, start_bot
from shared.sandbox.turns import FrozenBetweenTurns
from shared.sandbox.uids import SandboxUids
from shared.states import BotStatus, HostedContract, MatchKind, MatchStatus

__all__ = [
    "LocalExecutor",
    "MatchRecord",
    "MatchSpec",
    "Outcome",
    "QueueExecutor",
    "fleet_opponents",
    "game_seconds",
]

log = logging.getLogger(__name__)

MAX_SAMPLES = 8
MAX_SAMPLE_CHARS = 300
Closer = Callable[[], Awaitable[Any]]


def game_seconds(game: str, config: Mapping[str, Any], turns: int) -> float | None:
    """Game time of `turns` decision turns, for games with a clock (battle); None otherwise."""
    try:
        parsed = get_game(game).parse_config(dict(config))
    except Exception:
        return None
    ticks, hz = getattr(parsed, "ticks_per_turn", None), getattr(parsed, "physics_hz", None)
    if not isinstance(ticks, int) or not isinstance(hz, int) or hz <= 0:
        return None
    return turns * ticks / hz


def _samples(raw: Sequence[Any], extra: Sequence[str] = ()) -> list[str]:
    """Error samples ({"turn", "error"} dicts or texts) as short lines, at most MAX_SAMPLES."""
    lines = []
    for item in [*raw, *extra]:
        if isinstance(item, dict):
            turn, error = item.get("turn"), item.get("error")
            text = f"turn {turn}: {error}" if turn is not None else str(error)
        else:
            text = str(item)
        lines.append(text[:MAX_SAMPLE_CHARS])
    return lines[:MAX_SAMPLES]


def _failed(spec: MatchSpec, reason: str, match_id: str | None = None) -> MatchRecord:
    return MatchRecord(
        opponent=spec.opponent,
        seat=spec.candidate_seat,
        seed=spec.seed,
        outcome=Outcome.LOSS,
        errors=1,
        failure=reason[:MAX_SAMPLE_CHARS],
        match_id=match_id,
    )


# ----------------------------------------------------------------------------- local play


class _Seat:
    """An opened player: its client, what went wrong before the first turn, and what to close."""

    def __init__(self) -> None:
        self.client: TurnClient = UnreachableBot("not opened")
        self.problem: str | None = None
        self.closers: list[Closer] = []

    async def close(self) -> None:
        for close in reversed(self.closers):
            with contextlib.suppress(Exception):
                await close()


async def _open_hosted(
    source: str, game: str, settings: Settings, limits: SandboxLimits | None, seat: _Seat
) -> None:
    """Start `source` in a sandbox and connect to it; a bot that does not start or answer its
    health check still takes its seat (it fails its turns and forfeits) with `seat.problem` set."""
    secret = generate_secret()
    try:
        sandbox = await asyncio.to_thread(
            start_bot,
            source,
            secret=secret,
            contract=HostedContract.DECIDE,
            game=game,
            limits=limits,
            backend=settings.sandbox_backend,
            dev_mode=settings.dev_mode,
            uids=SandboxUids.from_settings(settings),
        )
    except SandboxError as exc:
        raise RuntimeError(f"cannot start a sandbox: {exc}") from None
    seat.closers.append(lambda: asyncio.to_thread(sandbox.close))
    if sandbox.start_error:
        output = sandbox.log_tail()
        detail = last_line(output) if output else sandbox.start_error
        seat.problem = f"the bot did not start: {detail}"[:MAX_SAMPLE_CHARS]
        seat.client = UnreachableBot(seat.problem)
        return
    http = HttpBotConnection.over_unix_socket(sandbox.socket_path, secret, settings)
    connection = FrozenBetweenTurns(http, sandbox)
    seat.closers.append(connection.aclose)
    seat.client = connection
    try:
        await connection.health(settings.health_timeout_s)
    except BotEndpointError as exc:
        seat.problem = f"health check failed: {exc.message}"[:MAX_SAMPLE_CHARS]


class _OpponentUnavailable(Exception):
    """The opponent (not the candidate) could not be opened: the match says nothing of the candidate."""


async def _open_opponent(
    key: str, game: Game, settings: Settings, limits: SandboxLimits | None, seat: _Seat
) -> None:
    if key.startswith(BUILTIN_PREFIX):
        name = key.removeprefix(BUILTIN_PREFIX)
        bots = game.builtin_bots()
        if name not in bots:
            raise _OpponentUnavailable(f"{game.name} has no built-in bot {name!r}")
        seat.client = InProcessBot(bots[name])
        return
    if key.startswith(FILE_PREFIX):
        path = Path(key.removeprefix(FILE_PREFIX))
        try:
            source = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _OpponentUnavailable(f"cannot read {path}: {exc}") from None
        await _open_hosted(source, game.name, settings, limits, seat)
        if seat.problem:
            raise _OpponentUnavailable(f"opponent {path.name}: {seat.problem}")
        return
    raise _OpponentUnavailable(f"opponent {key!r} cannot be played locally (use builtin: or file:)")


class _CappedMatch(GameMatch):
    """A match that ends after `max_turns` turns (the smoke run), counting the turns on which the
    candidate's action was answered and read without an invalid part."""

    game_name: ClassVar[str] = "capped"

    def __init__(self, inner: GameMatch, max_turns: int, seat: int) -> None:
        super().__init__(inner.seed, inner.num_players)
        self.inner = inner
        self.max_turns = max_turns
        self.seat = seat
        self.valid_turns = 0

    def observation(self, player: int) -> dict[str, JSON]:
        return self.inner.observation(player)

    def check_action(self, player: int, action: JSON | None) -> Sequence[str]:
        return self.inner.check_action(player, action)

    def _invalid(self) -> float:
        value = self.inner.result().players[self.seat].metrics.get("invalid_actions", 0.0)
        return float(value)

    def step(self, actions: Sequence[JSON | None]) -> StepResult:
        before = self._invalid()
        step = self.inner.step(actions)
        self.turn = self.inner.turn
        if actions[self.seat] is not None and self._invalid() == before:
            self.valid_turns += 1
        return step

    @property
    def finished(self) -> bool:
        return self.inner.finished or self.inner.turn >= self.max_turns

    def result(self) -> MatchResult:
        return self.inner.result()

    def frame(self) -> dict[str, JSON]:
        return self.inner.frame()

    def forfeit(self, player: int) -> None:
        self.inner.forfeit(player)


def _capped_game(inner: Game, max_turns: int, seat: int) -> tuple[Game, list[_CappedMatch]]:
    """`inner` whose matches stop after `max_turns` turns; the list receives the match created."""
    created: list[_CappedMatch] = []

    class CappedGame(Game):
        name = inner.name
        title = inner.title
        min_players = inner.min_players
        max_players = inner.max_players
        config_model = inner.config_model

        def create_match(
            self, seed: int, config: dict[str, JSON] | None = None, num_players: int = 2
        ) -> GameMatch:
            match = _CappedMatch(inner.create_match(seed, config, num_players), max_turns, seat)
            created.append(match)
            return match

        def observation_schema(self) -> dict[str, JSON]:
            return inner.observation_schema()

        def action_schema(self) -> dict[str, JSON]:
            return inner.action_schema()

        def builtin_bots(self) -> dict[str, Decide]:
            return inner.builtin_bots()

    return CappedGame(), created


def _record(
    game: str, spec: MatchSpec, played: PlayedMatch, notes: Sequence[str], match_id: str | None = None
) -> MatchRecord:
    seat = spec.candidate_seat
    players = played.result.players
    ranks = [p.rank for p in players]
    stats = played.stats[seat]
    extra = [stats.forfeit_reason] if stats.forfeit_reason else []
    return MatchRecord(
        opponent=spec.opponent,
        seat=seat,
        seed=spec.seed,
        outcome=outcome_of(ranks, seat),
        candidate_metrics={k: float(v) for k, v in players[seat].metrics.items()},
        opponent_metrics={k: float(v) for p in players if p.player != seat for k, v in p.metrics.items()},
        turns=played.turns,
        errors=stats.errors,
        timeouts=stats.timeouts,
        forfeited=stats.forfeited,
        error_samples=_samples([*notes, *stats.error_samples], extra),
        latency_p50_ms=stats.latency_p50_ms,
        latency_p99_ms=stats.latency_p99_ms,
        match_id=match_id,
        end_reason=played.end_reason,
        game_seconds=game_seconds(game, spec.config, played.turns),
    )


async def _play_one(
    game_name: str,
    source: str,
    spec: MatchSpec,
    settings: Settings,
    limits: SandboxLimits | None,
    deadline_s: float,
    max_turns: int | None = None,
) -> MatchRecord:
    """One local match; every sandbox it started is closed before it returns, whatever happens."""
    game = get_game(game_name)
    if spec.candidate_seat not in range(game.min_players):
        return _failed(spec, f"seat {spec.candidate_seat} does not exist in {game_name}")
    candidate, opponent = _Seat(), _Seat()
    match_id = f"eval-{uuid.uuid4().hex[:12]}"
    try:
        opened = await asyncio.gather(
            _open_hosted(source, game_name, settings, limits, candidate),
            _open_opponent(spec.opponent, game, settings, limits, opponent),
            return_exceptions=True,
        )
        for outcome in opened:
            if isinstance(outcome, _OpponentUnavailable):
                return _failed(spec, str(outcome))
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    raise outcome
                log.warning("cannot open an evaluation match", exc_info=outcome)
                return _failed(spec, f"cannot open the match: {type(outcome).__name__}: {outcome}")
        clients: list[TurnClient] = [opponent.client, opponent.client]
        clients[spec.candidate_seat] = candidate.client
        capped: list[_CappedMatch] = []
        played_game = game
        if max_turns is not None:
            played_game, capped = _capped_game(game, max_turns, spec.candidate_seat)
        played = await play_match(
            played_game,
            match_id=match_id,
            seed=spec.seed,
            config=dict(spec.config),
            clients=clients,
            settings=settings,
            deadline=time.monotonic() + deadline_s,
            metrics=PrometheusTurnMetrics,
        )
    except Exception as exc:
        log.exception("evaluation match failed")
        return _failed(spec, f"the match could not be played: {type(exc).__name__}: {exc}")
    finally:
        await candidate.close()
        await opponent.close()
    notes = [f"before the match: {candidate.problem}"] if candidate.problem else []
    record = _record(game_name, spec, played, notes)
    if capped:
        record.valid_turns = capped[0].valid_turns
    return record


class LocalExecutor:
    """Plays evaluation matches on this machine: the candidate in a sandbox, built-in opponents in
    process, local bot files in sandboxes of their own.

    With `jobs` > 1, up to `jobs` matches are played at once on one event loop: while one match
    waits for its sandboxed bot, another steps its engine. Sandboxed bots already run in processes
    of their own; a pool of worker processes for the engines was measured slower on a 2-core
    machine shared with other work (12 default battle matches against the built-ins: one at a time
    8.8 s, two at once on one loop 7.7 s, two worker processes 8.4 s warm and 12.2 s with their
    start-up), and cannot be started from a daemonic worker process anyway. Each match's
    sandboxes are closed when it ends, whatever happens.
    """

    def __init__(
        self,
        game: str,
        settings: Settings,
        *,
        jobs: int = 1,
        limits: SandboxLimits | None = None,
        match_deadline_s: float = 300.0,
    ) -> None:
        get_game(game)  # an unknown game fails here, not in the middle of an evaluation
        self.game = game
        self.settings = settings
        self.jobs = max(1, jobs)
        self.limits = limits
        self.match_deadline_s = match_deadline_s

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing is held between calls (every match closes its own sandboxes)."""

    async def _play_all(
        self,
        source: str,
        specs: Sequence[MatchSpec],
        settings: Settings,
        deadline_s: float,
        max_turns: int | None,
        jobs: int | None = None,
    ) -> list[MatchRecord]:
        slots = asyncio.Semaphore(max(1, jobs or self.jobs))

        async def one(spec: MatchSpec) -> MatchRecord:
            async with slots:
                return await _play_one(self.game, source, spec, settings, self.limits, deadline_s, max_turns)

        done = await asyncio.gather(*(one(spec) for spec in specs), return_exceptions=True)
        records = []
        for spec, outcome in zip(specs, done, strict=True):
            if isinstance(outcome, MatchRecord):
                records.append(outcome)
            elif isinstance(outcome, Exception):
                records.append(_failed(spec, f"the match could not be played: {type(outcome).__name__}"))
            else:
                raise outcome
        return records

    def play(
        self,
        candidate_source: str,
        specs: Sequence[MatchSpec],
        *,
        settings: Settings | None = None,
        deadline_s: float | None = None,
        jobs: int | None = None,
    ) -> list[MatchRecord]:
        """One record per spec, in spec order; a match that cannot be played is a failed record.
        `settings`, `deadline_s` and `jobs` replace the executor's for this call."""
        run = self._play_all(
            candidate_source,
            specs,
            settings or self.settings,
            deadline_s or self.match_deadline_s,
            None,
            jobs,
        )
        return asyncio.run(run)

    def smoke(
        self,
        candidate_source: str,
        spec: MatchSpec,
        turns: int,
        *,
        settings: Settings | None = None,
        deadline_s: float | None = None,
    ) -> MatchRecord:
        """The first `turns` turns of one match; `valid_turns` is set."""
        run = self._play_all(
            candidate_source, [spec], settings or self.settings, deadline_s or self.match_deadline_s, turns
        )
        return asyncio.run(run)[0]


# ----------------------------------------------------------------------------- the queue


def _status(value: MatchStatus | str) -> MatchStatus:
    return value if isinstance(value, MatchStatus) else MatchStatus(value)


class QueueExecutor:
    """Plays a candidate's matches on the `matches` queue, shared by every match-runner worker.

    The candidate is a (normally inactive) bot whose version is pinned in every match; matches
    are EVALUATION matches, never rated. Runs are resumable: `existing` maps spec keys to matches
    created by an earlier call for the same candidate, which are reused (and sent again if still
    queued; a duplicate message is a no-op for the runner), never created twice.
    """

    def __init__(
        self,
        session_factory: Callable[[], Session],
        *,
        game: str,
        candidate_bot_id: uuid.UUID,
        candidate_version_id: uuid.UUID,
        run_id: uuid.UUID | None = None,
        poll_interval_s: float = 0.5,
        deadline_s: float = 900.0,
        enqueue: Callable[[uuid.UUID], None] | None = None,
    ) -> None:
        """`enqueue` sends a committed match to the workers (default: shared.matches.enqueue_match);
        `run_id` is the evolution run the matches belong to and whose privacy they share (None:
        the run whose candidate bot is seated)."""
        self.session_factory = session_factory
        self.run_id = run_id
        self.game = game
        self.candidate_bot_id = candidate_bot_id
        self.candidate_version_id = candidate_version_id
        self.poll_interval_s = poll_interval_s
        self.deadline_s = deadline_s
        self.enqueue = enqueue

    def play(
        self,
        specs: Sequence[MatchSpec],
        *,
        existing: Mapping[str, uuid.UUID] | None = None,
        on_created: Callable[[dict[str, uuid.UUID]], None] | None = None,
    ) -> list[MatchRecord]:
        """Create the matches not in `existing`, commit, tell `on_created` the full key -> match id
        mapping (to persist it before anything is queued), queue them, wait until every match is
        final or the deadline passes, and return one record per spec (in spec order)."""
        failures: dict[str, MatchRecord] = {}
        mapping, to_send = self._create(specs, dict(existing or {}), failures)
        if on_created is not None:
            on_created(dict(mapping))
        if self.enqueue is None:
            from shared.matches import enqueue_match  # the broker's app is built on first import

            self.enqueue = enqueue_match
        for match_id in to_send:
            self.enqueue(match_id)
        ids = [mapping[spec.key] for spec in specs if spec.key in mapping]
        timed_out = self._wait(ids)
        matches = self._load(ids)
        records = []
        for spec in specs:
            if spec.key in failures:
                records.append(failures[spec.key])
                continue
            match = matches.get(mapping[spec.key])
            records.append(self._convert(spec, match, mapping[spec.key], timed_out))
        return records

    def _create(
        self, specs: Sequence[MatchSpec], mapping: dict[str, uuid.UUID], failures: dict[str, MatchRecord]
    ) -> tuple[dict[str, uuid.UUID], list[uuid.UUID]]:
        """New matches for specs without one; the mapping, and the ids to (re)send."""
        from shared.matches import MatchRequestError

        to_send: list[uuid.UUID] = []
        with self.session_factory() as session:
            known = {
                row.id: _status(row.status)
                for row in session.execute(
                    select(Match.id, Match.status).where(Match.id.in_(list(mapping.values())))
                )
            }
            for spec in specs:
                match_id = mapping.get(spec.key)
                if match_id is not None and match_id in known:
                    if known[match_id] == MatchStatus.QUEUED:
                        to_send.append(match_id)
                    continue
                mapping.pop(spec.key, None)
                try:
                    match = self._new_match(session, spec)
                except MatchRequestError as exc:
                    failures[spec.key] = _failed(spec, f"cannot create the match: {exc}")
                    continue
                mapping[spec.key] = match.id
                to_send.append(match.id)
            session.commit()
        return mapping, to_send

    def _new_match(self, session: Session, spec: MatchSpec) -> Match:
        from shared.matches import MatchRequestError, create_match

        if not spec.opponent.startswith(BOT_PREFIX):
            raise MatchRequestError(f"opponent {spec.opponent!r} is not a bot of the fleet (bot:<id>)")
        try:
            opponent = uuid.UUID(spec.opponent.removeprefix(BOT_PREFIX))
        except ValueError:
            raise MatchRequestError(f"opponent {spec.opponent!r} is not a bot id") from None
        if spec.candidate_seat not in (0, 1):
            raise MatchRequestError(f"seat {spec.candidate_seat} does not exist")
        bot_ids = [opponent, opponent]
        versions: list[uuid.UUID | None] = [None, None]
        bot_ids[spec.candidate_seat] = self.candidate_bot_id
        versions[spec.candidate_seat] = self.candidate_version_id
        return create_match(
            session,
            game=self.game,
            bot_ids=bot_ids,
            kind=MatchKind.EVALUATION,
            rated=False,
            seed=spec.seed,
            config=dict(spec.config),
            version_ids=versions,
            evolution_run_id=self.run_id,
        )

    def _wait(self, ids: Sequence[uuid.UUID]) -> bool:
        """Poll until every match is final; True if the deadline came first (queued ones are then
        cancelled, so no worker spends time on them; running ones finish on their own)."""
        deadline = time.monotonic() + self.deadline_s
        pending = set(ids)
        while pending:
            with self.session_factory() as session:
                rows = session.execute(select(Match.id, Match.status).where(Match.id.in_(list(pending))))
                pending = {row.id for row in rows if not _status(row.status).is_final}
            if not pending:
                return False
            if time.monotonic() >= deadline:
                with self.session_factory() as session:
                    session.execute(
                        update(Match)
                        .where(Match.id.in_(list(pending)), Match.status == MatchStatus.QUEUED)
                        .values(status=MatchStatus.CANCELLED, error="evaluation deadline passed")
                    )
                    session.commit()
                return True
            time.sleep(self.poll_interval_s)
        return False

    def _load(self, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
        """The matches as plain data (read in one session, used after it closes)."""
        out: dict[uuid.UUID, dict[str, Any]] = {}
        with self.session_factory() as session:
            rows = session.scalars(
                select(Match).where(Match.id.in_(list(ids))).options(selectinload(Match.participants))
            )
            for match in rows:
                out[match.id] = {
                    "status": _status(match.status),
                    "error": match.error,
                    "turns": match.turns or 0,
                    "end_reason": match.end_reason,
                    "config": dict(match.config or {}),
                    "participants": [
                        {
                            "slot": p.slot,
                            "bot_id": p.bot_id,
                            "rank": p.rank,
                            "metrics": dict(p.metrics or {}),
                            "errors": p.errors,
                            "timeouts": p.timeouts,
                            "forfeited": p.forfeited,
                            "latency_p50_ms": p.latency_p50_ms,
                            "latency_p99_ms": p.latency_p99_ms,
                            "error_samples": list(p.error_samples or []),
                        }
                        for p in match.participants
                    ],
                }
        return out

    def _convert(
        self, spec: MatchSpec, match: dict[str, Any] | None, match_id: uuid.UUID, timed_out: bool
    ) -> MatchRecord:
        if match is None:
            return _failed(spec, "the match disappeared", str(match_id))
        status = match["status"]
        if status != MatchStatus.FINISHED:
            if not status.is_final and timed_out:
                reason = f"not finished within {self.deadline_s:.0f} s (still {status})"
            else:
                reason = f"match {status}" + (f": {match['error']}" if match["error"] else "")
            return _failed(spec, reason, str(match_id))
        participants = sorted(match["participants"], key=lambda p: p["slot"])
        if any(p["rank"] is None for p in participants) or spec.candidate_seat >= len(participants):
            return _failed(spec, "the match has no result", str(match_id))
        seat = spec.candidate_seat
        mine = participants[seat]
        others = [p for p in participants if p["slot"] != seat]
        return MatchRecord(
            opponent=spec.opponent,
            seat=seat,
            seed=spec.seed,
            outcome=outcome_of([p["rank"] for p in participants], seat),
            candidate_metrics=_numbers(mine["metrics"]),
            opponent_metrics=_numbers(others[0]["metrics"]) if others else {},
            turns=match["turns"],
            errors=mine["errors"],
            timeouts=mine["timeouts"],
            forfeited=mine["forfeited"],
            error_samples=_samples(mine["error_samples"]),
            latency_p50_ms=mine["latency_p50_ms"],
            latency_p99_ms=mine["latency_p99_ms"],
            match_id=str(match_id),
            end_reason=match["end_reason"],
            game_seconds=game_seconds(self.game, match["config"], match["turns"]),
        )


def _numbers(metrics: Mapping[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def fleet_opponents(
    session: Session,
    game: str,
    count: int,
    exclude_bot_ids: Sequence[uuid.UUID] = (),
    rng: random.Random | None = None,
) -> list[uuid.UUID]:
    """Up to `count` active bots of `game`, spread over the ladder: the bots sorted by ordinal
    (mu - 3 sigma; unrated bots at 0, the default rating's ordinal) are cut into `count` equal
    strata and one bot is drawn from each, so weak, middle and strong bots are all met.
    Weakest first; all of them when there are no more than `count`."""
    if count <= 0:
        return []
    rng = rng or random.Random(0)
    query = (
        select(Bot.id, Rating.ordinal)
        .outerjoin(Rating, (Rating.bot_id == Bot.id) & (Rating.game == game))
        .where(Bot.game == game, Bot.status == BotStatus.ACTIVE)
    )
    if exclude_bot_ids:
        query = query.where(Bot.id.not_in(list(exclude_bot_ids)))
    rows = session.execute(query).tuples()
    ranked = sorted((0.0 if ordinal is None else ordinal, str(bot_id), bot_id) for bot_id, ordinal in rows)
    ids = [bot_id for _, _, bot_id in ranked]
    if len(ids) <= count:
        return ids
    return [ids[rng.randrange(k * len(ids) // count, (k + 1) * len(ids) // count)] for k in range(count)]
