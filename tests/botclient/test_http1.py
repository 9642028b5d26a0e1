"""The httptools bot client on its own: where its connections go (the address checked once, never
resolved again), when it reuses them, and requests that overlap. Loopback only, no DNS."""

from __future__ import annotations

import asyncio
import ipaddress
from typing import Any

import pytest
from pydantic import SecretStr

from shared.botclient import HttpBotConnection, http1
from shared.botclient import http as bot_http
from shared.botclient.http1 import Http1Transport, TcpDialer
from shared.botclient.ssrf import IPAddress
from shared.config import Settings
from shared.protocol.signing import generate_secret
from tests.support.hostile_server import CAP, hostile_server

SECRET = generate_secret()


async def _turns(connection: HttpBotConnection, count: int, pause_s: float = 0.0) -> list[Any]:
    replies = []
    for turn in range(count):
        replies.append(
            await connection.turn(
                match_id="m", game="g", player=0, turn=turn, timeout_ms=1000, observation={}
            )
        )
        await asyncio.sleep(pause_s)
    return replies


def test_open_resolves_once_and_every_connection_goes_to_the_checked_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`bot.test` resolves to 127.0.0.1 when the connection is opened; the bot closes the
    connection after every answer, so each turn connects again: to the same address, the Host
    header still naming the bot, and without asking the resolver again."""
    asked: list[str] = []

    async def resolver(host: str, _port: int, _timeout_s: float) -> list[IPAddress]:
        asked.append(host)
        return [ipaddress.ip_address("127.0.0.1")]

    monkeypatch.setattr(bot_http, "resolver_for", lambda _settings: resolver)
    settings = Settings(dev_mode=True, secret_key=SecretStr("k"), bot_networks=["127.0.0.0/8"])
    with hostile_server() as server:

        async def play() -> list[Any]:
            connection = await HttpBotConnection.open(
                f"http://bot.test:{server.port}/close_after_answer", SECRET, settings
            )
            async with connection:
                return await _turns(connection, 3, pause_s=0.03)

        replies = asyncio.run(play())
        seen = server.seen["close_after_answer"]
    assert [reply.ok for reply in replies] == [True, True, True]
    assert asked == ["bot.test"]
    assert seen.connections == 3
    assert all(f"host: bot.test:{server.port}\r\n".encode() in head for head in seen.requests)


def test_one_connection_carries_every_turn_while_the_bot_keeps_it_alive() -> None:
    with hostile_server() as server:

        async def play() -> list[Any]:
            transport = Http1Transport(TcpDialer("127.0.0.1", server.port))
            url = f"http://127.0.0.1:{server.port}/ok"
            async with HttpBotConnection(url, SECRET, transport, max_response_bytes=CAP) as connection:
                return await _turns(connection, 20)

        assert all(reply.ok for reply in asyncio.run(play()))
        assert server.seen["ok"].connections == 1


def test_an_idle_connection_past_its_expiry_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1, "KEEPALIVE_EXPIRY_S", 0.05)
    with hostile_server() as server:

        async def play() -> list[Any]:
            transport = Http1Transport(TcpDialer("127.0.0.1", server.port))
            url = f"http://127.0.0.1:{server.port}/ok"
            async with HttpBotConnection(url, SECRET, transport, max_response_bytes=CAP) as connection:
                return await _turns(connection, 3, pause_s=0.1)

        assert all(reply.ok for reply in asyncio.run(play()))
        assert server.seen["ok"].connections == 3


def test_overlapping_requests_each_get_a_connection() -> None:
    """One request per connection at a time: a second turn while the first is waiting opens a
    second connection, and both answers arrive where they belong."""
    with hostile_server() as server:

        async def play() -> tuple[list[Any], list[Any]]:
            transport = Http1Transport(TcpDialer("127.0.0.1", server.port))
            url = f"http://127.0.0.1:{server.port}/ok_split_everywhere"
            async with HttpBotConnection(url, SECRET, transport, max_response_bytes=CAP) as connection:
                together = await asyncio.gather(*(_turns(connection, 1) for _ in range(3)))
                after = await _turns(connection, 3)  # the idle ones are reused
                return [reply for replies in together for reply in replies], after

        together, after = asyncio.run(play())
        assert all(reply.ok for reply in together + after)
        assert server.seen["ok_split_everywhere"].connections == 3
