"""tests/bots/misbehaving_bot.py as a real process on loopback: a bot that answers well, or badly
in a chosen way (`mode`), and counts what it was asked."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from shared.ports import free_port
from shared.protocol.signing import generate_secret
from tests.support.environment import ROOT
from tests.support.processes import PYTHON, ManagedProcess

BOT_SCRIPT = str(ROOT / "tests" / "bots" / "misbehaving_bot.py")


@dataclass
class RunningBot:
    process: ManagedProcess
    port: int
    secret: str
    mode: str

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stats(self) -> dict[str, int]:
        stats = httpx.get(self.endpoint + "/stats", timeout=2).json()
        assert isinstance(stats, dict), stats
        return {str(key): int(count) for key, count in stats.items()}


def start_bot(mode: str = "ok", *extra: str) -> RunningBot:
    port = free_port()
    secret = generate_secret()
    process = ManagedProcess(
        [PYTHON, BOT_SCRIPT, "--port", str(port), "--mode", mode, *extra],
        f"bot-{mode}",
        env={"ARENA_BOT_SECRET": secret},
    )
    bot = RunningBot(process, port, secret, mode)
    process.wait_http(bot.endpoint + "/stats", timeout=15)
    return bot
