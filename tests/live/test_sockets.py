"""The gateway's WebSockets on a real uvicorn gateway, the test database and the test Redis: the
live protocol of one match, the events socket, input checks, and a client that falls behind being
dropped (1013) while another on the same match keeps receiving.

Events are published the way the match runner publishes them (shared.events.publish) or, for bulk,
straight to Redis; no worker runs here, so the matches stay queued unless a test says otherwise."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import uuid
from collections.abc import Callable

import pytest
import redis.asyncio as aioredis
from sqlalchemy import update
from websockets.asyncio.client import connect

from shared.db.models import Match
from shared.db.session import session_scope
from shared.events import (
    MatchStarted,
    channel,
    get_publisher,
    match_topic,
    publish,
)
from shared.games.registry import get_game
from shared.states import MatchKind, MatchStatus
from tests.support.live_events import finished_event, frames
from tests.support.live_sockets import Message, close_of, receive, ws_url
from tests.support.match_runner import SMALL_RACE, queue_match


@pytest.fixture
def queued_match(register_bot: Callable[..., uuid.UUID]) -> uuid.UUID:
    """A podracing match in the database that no worker will play."""
    return queue_match([register_bot(), register_bot()], seed=11, send=False)


class FrozenClient:
    """A WebSocket client on a raw socket that, after the handshake, reads nothing until told to:
    with a small receive buffer it pushes back on the server after kilobytes (no library reading
    ahead for it, no loopback autotuning to tens of megabytes)."""

    def __init__(self, gateway_url: str, path: str) -> None:
        host, port = gateway_url.removeprefix("http://").split(":")
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        self.sock.settimeout(30)
        self.sock.connect((host, int(port)))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(4096)
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head

    def _take(self, count: int) -> bytes:
        while len(self.buffer) < count:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError("connection closed without a close frame")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def frame(self) -> tuple[int, bytes]:
        """The next frame from the server (unmasked, unfragmented): its opcode and payload."""
        first, second = self._take(2)
        length = second & 0x7F
        if length == 126:
            length = int.from_bytes(self._take(2), "big")
        elif length == 127:
            length = int.from_bytes(self._take(8), "big")
        return first & 0x0F, self._take(length)

    def read_until_close(self) -> tuple[int, tuple[int, str]]:
        """Read everything the server sent; (text messages, the close code and reason)."""
        messages = 0
        while True:
            opcode, payload = self.frame()
            if opcode == 8:
                return messages, (int.from_bytes(payload[:2], "big"), payload[2:].decode())
            messages += opcode == 1


@pytest.mark.slow
def test_a_live_match_starts_with_frame_zero_then_relays_frames_until_it_finishes(
    gateway_url: str, queued_match: uuid.UUID
) -> None:
    async def scenario() -> list[Message]:
        async with connect(ws_url(gateway_url, f"/ws/matches/{queued_match}")) as socket:
            got = [await receive(socket)]
            for turn in range(3):
                publish(frames(queued_match, turn))
            publish(frames(uuid.uuid4(), 0))  # another match: not ours
            publish(finished_event(queued_match, turns=2))
            get_publisher().flush(5)
            got += [await receive(socket) for _ in range(4)]
            assert await close_of(socket) == (1000, "match ended")
            return got

    start, *turns, finished = asyncio.run(scenario())
    expected_frame = get_game("podracing").create_match(11, dict(SMALL_RACE), 2).frame()
    assert start["type"] == "live.start"
    assert start["match_id"] == str(queued_match)
    assert (start["game"], start["status"]) == ("podracing", "queued")
    assert [p["slot"] for p in start["participants"]] == [0, 1]
    assert all(p["name"] for p in start["participants"])
    assert all(uuid.UUID(p["bot_id"]) for p in start["participants"])
    replay = start["replay"]
    assert (replay["format"], replay["seed"], replay["num_players"]) == (1, 11, 2)
    assert replay["config"] == SMALL_RACE
    assert (replay["events"], replay["turns"], replay["result"]) == ([], [], None)
    assert replay["frames"] == [json.loads(json.dumps(expected_frame))]
    assert [(m["type"], m["match_id"], m["turn"]) for m in turns] == [
        ("match.frames", str(queued_match), turn) for turn in range(3)
    ]
    assert turns[0]["frames"] == [{"turn": 1, "pad": ""}]
    assert turns[0]["actions"] == [[None, None]]
    assert finished["type"] == "match.finished"
    assert finished["match_id"] == str(queued_match)


def test_a_match_that_already_ended_gets_start_and_end_then_a_normal_close(
    gateway_url: str, queued_match: uuid.UUID
) -> None:
    with session_scope() as session:
        session.execute(update(Match).where(Match.id == queued_match).values(status=MatchStatus.CANCELLED))

    async def scenario() -> tuple[list[Message], tuple[int | None, str]]:
        async with connect(ws_url(gateway_url, f"/ws/matches/{queued_match}")) as socket:
            return [await receive(socket), await receive(socket)], await close_of(socket)

    (start, finished), closed = asyncio.run(scenario())
    assert (start["type"], start["status"]) == ("live.start", "cancelled")
    assert finished == {"type": "match.finished", "match_id": str(queued_match), "status": "cancelled"}
    assert closed == (1000, "match ended")


@pytest.mark.parametrize(
    ("path", "code", "reason"),
    [
        ("/ws/matches/not-a-uuid", 1008, "the match id must be a UUID"),
        (f"/ws/matches/{uuid.UUID(int=0)}", 4404, "unknown match"),
        ("/ws/events?topic=match:anything", 1008, "unknown topic 'match:anything'; known: matches"),
        ("/ws/events?topic=", 1008, "unknown topic ''; known: matches"),
    ],
)
def test_bad_input_is_closed_with_a_clear_reason(gateway_url: str, path: str, code: int, reason: str) -> None:
    async def scenario() -> tuple[int | None, str]:
        async with connect(ws_url(gateway_url, path)) as socket:
            return await close_of(socket)

    assert asyncio.run(scenario()) == (code, reason)


def test_the_events_socket_relays_every_event_of_the_matches_topic(gateway_url: str) -> None:
    match_id = uuid.uuid4()
    started = MatchStarted(
        match_id=match_id, game="battle", kind=MatchKind.LADDER, rated=True, attempt=1, participants=[]
    )

    async def scenario() -> list[Message]:
        async with (
            connect(ws_url(gateway_url, "/ws/events")) as first,
            connect(ws_url(gateway_url, "/ws/events?topic=matches")) as second,
        ):
            await asyncio.sleep(0.3)  # the handshake returns before the server subscribed
            publish(started)
            publish(frames(match_id, 0))  # another topic: not relayed here
            publish(finished_event(match_id))
            get_publisher().flush(5)
            return [await receive(socket) for socket in (first, first, second, second)]

    got = asyncio.run(scenario())
    assert [m["type"] for m in got] == ["match.started", "match.finished"] * 2
    assert got[0] == json.loads(started.model_dump_json())


def test_a_client_that_stops_reading_is_dropped_and_the_other_keeps_watching(
    gateway_url: str, queued_match: uuid.UUID, redis_url: str
) -> None:
    """About 60 KB a turn: the frozen client's socket buffers and its queue (8 MB) fill after a few
    hundred turns; the reading client gets every turn, then the match's end."""
    turns = 600
    path = f"/ws/matches/{queued_match}"
    frozen = FrozenClient(gateway_url, path)

    async def scenario() -> list[int]:
        redis = aioredis.Redis.from_url(redis_url)
        async with connect(ws_url(gateway_url, path), max_size=2**22) as reader:
            await receive(reader)  # live.start: subscribed (so is the frozen client, connected earlier)
            await asyncio.sleep(0.3)
            seen: list[int] = []

            async def keep_reading() -> None:
                while True:
                    message = await receive(reader, 30)
                    if message["type"] == "match.finished":
                        return
                    seen.append(message["turn"])

            reading = asyncio.create_task(keep_reading())
            topic = channel(match_topic(queued_match))
            for turn in range(turns):
                await redis.publish(topic, frames(queued_match, turn, 60_000).to_json())
                while len(seen) < turn - 100 and not reading.done():  # the frozen client never reads
                    await asyncio.sleep(0.005)
            await redis.publish(channel("matches"), finished_event(queued_match).to_json())
            await reading
            assert await close_of(reader) == (1000, "match ended")
        await redis.aclose()
        return seen

    try:
        seen = asyncio.run(scenario())
        frozen_got, frozen_close = frozen.read_until_close()  # what it was sent before it was dropped
    finally:
        frozen.sock.close()
    assert seen == list(range(turns))
    assert frozen_close == (1013, "too slow: the client did not keep up; reconnect")
    assert 1 <= frozen_got < turns // 2
