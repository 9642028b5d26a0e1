"""The gateway's WebSockets (protocol: docs/live.md).

- `/ws/matches/{match_id}`: one match, live: `live.start`, then every `match.frames` as published,
  then `match.finished` and a normal close (1000). An evolution run's evaluation match only for a
  handshake that carries its owner's or an admin's API key (services.gateway.live.start); for
  anyone else it is an unknown match (4404).
- `/ws/events?topic=matches`: every event of a public topic as its JSON (the front page ticker),
  but the evaluation matches' (they are private to their evolution run).
- `/ws/training/{run_id}`: one training run, live, for its owner or an admin: the client's API key
  first (services.gateway.live.training), then `training.subscribed` and every event of the run's
  topic (`training.progress` each iteration, `training.status` on status changes).

All are thin relays of the process's LiveHub. A client is dropped (close 1013) when it falls
behind, and a client that went away is forgotten at once; neither touches anyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, WebSocket
from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocketDisconnect

from services.gateway.live import training as training_access
from services.gateway.live.hub import Closed, Delivery, LiveHub, Subscription, SubscriptionClosed
from services.gateway.live.start import (
    finished_message,
    handshake_key,
    load_live_match,
    match_status,
    start_message,
)
from shared.config import get_settings
from shared.events import (
    TOPIC_MATCHES,
    Event,
    EventType,
    MatchEvent,
    MatchFinished,
    match_topic,
    training_topic,
)
from shared.states import MatchKind

log = logging.getLogger(__name__)
router = APIRouter()

PUBLIC_TOPICS = frozenset({TOPIC_MATCHES})
"""Topics any browser may follow on /ws/events."""
RECHECK_S = 10.0
"""How often a quiet live match is looked up in the database: it may have ended while its
`match.finished` was missed (pub/sub keeps nothing), or been cancelled, which sends no event."""
FINISH_LINGER_S = 0.3
"""`match.finished` comes on the `matches` topic, the frames on the match's own: two subscriptions,
so the end can overtake the last frames. It is held back this long, while late frames still pass."""
CLOSE_WAIT_S = 10.0
"""How long a dropped client gets to take its close frame (a frozen one may never take it)."""
AUTH_WAIT_S = 10.0
"""How long a training socket waits for the client's API key."""
TRAINING_RECHECK_S = 30.0
"""How often a training socket checks again that its key is still valid and may see the run."""

CLOSE_NORMAL = 1000
CLOSE_POLICY = 1008
CLOSE_ERROR = 1011
ENDED = Closed(CLOSE_NORMAL, "match ended")


def live_hub(websocket: WebSocket) -> LiveHub:
    """The app's hub, made on first use on the loop that serves it."""
    state = websocket.app.state
    loop = asyncio.get_running_loop()
    hub: LiveHub | None = getattr(state, "live_hub", None)
    if hub is None or getattr(state, "live_hub_loop", None) is not loop:
        hub = LiveHub()
        state.live_hub, state.live_hub_loop = hub, loop
    return hub


async def _close(websocket: WebSocket, closed: Closed) -> None:
    """Close with a code and reason; a client that does not take the frame in time is left behind."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(CLOSE_WAIT_S):
            await websocket.close(closed.code, closed.reason[:120])


async def _until_disconnect(websocket: WebSocket) -> None:
    """Read (and ignore) what the client sends until it goes away."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return


Pump = Callable[[], Coroutine[Any, Any, Closed]]


async def _serve(websocket: WebSocket, subscription: Subscription, pump: Pump) -> Closed | None:
    """Run `pump` until it ends, the client goes away (None) or the hub drops the client."""
    sending: asyncio.Task[Closed] = asyncio.create_task(pump())
    listening = asyncio.create_task(_until_disconnect(websocket))
    dropped = asyncio.create_task(subscription.ended.wait())
    tasks: tuple[asyncio.Task[Any], ...] = (sending, listening, dropped)
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if subscription.closed is not None:
        return subscription.closed
    if listening in done:
        return None
    if sending in done:
        problem = sending.exception() if not sending.cancelled() else None
        if problem is None:
            return sending.result()
        if isinstance(problem, SubscriptionClosed):
            return problem.closed
        if isinstance(problem, WebSocketDisconnect | OSError):  # uvicorn's ClientDisconnected is one
            return None
        log.warning("live socket failed: %s: %s", type(problem).__name__, problem)
        return Closed(CLOSE_ERROR, "server error")
    return None


def _public(event: Event) -> bool:
    """Whether anyone may see the event: not one of an evaluation match (shared.matches.visible_to)."""
    return not (isinstance(event, MatchEvent) and event.kind == MatchKind.EVALUATION)


@router.websocket("/ws/events")
async def events_socket(websocket: WebSocket) -> None:
    """Every public event of a public topic (`topic`, default `matches`) as its JSON text."""
    topic = websocket.query_params.get("topic", TOPIC_MATCHES)
    await websocket.accept()
    if topic not in PUBLIC_TOPICS:
        shown = topic[:40]
        await _close(websocket, Closed(CLOSE_POLICY, f"unknown topic {shown!r}; known: matches"))
        return
    async with live_hub(websocket).subscribe({topic: _public}) as subscription:

        async def pump() -> Closed:
            while True:
                await websocket.send_text((await subscription.next()).text)

        closed = await _serve(websocket, subscription, pump)
    if closed is not None:
        await _close(websocket, closed)


def _finished(match_id: uuid.UUID) -> Callable[[Event], bool]:
    return lambda event: isinstance(event, MatchFinished) and event.match_id == match_id


@router.websocket("/ws/matches/{match_id}")
async def match_socket(websocket: WebSocket, match_id: str) -> None:
    """One match live, for whoever may see it: `live.start`, its frames as they are played, then
    `match.finished`."""
    await websocket.accept()
    try:
        wanted = uuid.UUID(match_id)
    except ValueError:
        await _close(websocket, Closed(CLOSE_POLICY, "the match id must be a UUID"))
        return
    key = handshake_key(websocket.headers)
    settings = getattr(websocket.app.state, "settings", None) or get_settings()
    # Subscribed before the match is read: whatever happens after that read is received.
    topics = {match_topic(wanted): None, TOPIC_MATCHES: _finished(wanted)}
    async with live_hub(websocket).subscribe(topics) as subscription:
        match = await run_in_threadpool(load_live_match, wanted, settings, key)
        if isinstance(match, training_access.Refusal):
            closed: Closed | None = Closed(match.code, match.reason)
        else:
            opening = await run_in_threadpool(start_message, match)

            async def pump() -> Closed:
                await websocket.send_text(opening)
                if not match.pending:
                    await websocket.send_text(finished_message(match.id, match.status))
                    return ENDED
                loop = asyncio.get_running_loop()
                final: Delivery | None = None
                linger_until = 0.0
                while True:
                    wait = RECHECK_S if final is None else max(0.0, linger_until - loop.time())
                    try:
                        delivery = await asyncio.wait_for(subscription.next(), wait)
                    except TimeoutError:
                        if final is not None:
                            await websocket.send_text(final.text)
                            return ENDED
                        status = await run_in_threadpool(match_status, wanted)
                        if status is None or status in status.pending():
                            continue
                        await websocket.send_text(finished_message(wanted, status))
                        return ENDED
                    if delivery.type is EventType.MATCH_FINISHED:
                        final, linger_until = delivery, loop.time() + FINISH_LINGER_S
                    else:
                        await websocket.send_text(delivery.text)

            closed = await _serve(websocket, subscription, pump)
    if closed is not None:
        await _close(websocket, closed)


async def _first_text(websocket: WebSocket, wait_s: float) -> str | None:
    """The client's first text message; None if it sends none in time, or goes away."""
    try:
        async with asyncio.timeout(wait_s):
            message = await websocket.receive()
    except TimeoutError:
        return None
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text: str | None = message.get("text")
    return text


@router.websocket("/ws/training/{run_id}")
async def training_socket(websocket: WebSocket, run_id: str) -> None:
    """One training run live, for its owner or an admin: the API key as the client's first message,
    then `training.subscribed` and every event of the run's topic, for as long as the client stays
    (a run can be stopped and resumed, so its status never ends the socket)."""
    await websocket.accept()
    try:
        wanted = uuid.UUID(run_id)
    except ValueError:
        await _close(websocket, Closed(CLOSE_POLICY, "the run id must be a UUID"))
        return
    try:
        key = training_access.key_in(await _first_text(websocket, AUTH_WAIT_S))
    except WebSocketDisconnect:
        return
    if key is None:
        await _close(websocket, Closed(training_access.CLOSE_UNAUTHORIZED, training_access.ASK_FOR_KEY))
        return
    settings = getattr(websocket.app.state, "settings", None) or get_settings()

    async def allowed() -> str | Closed:
        verdict = await run_in_threadpool(training_access.check, settings, key, wanted)
        return (
            Closed(verdict.code, verdict.reason) if isinstance(verdict, training_access.Refusal) else verdict
        )

    # Subscribed before the run is read: whatever happens after that read is received.
    async with live_hub(websocket).subscribe([training_topic(wanted)]) as subscription:
        opening = await allowed()
        if isinstance(opening, Closed):
            closed: Closed | None = opening
        else:
            first = opening

            async def pump() -> Closed:
                await websocket.send_text(first)
                loop = asyncio.get_running_loop()
                check_at = loop.time() + TRAINING_RECHECK_S
                while True:
                    delivery: Delivery | None = None
                    with contextlib.suppress(TimeoutError):
                        wait = max(0.0, check_at - loop.time())
                        delivery = await asyncio.wait_for(subscription.next(), wait)
                    if loop.time() >= check_at:
                        verdict = await allowed()
                        if isinstance(verdict, Closed):
                            return verdict
                        check_at = loop.time() + TRAINING_RECHECK_S
                    if delivery is not None:
                        await websocket.send_text(delivery.text)

            closed = await _serve(websocket, subscription, pump)
    if closed is not None:
        await _close(websocket, closed)
