"""A bot that is a `decide` function in this process (the built-in bots), behind the same turn
interface as a bot over HTTP: used where a match is played locally (`arena play`, the evolver's
evaluation). Built-ins are our own code, so they need no sandbox."""

from __future__ import annotations

import json
import time
from typing import Any

from shared.botclient.http import TurnReply
from shared.games.base import Decide


class InProcessBot:
    """`decide()` on a JSON round trip of the observation (what a bot server would see); an
    exception is a failed turn, as a bot server's error would be."""

    def __init__(self, decide: Decide) -> None:
        self.decide = decide

    async def turn(
        self, *, match_id: str, game: str, player: int, turn: int, timeout_ms: int, observation: Any
    ) -> TurnReply:
        started = time.perf_counter()
        try:
            action = self.decide(json.loads(json.dumps(observation)))
        except Exception as exc:
            return TurnReply(None, (time.perf_counter() - started) * 1000, f"{type(exc).__name__}: {exc}")
        return TurnReply(action, (time.perf_counter() - started) * 1000)
