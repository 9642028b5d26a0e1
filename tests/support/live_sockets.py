"""Reading the gateway's WebSockets in tests: a socket URL, the next message, the close."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

Message = dict[str, Any]


def ws_url(gateway_url: str, path: str) -> str:
    return gateway_url.replace("http://", "ws://", 1) + path


async def receive(socket: ClientConnection, timeout_s: float = 10) -> Message:
    async with asyncio.timeout(timeout_s):
        message: Message = json.loads(await socket.recv())
    return message


async def close_of(socket: ClientConnection, timeout_s: float = 10) -> tuple[int | None, str]:
    """Read until the server closes; the close code and reason."""
    async with asyncio.timeout(timeout_s):
        try:
            while True:
                await socket.recv()
        except ConnectionClosed as closed:
            frame = closed.rcvd
            return (frame.code, frame.reason) if frame else (None, "")
