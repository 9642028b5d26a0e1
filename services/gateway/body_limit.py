"""Rejects request bodies over a size limit with 413 before they are read into memory."""

from __future__ import annotations

import json
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(HTTPException):
    """Raised while streaming a body without Content-Length; FastAPI passes HTTPExceptions through."""

    def __init__(self, detail: str) -> None:
        super().__init__(413, detail)


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await self._reply(send, 400, "Content-Length is not a number")
                return
            if size > self.max_bytes:
                await self._reply(send, 413, self._message(size))
                return
        received = 0
        response_started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self._message(received))
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not response_started:
                await self._reply(send, 413, self._message(received))

    def _message(self, size: int) -> str:
        return f"request body of {size} bytes exceeds the limit of {self.max_bytes} bytes"

    @staticmethod
    async def _reply(send: Send, status: int, detail: str) -> None:
        await reply_json(send, status, {"detail": detail})


async def reply_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    """A whole JSON response sent from middleware, before any endpoint has run."""
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
