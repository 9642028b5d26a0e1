"""Talking to a sandboxed hosted bot: signed protocol-v1 turns over its Unix socket."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path
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


OWN_HOST = "import sys\nfrom shared.sandbox import cgroups\ncgroups.host_tag = lambda: sys.argv[1]\n"
"""The start of a `python -c` script that owns sandboxes as the host its first argument names (the
sandbox tests' `own_host_tag` fixture)."""


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


def _pod(x: float, y: float, nxt: int = 1) -> dict[str, Any]:
    return {
        "x": x,
        "y": y,
        "vx": 0,
        "vy": 0,
        "angle": 0,
        "next_checkpoint": nxt,
        "checkpoints_passed": 0,
        "boost_available": True,
        "shield_cooldown": 0,
    }


PODRACING_OBSERVATION: dict[str, Any] = {
    "turn": 0,
    "player": 0,
    "laps": 3,
    "checkpoint_count": 3,
    "checkpoints": [[1000, 1000], [8000, 2000], [5000, 7000]],
    "max_thrust": 100,
    "pods": [_pod(1000, 1200), _pod(1000, 800)],
    "opponents": [_pod(1100, 1500), _pod(1100, 500)],
}
"""A podracing turn early in a race: what the example bots and hosted scripts are asked."""


def wait_listening(path: Path, process: subprocess.Popen[Any], timeout: float = 10.0) -> None:
    """Wait until `process` accepts connections on the Unix socket `path`. The file appears when the
    socket is bound, a moment before the server listens on it: until then a connection is refused."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode} before listening on {path}")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.connect(str(path))
            return
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise AssertionError(f"nothing listens on {path} after {timeout} s") from None
            time.sleep(0.02)


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
