"""Nothing of a hosted bot runs between its turns: its sandbox is frozen except while a request
to it (a turn or a health check) is in flight.

`FrozenBetweenTurns` wraps the HttpBotConnection the match runner uses for a hosted bot and
thaws the sandbox's cgroup around each request, so threads or children a bot leaves behind after
answering get no CPU until its next turn (where they share that turn's time and CPU quota).
Without cgroups (no freezer) it passes requests straight through; such sandboxes cannot create
processes at all.
"""

from __future__ import annotations

from typing import Any

from shared.botclient import HttpBotConnection, TurnReply
from shared.sandbox.backends import SandboxedBot


class FrozenBetweenTurns:
    """A TurnClient for a hosted bot: the connection's methods, with the sandbox thawed only while
    one is in flight. Requests may overlap; the sandbox freezes when the last one ends."""

    def __init__(self, connection: HttpBotConnection, sandbox: SandboxedBot) -> None:
        self.connection = connection
        self.sandbox = sandbox
        self.clean = True
        """Every request so far got a usable answer: the sandbox may serve another match
        (shared.sandbox.reuse)."""
        self._in_flight = 0
        sandbox.freeze()

    def _begin(self) -> None:
        if self._in_flight == 0:
            self.sandbox.thaw()
        self._in_flight += 1

    def _end(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self.sandbox.freeze()

    async def turn(self, **request: Any) -> TurnReply:
        self._begin()
        reply: TurnReply | None = None
        try:
            reply = await self.connection.turn(**request)
            return reply
        finally:
            self._end()
            if reply is None or not reply.ok:
                self.clean = False

    async def health(self, timeout_s: float) -> None:
        self._begin()
        healthy = False
        try:
            await self.connection.health(timeout_s)
            healthy = True
        finally:
            self._end()
            if not healthy:
                self.clean = False

    async def aclose(self) -> None:
        await self.connection.aclose()
