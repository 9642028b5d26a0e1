"""Hosted bots end to end: real bubblewrap, real subprocesses, signed turns over the Unix socket."""

from __future__ import annotations

import logging
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from shared.protocol.signing import Signer
from shared.sandbox.backends import SandboxedBot, SandboxError
from shared.sandbox.gate import check_source
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.runtime import game_adapter_exists
from tests.support.sandbox import (
    PODRACING_OBSERVATION,
    StartHosted,
    ask,
    post_turn,
    requires_bwrap,
    turn_body,
)

ROOT = Path(__file__).resolve().parents[2]
ECHO_BOT = textwrap.dedent(
    """
    import math
    seen = []

    def init(config):
        seen.append(config)

    def decide(observation):
        return {"double": observation["n"] * 2, "inits": seen, "pi": round(math.pi, 2)}
    """
)


@requires_bwrap
def test_decide_bot_answers_signed_turns(hosted: StartHosted, secret: str) -> None:
    bot = hosted(ECHO_BOT)
    assert bot.start_error is None
    assert bot.secure
    assert bot.health()
    for n in range(3):
        action = ask(bot, secret, {"n": n})
        assert action["double"] == 2 * n
        assert action["pi"] == 3.14
    assert action["inits"] == [{"game": "test", "player": 0, "match_id": "m-1"}]
    assert bot.status()["backend"] == "bwrap"


NUMPY_BOT = textwrap.dedent(
    """
    import numpy as np
    from numpy import linalg as la

    def decide(observation):
        a = np.array(observation["v"], dtype=np.float64)
        return {"norm": float(la.norm(a)), "dtype": str(a.dtype)}
    """
)


@requires_bwrap
def test_a_decide_bot_imports_numpy_from_the_read_only_packages(hosted: StartHosted, secret: str) -> None:
    """numpy passes the gate and is bound into the sandbox; nothing else of the site-packages is."""
    assert check_source(NUMPY_BOT) == []
    bot = hosted(NUMPY_BOT)
    assert bot.start_error is None, bot.start_error
    assert ask(bot, secret, {"v": [3, 4]}) == {"norm": 5.0, "dtype": "float64"}


@requires_bwrap
def test_unsigned_and_stale_requests_get_401(hosted: StartHosted, secret: str) -> None:
    bot = hosted(ECHO_BOT)
    body = turn_body({"n": 1})
    an_hour_ago = int(time.time()) - 3600
    stale = Signer(secret).headers("old", body, timestamp=an_hour_ago, method="POST", path="/turn")
    with httpx.Client(transport=httpx.HTTPTransport(uds=bot.socket_path), timeout=5) as client:
        assert client.post("http://bot/turn", content=body).status_code == 401
        assert client.get("http://bot/health").status_code == 401
        assert client.post("http://bot/turn", content=body, headers=stale).status_code == 401
    assert ask(bot, secret, {"n": 2})["double"] == 4


@requires_bwrap
def test_broken_bots_look_like_failing_http_bots(hosted: StartHosted, secret: str) -> None:
    crashes_on_load = hosted("raise RuntimeError('nope')\n")
    assert crashes_on_load.start_error
    assert "RuntimeError: nope" in crashes_on_load.start_error
    assert not crashes_on_load.health()
    with pytest.raises(httpx.TransportError):
        post_turn(crashes_on_load.socket_path, secret, {})
    no_decide = hosted("x = 1\n")
    assert no_decide.start_error
    assert "decide" in no_decide.start_error
    raises = hosted("def decide(o):\n    raise KeyError('k')\n")
    assert ask(raises, secret).startswith("<HTTP 500")


@requires_bwrap
def test_kill_restart_and_close_tear_everything_down(hosted: StartHosted, secret: str) -> None:
    forker = textwrap.dedent(
        """
        import os, time
        def decide(o):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            return "parent"
        """
    )
    bot = hosted(forker)
    assert ask(bot, secret) == "parent"
    pid = bot.pid
    bot.kill()
    assert not bot.alive
    assert ask(bot, secret).startswith("<")
    assert bot.restart()
    assert bot.pid != pid
    assert bot.health()
    bot.close()
    bot.close()
    assert not bot.alive
    assert not Path(f"/proc/{pid}").exists()


@requires_bwrap
@pytest.mark.usefixtures("secret")
def test_wall_clock_kills_the_whole_sandbox(hosted: StartHosted) -> None:
    wall_clock_s = 1.0
    bot = hosted(ECHO_BOT, SandboxLimits(wall_clock_s=wall_clock_s))
    # The budget runs from the launch, and on a busy machine the start alone may use it up: count it
    # from now (as a warm pool does when it hands a sandbox out), once the bot serves.
    bot.arm_wall_clock()
    armed = time.monotonic()
    assert bot.health()
    while bot.alive and time.monotonic() < armed + wall_clock_s + 10:
        time.sleep(0.02)
    assert not bot.alive
    assert time.monotonic() - armed >= wall_clock_s, "killed before its wall clock ran out"
    assert not bot.health()


def test_process_backend_is_refused_outside_dev_mode(secret: str) -> None:
    with pytest.raises(SandboxError, match="development mode"):
        SandboxedBot(ECHO_BOT, secret=secret, backend="process", dev_mode=False)


def test_process_backend_in_dev_mode_warns_and_reports_insecure(
    secret: str, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING),
        SandboxedBot(ECHO_BOT, secret=secret, backend="process", dev_mode=True) as bot,
    ):
        assert "INSECURE" in caplog.text
        assert bot.status()["secure"] is False
        assert not bot.secure
        assert ask(bot, secret, {"n": 21})["double"] == 42


@requires_bwrap
@pytest.mark.skipif(
    not game_adapter_exists("podracing"),
    reason="shared/games/podracing/codingame.py (the CodinGame text adapter) does not exist yet",
)
def test_codingame_script_plays_turns_unchanged(hosted: StartHosted, secret: str) -> None:

    script = textwrap.dedent(
        """
        import sys, math
        laps = int(input())
        count = int(input())
        cps = [tuple(map(int, input().split())) for _ in range(count)]
        while True:
            pods = [list(map(int, input().split())) for _ in range(2)]
            others = [input() for _ in range(2)]
            for pod in pods:
                x, y = cps[pod[5]]
                print(x, y, 100)
        """
    )
    bot = hosted(script, contract="codingame", game="podracing")
    assert bot.start_error is None
    for turn in range(3):
        response = post_turn(bot.socket_path, secret, PODRACING_OBSERVATION, turn=turn, game="podracing")
        assert response.status_code == 200, (response.text, bot.log_tail())
        pods = response.json()["action"]["pods"]
        assert [(p["x"], p["y"]) for p in pods] == [(8000, 2000), (8000, 2000)]


@requires_bwrap
def test_warm_pool_hands_out_started_bots_once(secret: str) -> None:
    from shared.sandbox.pool import WarmPool

    pool = WarmPool(per_key=1)
    try:
        pool.prewarm("v1", ECHO_BOT, secret=secret)
        first = pool.acquire("v1", ECHO_BOT, secret=secret)
        assert pool.hits == 1
        assert first.alive
        assert ask(first, secret, {"n": 5})["double"] == 10
        second = pool.acquire("v1", ECHO_BOT, secret=secret)
        assert second is not first
        assert second.alive
        first.close()
        second.close()
    finally:
        pool.close()


@pytest.mark.slow
@requires_bwrap
def test_sandboxes_the_pool_refills_in_the_background_stay_alive(secret: str) -> None:
    """bubblewrap's --die-with-parent follows the thread that started it: a sandbox started by a
    short-lived refill thread was killed when that thread ended, so every second hit was dead."""
    from shared.sandbox.pool import WarmPool

    pool = WarmPool(per_key=1)
    try:
        for n in range(4):
            pool.prewarm("v1", ECHO_BOT, secret=secret)
            bot = pool.acquire("v1", ECHO_BOT, secret=secret)
            time.sleep(0.3)  # let the background refill start (and finish) its sandbox
            assert bot.alive, f"hit {n}: the pooled sandbox was killed ({bot.log_tail()})"
            assert ask(bot, secret, {"n": n})["double"] == 2 * n
            bot.close()
        assert pool.hits == 4
    finally:
        pool.close()
