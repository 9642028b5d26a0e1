"""A real match, watched live: a real Celery worker plays two HTTP bots on loopback while a client
watches `/ws/matches/{id}` on a real uvicorn gateway. Every turn arrives in a `match.frames` batch,
and together they are exactly the stored replay's frames, events and actions. And a worker whose events
Redis is unreachable still plays a long match to the end with live frames on."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from websockets.asyncio.client import connect

from shared.games.replay import decompress
from shared.matches import enqueue_match
from shared.ports import free_port
from shared.replay_store import load_replay
from shared.states import MatchStatus
from tests.support.live_sockets import close_of, receive, ws_url
from tests.support.match_runner import queue_match, start_worker, wait_for_match
from tests.support.processes import ManagedProcess


@pytest.mark.slow
def test_a_match_played_by_a_real_worker_is_watched_live_turn_by_turn(
    gateway_url: str, worker: ManagedProcess, two_bots: list[uuid.UUID]
) -> None:
    match_id = queue_match(two_bots, seed=5, send=False)

    async def watch() -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        async with connect(ws_url(gateway_url, f"/ws/matches/{match_id}"), max_size=2**22) as socket:
            start = await receive(socket)
            await asyncio.to_thread(enqueue_match, match_id)
            turns = []
            while (message := await receive(socket, 60))["type"] == "match.frames":
                turns.append(message)
            assert await close_of(socket) == (1000, "match ended")
            return start, turns, message

    start, turns, finished = asyncio.run(watch())
    match = wait_for_match(match_id, worker)
    assert match.status == MatchStatus.FINISHED
    assert match.replay is not None
    replay = decompress(load_replay(match.replay))
    replay = json.loads(json.dumps(replay))  # as JSON, like the messages

    assert start["status"] == "queued"
    assert start["replay"]["frames"] == replay["frames"][:1]
    assert finished["type"] == "match.finished"
    assert finished["status"] == "finished"
    assert finished["turns"] == match.turns
    assert len(finished["participants"]) == 2
    # Batches of consecutive turns that together cover the whole match, in order.
    starts = [m["turn"] for m in turns]
    sizes = [len(m["actions"]) for m in turns]
    assert starts == [sum(sizes[:k]) for k in range(len(turns))]
    assert sum(sizes) == len(replay["turns"])
    assert {(m["match_id"], m["game"]) for m in turns} == {(str(match_id), "podracing")}
    assert [frame for m in turns for frame in m["frames"]] == replay["frames"][1:]
    assert [event for m in turns for event in m["events"]] == replay["events"]
    assert [actions for m in turns for actions in m["actions"]] == [t["actions"] for t in replay["turns"]]


@pytest.mark.slow
@pytest.mark.usefixtures("database_url", "redis_url")
def test_a_long_match_finishes_when_the_events_redis_is_down(two_bots: list[uuid.UUID]) -> None:
    """Hundreds of frames queued for a Redis that refuses every connection: the match is not slowed
    into failure, and it is rated as usual."""
    worker = start_worker(
        "live-down",
        {"ARENA_EVENTS_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "ARENA_LIVE_FRAMES_ENABLED": "1"},
    )
    try:
        match_id = queue_match(two_bots, seed=9, config={"laps": 3, "max_turns": 400})
        match = wait_for_match(match_id, worker, timeout=120)
        log = worker.log()
    finally:
        worker.stop()
    assert match.status == MatchStatus.FINISHED
    assert match.rated
    assert match.error is None
    assert match.turns
    assert match.turns > 60
    assert "cannot publish" in log  # it did try, and said so (rate-limited)
