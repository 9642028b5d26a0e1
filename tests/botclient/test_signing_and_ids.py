"""What the runner's requests carry: the deprecated v1 signature entry only while the setting keeps
it (never for hosted bots), a message id that no other request of any connection shares, and the
previous httpx client when the setting asks for it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from pydantic import SecretStr

from shared.botclient import HttpBotConnection
from shared.botclient.httpx_client import HttpxTransport
from shared.config import Settings
from shared.protocol.signing import generate_secret
from tests.support import hostile_server as scripted
from tests.support.hostile_server import hostile_server

SECRET = generate_secret()
ID = re.compile(rb"\r\nwebhook-id: ([^\r]*)\r\n")
SIGNATURE = re.compile(rb"\r\nwebhook-signature: ([^\r]*)\r\n")


def settings(**changes: object) -> Settings:
    return Settings(dev_mode=True, secret_key="k", bot_networks=["127.0.0.0/8"], **changes)  # type: ignore[arg-type]


async def _one_turn(connection: HttpBotConnection, turn: int = 0) -> None:
    async with connection:
        reply = await connection.turn(
            match_id="m", game="podracing", player=0, turn=turn, timeout_ms=2000, observation={}
        )
        assert reply.ok, reply


def _versions(head: bytes) -> list[str]:
    match = SIGNATURE.search(head)
    assert match is not None
    return [entry.split(b",")[0].decode() for entry in match.group(1).split()]


def test_v1_entries_follow_the_setting_and_hosted_bots_get_v2_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings(secret_key=SecretStr("k")).sign_legacy_v1, (
        "the v1 deprecation has not ended: on by default"
    )
    monkeypatch.setitem(scripted.CASES, "turn", scripted.CASES["ok"])  # what a hosted bot is asked
    with hostile_server(unix_path=str(tmp_path / "bot.sock")) as server:
        for legacy in (True, False):
            url = f"http://127.0.0.1:{server.port}/ok"

            async def over_tcp(legacy: bool = legacy, url: str = url) -> None:
                await _one_turn(await HttpBotConnection.open(url, SECRET, settings(sign_legacy_v1=legacy)))

            asyncio.run(over_tcp())
        assert server.unix_path is not None
        hosted = HttpBotConnection.over_unix_socket(server.unix_path, SECRET, settings(sign_legacy_v1=True))
        asyncio.run(_one_turn(hosted))
    assert [_versions(head) for head in server.seen["ok"].requests] == [["v2", "v1"], ["v2"]]
    assert [_versions(head) for head in server.seen["turn"].requests] == [["v2"]]


def test_message_ids_are_unique_across_connections_and_never_repeat() -> None:
    """Two connections of the same match, turn and player (a retried match, a bot playing itself):
    ids follow the documented shape, one random part per connection and a count per request."""
    with hostile_server() as server:

        async def play() -> None:
            connections = [
                await HttpBotConnection.open(f"http://127.0.0.1:{server.port}/ok", SECRET, settings())
                for _ in range(2)
            ]
            for connection in connections:
                async with connection:
                    with pytest.raises(Exception, match="status"):  # the scripted answer is a turn's
                        await connection.health(2.0)
                    for turn in (0, 0, 1):
                        reply = await connection.turn(
                            match_id="m-7", game="g", player=1, turn=turn, timeout_ms=2000, observation={}
                        )
                        assert reply.ok

        asyncio.run(play())
        ids = [ID.search(head).group(1).decode() for head in server.seen["ok"].requests]  # type: ignore[union-attr]
    assert len(ids) == 8, ids
    assert len(set(ids)) == 8, ids
    shape = re.compile(r"(?:health|m-7-[01]-1)-([0-9a-f]{16})([0-9a-f]+)")
    parts = [shape.fullmatch(msg_id) for msg_id in ids]
    assert all(parts), ids
    prefixes = [part.group(1) for part in parts if part]
    assert prefixes[:4] == [prefixes[0]] * 4
    assert prefixes[4:] == [prefixes[4]] * 4
    assert prefixes[0] != prefixes[4]
    assert [int(part.group(2), 16) for part in parts if part] == [0, 1, 2, 3] * 2


def test_the_previous_client_is_used_when_the_setting_asks_for_it() -> None:
    with hostile_server() as server:

        async def play() -> HttpBotConnection:
            url = f"http://127.0.0.1:{server.port}/ok"
            connection = await HttpBotConnection.open(url, SECRET, settings(bot_client="httpx"))
            await _one_turn(connection)
            return connection

        connection = asyncio.run(play())
    assert isinstance(connection._transport, HttpxTransport)
