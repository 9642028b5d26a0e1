"""One attempt at one match: claim it, open the bots, play, finish in one transaction.

Safe to run any number of times for the same match (redelivered tasks, the reaper's requeues,
a second worker): only the attempt that holds the claim writes anything, and a finished match is
never touched again.

A bot that fails its pre-match health check (or cannot be reached or started) still gets its seat
and may recover, but the match is NOT rated, for anyone: a rating must measure play, not a broken
deployment or a secret rotation in progress. The match's public `error` then names the bot and a
category only ("health check failed", "unreachable"...); the detail goes to the bot's owner in its
participant's error samples. Each check's outcome is recorded on the bot (see health.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable

from services.match_runner import announce, metrics
from services.match_runner.health import HealthCheck, record_checks
from services.match_runner.outcome import Outcome
from services.match_runner.seats import OpenSeat, SeatProblem, close_seats, open_seats
from services.match_runner.store import (
    MatchPlan,
    Seat,
    claim_match,
    fail_match,
    finish_match,
    heartbeat,
    load_plan,
)
from shared.config import Settings, get_settings
from shared.games.base import Game
from shared.games.registry import get_game
from shared.jobs import worker_name
from shared.outages import unreachable
from shared.play.errors import MatchLost
from shared.play.turns import PlayedMatch, play_match
from shared.replay_store import ReplayStoreError, replay_store

log = logging.getLogger(__name__)


class NoBotReachable(Exception):
    """Every bot failed to start or to answer its health check: there is no contest to play."""


class OperatorError(Exception):
    """The platform cannot open a bot through no fault of the bot (its secret cannot be decrypted):
    the match fails, naming the cause, instead of being played as a forfeit."""


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop where it is installed: the same asyncio API with less CPU per turn; else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _deadline(settings: Settings) -> float:
    """When to stop playing and finish with current standings, well before Celery's soft limit."""
    margin = max(5.0, settings.match_soft_time_limit_s * 0.05)
    return time.monotonic() + max(1.0, settings.match_soft_time_limit_s - margin)


def _public_problems(seats: list[Seat], opened: list[OpenSeat]) -> list[str]:
    """What went wrong, per failing seat, in words any viewer may read: bot name and category."""
    return [
        f"slot {seat.slot} ({seat.bot_name!r}): {state.category}"
        for seat, state in zip(seats, opened, strict=True)
        if state.category is not None
    ]


async def _record_health(seats: list[Seat], opened: list[OpenSeat], settings: Settings) -> None:
    checks = [
        HealthCheck(seat.bot_id, state.problem if state.category is not None else None)
        for seat, state in zip(seats, opened, strict=True)
        if state.category is None or state.category.bot_fault
    ]
    try:
        await asyncio.to_thread(record_checks, checks, settings)
    except Exception:  # bookkeeping must not stop the match
        log.exception("cannot record the health checks of match seats")


def _live_frames(plan: MatchPlan, settings: Settings) -> announce.FrameAnnouncer | None:
    """Who publishes the match's frames for live viewers; None when live frames are switched off."""
    if not (settings.events_enabled and settings.live_frames_enabled):
        return None
    return announce.FrameAnnouncer(plan.id, plan.game)


async def _play(
    plan: MatchPlan, game: Game, attempt: int, settings: Settings, deadline: float
) -> tuple[PlayedMatch, str | None]:
    """The played match, and why it must not be rated (None when every bot was ready)."""
    opened = await open_seats(plan.seats, plan.game, settings)
    try:
        await _record_health(plan.seats, opened, settings)
        problems = _public_problems(plan.seats, opened)
        operator = [seat.problem for seat in opened if seat.category is SeatProblem.SECRET_KEY]
        if operator:
            raise OperatorError(f"operator error: {'; '.join(p for p in operator if p)}")
        if not any(seat.reachable for seat in opened):
            raise NoBotReachable(f"no bot could be reached: {'; '.join(problems)}")

        async def beat() -> bool:
            return await asyncio.to_thread(heartbeat, plan.id, attempt)

        live = _live_frames(plan, settings)
        played = await play_match(
            game,
            match_id=str(plan.id),
            seed=plan.seed,
            config=plan.config,
            clients=[seat.client for seat in opened],
            settings=settings,
            heartbeat=beat,
            deadline=deadline,
            on_turn=live,
            metrics=metrics.TURN_METRICS,
        )
        if live is not None:
            live.flush()  # the last turns, before the finishing transaction and the end's news
    finally:
        await close_seats(opened)
    for stats, seat in zip(played.stats, opened, strict=True):
        if seat.problem:
            stats.error_samples.insert(0, {"turn": None, "error": f"before the match: {seat.problem}"})
    unrated = f"not rated: before the match, {'; '.join(problems)}" if problems else None
    return played, unrated


def _fail(match_id: uuid.UUID, attempt: int, error: str, plan: MatchPlan | None = None) -> None:
    """Mark the match failed and, if it was still ours to fail, announce it."""
    if fail_match(match_id, attempt, error):
        announce.match_failed(match_id, plan, error)


def run_match(match_id: uuid.UUID, settings: Settings | None = None) -> Outcome:
    """Play a match if it is ours to play; see the module docstring for the guarantees."""
    settings = settings or get_settings()
    attempt = claim_match(match_id, worker_name(), settings.stale_match_after_s)
    if attempt is None:
        log.info("match %s is not ours to play (finished, running elsewhere or unknown)", match_id)
        return Outcome.SKIPPED
    if attempt > settings.max_match_attempts:
        _fail(match_id, attempt, f"gave up after {attempt - 1} attempts")
        return Outcome.FAILED
    deadline = _deadline(settings)
    started = time.monotonic()
    try:
        plan = load_plan(match_id)
        game = get_game(plan.game)
    except Exception as exc:
        if unreachable(exc) is not None:
            raise  # claimed but not loaded: the reaper hands the match out again once it is stale
        log.exception("cannot load match %s", match_id)
        _fail(match_id, attempt, f"cannot load the match: {type(exc).__name__}")
        return Outcome.FAILED
    announce.match_started(plan, attempt)
    log.info("playing match %s (%s, attempt %d)", match_id, plan.game, attempt)
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as loop_runner:
            played, unrated_reason = loop_runner.run(_play(plan, game, attempt, settings, deadline))
    except MatchLost:
        log.warning("match %s was taken away from this worker; dropping our result", match_id)
        return Outcome.LOST
    except (NoBotReachable, OperatorError) as exc:
        _fail(match_id, attempt, str(exc), plan)
        metrics.MATCHES.labels(plan.game, Outcome.FAILED).inc()
        return Outcome.FAILED
    except Exception as exc:
        log.exception("match %s crashed", match_id)
        _fail(match_id, attempt, f"runner error: {type(exc).__name__}", plan)  # details: the log
        metrics.MATCHES.labels(plan.game, Outcome.FAILED).inc()
        return Outcome.FAILED
    try:
        finished = finish_match(match_id, attempt, played, unrated_reason, replay_store(settings))
    except ReplayStoreError:
        log.exception("match %s: cannot store its replay; nothing committed, the reaper retries it", match_id)
        metrics.MATCHES.labels(plan.game, Outcome.UNSTORED).inc()
        return Outcome.UNSTORED
    if finished is None:
        log.warning("match %s was taken away before it finished; dropping our result", match_id)
        return Outcome.LOST
    announce.match_finished(plan, finished)
    metrics.MATCHES.labels(plan.game, Outcome.FINISHED).inc()
    metrics.MATCH_DURATION.labels(plan.game).observe(time.monotonic() - started)
    log.info("match %s finished after %d turns (%s)", match_id, played.turns, played.end_reason)
    return Outcome.FINISHED
