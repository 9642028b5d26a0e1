"""The turn loop: plays one match between bots, whatever the game.

Each turn every active player's bot is asked in parallel; a bot that times out or answers badly
plays the game's default action (the game receives None), and a bot that fails
`max_consecutive_failures` turns in a row forfeits. The loop knows the game only through
shared.games.base, so the same code plays podracing, battle and any future game. What differs
between callers comes in as arguments: the bots (TurnClient), a heartbeat, a deadline, a turn
observer and where to record turn metrics (TurnMetrics).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from shared.botclient import TurnReply
from shared.botclient.http import MAX_ERROR_TEXT
from shared.config import Settings
from shared.games.base import JSON, Game, Match, MatchResult, StepResult
from shared.games.replay import ReplayRecorder
from shared.play.errors import MatchLost
from shared.play.stats import PlayerStats

log = logging.getLogger(__name__)


class TurnClient(Protocol):
    """What the loop needs from a bot: HttpBotConnection over TCP or a Unix socket, or a stand-in."""

    async def turn(
        self, *, match_id: str, game: str, player: int, turn: int, timeout_ms: int, observation: Any
    ) -> TurnReply: ...


class UnreachableBot:
    """Stands in for a bot we could not even connect to (refused endpoint, sandbox that did not
    start): every turn fails at once with the same reason, so it forfeits like any failing bot."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def turn(self, **_: Any) -> TurnReply:
        return TurnReply(None, 0.0, self.reason)


FailureKind = Literal["timeout", "error"]
"""Why a bot's turn failed: no answer in time, or an answer (or action) that could not be used."""


class TurnMetrics(Protocol):
    """Where the loop records how the bots of one match answer. Called on every turn of every
    player: it must be cheap and must not raise."""

    def answered(self, latency_s: float) -> None:
        """A bot answered a turn with a usable action, `latency_s` seconds after it was asked."""
        ...

    def failed(self, kind: FailureKind) -> None:
        """A bot did not answer a turn usefully."""
        ...


MetricsFor = Callable[[str], TurnMetrics]
"""Makes the TurnMetrics of one match of the named game, as the match starts
(shared.play.prometheus.PrometheusTurnMetrics in the processes that serve metrics)."""


@dataclass
class PlayedMatch:
    result: MatchResult
    replay: dict[str, Any]
    stats: list[PlayerStats]
    turns: int
    end_reason: str


def _readable(
    match: Match, player: int, answer: TurnReply | BaseException
) -> tuple[TurnReply, Sequence[str]]:
    """One bot's reply, with every failure to get or read its action turned into that bot's error,
    and the problems the game found in a usable action (it plays what it could read of it).

    A client that raised, or an action the game's reading cannot cope with, is a failed turn of
    this bot (it plays the default action), never a crashed match for everyone.
    """
    if isinstance(answer, BaseException):
        if not isinstance(answer, Exception):
            raise answer  # cancellation, KeyboardInterrupt: not the bot's doing
        log.warning("bot client of player %d raised", player, exc_info=answer)
        return TurnReply(None, 0.0, f"answer could not be read: {type(answer).__name__}"), ()
    if not answer.ok:
        return answer, ()
    try:
        problems = match.check_action(player, answer.action)
    except Exception as exc:
        reason = f"action could not be read: {type(exc).__name__}: {exc}"
        return TurnReply(None, answer.latency_ms, reason[:MAX_ERROR_TEXT]), ()
    return answer, problems or ()


class TurnObserver(Protocol):
    """Told about every played turn as soon as it is recorded (the live frames publisher). It must
    return quickly; whatever it raises is logged and ignored, never the match's problem."""

    def __call__(self, turn: int, actions: Sequence[JSON | None], step: StepResult) -> None: ...


def _tell(observer: TurnObserver, turn: int, actions: Sequence[JSON | None], step: StepResult) -> bool:
    """Call the observer; False (and a log line) when it failed, and it is then not called again."""
    try:
        observer(turn, actions, step)
    except Exception:
        log.warning("turn observer failed; not calling it again for this match", exc_info=True)
        return False
    return True


Heartbeat = Callable[[], Awaitable[bool]]
"""Records that the match is alive; returns False when the match is no longer ours."""


async def _heartbeats(beat: Heartbeat, interval_s: float, lost: asyncio.Event) -> None:
    while True:
        await asyncio.sleep(interval_s)
        try:
            if not await beat():
                lost.set()
                return
        except Exception:  # a database hiccup must not kill the match; the next beat retries
            log.warning("heartbeat failed", exc_info=True)


async def play_match(
    game: Game,
    *,
    match_id: str,
    seed: int,
    config: dict[str, JSON],
    clients: Sequence[TurnClient],
    settings: Settings,
    heartbeat: Heartbeat | None = None,
    deadline: float | None = None,
    on_turn: TurnObserver | None = None,
    metrics: MetricsFor | None = None,
) -> PlayedMatch:
    """Play a whole match and return its result, replay and per-player figures.

    `deadline` (time.monotonic()) ends the match early with the current standings and end reason
    "time_limit", so a slow match still finishes cleanly before the task's hard time limit.
    `on_turn` is told about each played turn (its raw actions and what the game produced);
    `metrics`, when given, makes what is told about each answer and each failed turn.
    Raises MatchLost if `heartbeat` reports that the match was taken away from this worker.
    """
    num_players = len(clients)
    match = game.create_match(seed, config, num_players)
    recorder = ReplayRecorder(game.name, seed, config, num_players, match)
    stats = [PlayerStats() for _ in clients]
    pending_forfeits: list[int] = []
    lost = asyncio.Event()
    beats = (
        asyncio.create_task(_heartbeats(heartbeat, settings.heartbeat_interval_s, lost))
        if heartbeat
        else None
    )
    end_reason: str | None = None
    turn_metrics = metrics(game.name) if metrics is not None else None
    try:
        while True:
            for player in pending_forfeits:
                match.forfeit(player)
            if match.finished:
                recorder.record_final_forfeits(pending_forfeits)
                break
            if lost.is_set():
                raise MatchLost(match_id)
            if deadline is not None and time.monotonic() >= deadline:
                recorder.record_final_forfeits(pending_forfeits)
                end_reason = "time_limit"
                break
            turn = match.turn
            timeout_ms = settings.first_turn_timeout_ms if turn == 0 else settings.turn_timeout_ms
            active = [p for p in range(num_players) if not stats[p].forfeited]
            answers = await asyncio.gather(
                *(
                    clients[p].turn(
                        match_id=match_id,
                        game=game.name,
                        player=p,
                        turn=turn,
                        timeout_ms=timeout_ms,
                        observation=match.observation(p),
                    )
                    for p in active
                ),
                return_exceptions=True,
            )
            actions: list[JSON | None] = [None] * num_players
            bodies: list[bytes | None] = [None] * num_players  # what the replay sizes actions by
            forfeits_now, pending_forfeits = pending_forfeits, []
            for player, answer in zip(active, answers, strict=True):
                reply, problems = _readable(match, player, answer)
                stats[player].record(turn, reply)
                if problems:
                    stats[player].invalid(turn, reply.action, problems)
                if reply.ok:
                    actions[player] = reply.action
                    bodies[player] = reply.body
                    if turn_metrics is not None:
                        turn_metrics.answered(reply.latency_ms / 1000)
                else:
                    if turn_metrics is not None:
                        turn_metrics.failed("timeout" if reply.timed_out else "error")
                    if stats[player].consecutive_failures >= settings.max_consecutive_failures:
                        stats[player].forfeited = True
                        stats[
                            player
                        ].forfeit_reason = (
                            f"forfeited after {stats[player].consecutive_failures} failed turns in a row"
                        )
                        pending_forfeits.append(player)
            step = match.step(actions)
            recorder.record_turn(actions, forfeits_now, step, bodies)
            if on_turn is not None and not _tell(on_turn, turn, actions, step):
                on_turn = None
    finally:
        if beats is not None:
            beats.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beats
    replay = recorder.finish(match)
    result = match.result()
    return PlayedMatch(
        result=result,
        replay=replay,
        stats=stats,
        turns=match.turn,
        end_reason=end_reason or result.reason,
    )
