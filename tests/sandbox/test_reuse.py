"""A worker keeps a hosted bot's sandbox between that bot's matches (shared/sandbox/reuse.py).

Each "match" here is what the runner does: acquire a sandbox, play turns through the runner's own
client frozen between turns, release it, all inside one asyncio.run, so a kept sandbox must
outlive the event loop (and executor) of the match that started it. The bot counts its calls in
a module global, so whether the next match sees a fresh module is visible in its answers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from shared.botclient import HttpBotConnection
from shared.config import Settings
from shared.protocol.signing import generate_secret
from shared.sandbox.backends import SandboxedBot
from shared.sandbox.cgroups import CgroupVersion, detect
from shared.sandbox.reuse import SandboxKeeper
from shared.sandbox.turns import FrozenBetweenTurns
from tests.support.sandbox import requires_bwrap

pytestmark = [
    requires_bwrap,
    pytest.mark.skipif(detect() is None, reason="reuse needs cgroups (task counts, freezing)"),
]

COUNTING_BOT = """
import threading
import time

CALLS = 0


def decide(observation):
    global CALLS
    CALLS += 1
    if observation == "raise":
        raise RuntimeError("a bug in the bot")
    if observation == "thread":
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    return {"calls": CALLS}
"""


@pytest.fixture
def keeper() -> Iterator[SandboxKeeper]:
    sandboxes = SandboxKeeper()
    yield sandboxes
    sandboxes.close_all()


def _settings(**overrides: Any) -> Settings:
    return Settings(sandbox_backend="bwrap", **overrides)


async def _match(
    keeper: SandboxKeeper,
    settings: Settings,
    secret: str,
    match_id: str,
    observations: list[Any],
    source: str,
) -> tuple[SandboxedBot, list[Any]]:
    bot = await keeper.acquire(source, secret=secret, contract="decide", game="podracing", settings=settings)
    assert bot.start_error is None, bot.start_error
    http = HttpBotConnection.over_unix_socket(bot.socket_path, secret, settings)
    connection = FrozenBetweenTurns(http, bot)
    answers: list[Any] = []
    for turn, observation in enumerate(observations):
        reply = await connection.turn(
            match_id=match_id, game="podracing", player=0, turn=turn, timeout_ms=2000, observation=observation
        )
        answers.append(reply.action["calls"] if reply.ok else reply.error)
    await connection.aclose()
    await keeper.release(bot, clean=connection.clean, settings=settings)
    return bot, answers


def play(
    keeper: SandboxKeeper,
    settings: Settings,
    secret: str,
    match_id: str,
    observations: list[Any],
    source: str = COUNTING_BOT,
) -> tuple[SandboxedBot, list[Any]]:
    """One match in an event loop of its own, as a worker's task plays it."""
    return asyncio.run(_match(keeper, settings, secret, match_id, observations, source))


def _frozen(bot: SandboxedBot) -> bool:
    group = bot.cgroup
    assert group is not None
    if group.support.version is CgroupVersion.V1:
        state = (group.runner_group or group.dirs["freezer"]) / "freezer.state"
        return state.read_text().strip() in ("FROZEN", "FREEZING")
    return (group.dirs["unified"] / "cgroup.freeze").read_text().strip() == "1"


def test_a_clean_sandbox_serves_the_bots_next_match_frozen_in_between_with_a_fresh_module(
    keeper: SandboxKeeper, secret: str
) -> None:
    settings = _settings()
    first, answers = play(keeper, settings, secret, "match-1", [None, None, None])
    assert answers == [1, 2, 3]
    assert keeper.waiting() == 1
    assert first.alive
    assert _frozen(first)
    cpu_before = first.cgroup.cpu_usage_s() if first.cgroup else 0.0
    time.sleep(0.3)
    assert first.cgroup is not None
    assert first.cgroup.cpu_usage_s() - cpu_before < 0.02

    second, answers = play(keeper, settings, secret, "match-2", [None, None])
    assert second is first, "the kept sandbox was not handed out"
    assert second.pid == first.pid, "the kept sandbox was not handed out"
    assert answers == [1, 2], "the module's state carried over from the previous match"
    assert (keeper.starts, keeper.reuses) == (1, 1)
    assert second.matches == 2


def test_another_secret_or_code_gets_a_sandbox_of_its_own(keeper: SandboxKeeper, secret: str) -> None:
    settings = _settings()
    first, _ = play(keeper, settings, secret, "match-1", [None])
    other_secret, _ = play(keeper, settings, generate_secret(), "match-2", [None])
    other_code, _ = play(keeper, settings, secret, "match-3", [None], COUNTING_BOT + "\n# another version\n")
    assert len({first.pid, other_secret.pid, other_code.pid}) == 3
    assert keeper.starts == 3
    assert keeper.waiting() == 3


def test_a_sandbox_whose_bot_failed_a_turn_is_stopped(keeper: SandboxKeeper, secret: str) -> None:
    settings = _settings()
    bot, answers = play(keeper, settings, secret, "match-1", [None, "raise", None])
    assert "a bug in the bot" in answers[1]
    assert keeper.waiting() == 0
    assert not bot.alive
    again, _ = play(keeper, settings, secret, "match-2", [None])
    assert again is not bot
    assert keeper.starts == 2


def test_a_sandbox_with_a_thread_left_running_is_stopped(keeper: SandboxKeeper, secret: str) -> None:
    settings = _settings()
    bot, answers = play(keeper, settings, secret, "match-1", [None, "thread", None])
    assert answers == [1, 2, 3]
    assert keeper.waiting() == 0
    assert not bot.alive


def test_a_sandbox_plays_at_most_the_configured_matches(keeper: SandboxKeeper, secret: str) -> None:
    settings = _settings(sandbox_reuse_matches=2)
    first, _ = play(keeper, settings, secret, "match-1", [None])
    second, _ = play(keeper, settings, secret, "match-2", [None])
    assert second is first
    assert keeper.waiting() == 0
    assert not first.alive
    third, _ = play(keeper, settings, secret, "match-3", [None])
    assert third is not first
    assert keeper.starts == 2


def test_one_match_per_sandbox_when_reuse_is_off(keeper: SandboxKeeper, secret: str) -> None:
    settings = _settings(sandbox_reuse_matches=1)
    first, _ = play(keeper, settings, secret, "match-1", [None])
    assert keeper.waiting() == 0
    assert not first.alive


def test_waiting_sandboxes_are_stopped_when_they_expire_or_exceed_the_limit(
    keeper: SandboxKeeper, secret: str
) -> None:
    settings = _settings(sandbox_reuse_idle=1, sandbox_reuse_idle_s=1.0)
    first, _ = play(keeper, settings, secret, "match-1", [None])
    second, _ = play(keeper, settings, generate_secret(), "match-2", [None])
    assert keeper.waiting() == 1, "no more than sandbox_reuse_idle wait"
    assert not first.alive, "the longest-waiting one goes first"
    assert second.alive, "the newer one stays"
    deadline = time.monotonic() + 10
    while second.alive and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not second.alive, "an expired sandbox was left running"
    assert keeper.waiting() == 0, "an expired sandbox was left running"
