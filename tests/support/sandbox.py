"""Talking to a sandboxed hosted bot: signed protocol-v1 turns over its Unix socket."""

from __future__ import annotations

import json
import shutil
import uuid
from typing import Any, Protocol, TypedDict, Unpack

import httpx
import pytest

from shared.protocol.signing import Signer
from shared.sandbox.backends import Backend, SandboxedBot
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.uids import SandboxUids

requires_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"
)


class HostedOptions(TypedDict, total=False):
    """SandboxedBot's options a test may set (its defaults otherwise: a decide bot, bwrap)."""

    contract: str
    game: str | None
    backend: str | Backend
    dev_mode: bool
    uids: SandboxUids | None


class StartHosted(Protocol):
    """The sandbox tests' `hosted` fixture: starts a hosted bot, closed at the end of the test."""

    def __call__(
        self, source: str, limits: SandboxLimits | None = None, **options: Unpack[HostedOptions]
    ) -> SandboxedBot: ...


def turn_body(observation: Any, *, turn: int = 0, game: str = "test") -> bytes:
    return json.dumps(
        {
            "protocol": 1,
            "match_id": "m-1",
            "game": game,
            "player": 0,
            "turn": turn,
            "timeout_ms": 1000,
            "observation": observation,
        }
    ).encode()


def post_turn(
    socket_path: str,
    secret: str,
    observation: Any,
    *,
    timeout: float = 5.0,
    turn: int = 0,
    game: str = "test",
) -> httpx.Response:
    body = turn_body(observation, turn=turn, game=game)
    headers = Signer(secret).headers(f"m-1-{turn}-{uuid.uuid4().hex}", body, method="POST", path="/turn")
    headers["content-type"] = "application/json"
    transport = httpx.HTTPTransport(uds=socket_path, verify=False)
    with httpx.Client(transport=transport, timeout=timeout) as client:
        return client.post("http://bot/turn", content=body, headers=headers)


def ask(bot: SandboxedBot, secret: str, observation: Any = None, *, timeout: float = 5.0) -> Any:
    """One turn; the action, or a string describing how the turn failed (never raises)."""
    try:
        response = post_turn(bot.socket_path, secret, observation or {}, timeout=timeout)
    except httpx.HTTPError as exc:
        return f"<{type(exc).__name__}: {exc}>"
    if response.status_code != 200:
        return f"<HTTP {response.status_code}: {response.text[:300]}>"
    return response.json()["action"]
