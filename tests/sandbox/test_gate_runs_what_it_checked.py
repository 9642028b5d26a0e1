"""What runs is what the gate checked: a coding cookie must not change the code in the sandbox.

The gate reads the source as text; a sandbox that imported the file would honour a
`# coding: utf-7` line and turn a comment the gate saw into code Python ran (`+AAo-` is a newline
in UTF-7). The gate is bypassed here on purpose (code goes straight to the sandbox, like the attack
suite), to show the sandbox itself runs only the text it was given, for both contracts.
"""

from __future__ import annotations

import textwrap

import pytest

from shared.sandbox.runtime import game_adapter_exists
from tests.support.sandbox import PODRACING_OBSERVATION, StartHosted, ask, post_turn, requires_bwrap

pytestmark = requires_bwrap

HIDDEN_LINE = "# +AAo-HIDDEN = 1\n"
"""A comment as UTF-8 text; in UTF-7 it is a newline followed by `HIDDEN = 1` at the top level."""

COOKIES = ["# coding: utf-7\n", "#!/usr/bin/env python3\n# -*- coding: utf-7 -*-\n"]


def decide_bot(cookie: str) -> str:
    return (
        cookie
        + "HIDDEN = 0\n"
        + HIDDEN_LINE
        + "def decide(observation):\n    return {'hidden_ran': HIDDEN}\n"
    )


def codingame_script(cookie: str) -> str:
    body = textwrap.dedent(
        """\
        laps = int(input())
        count = int(input())
        cps = [input() for _ in range(count)]
        while True:
            lines = [input() for _ in range(4)]
            print(HIDDEN, 0, 100)
            print(HIDDEN, 0, 100)
        """
    )
    return cookie + "HIDDEN = 0\n" + HIDDEN_LINE + body


def test_the_utf7_trick_is_real() -> None:
    """The attack as Python sees it when it honours the cookie: the comment becomes code."""
    encoded = decide_bot(COOKIES[0]).encode("utf-8")
    namespace: dict[str, object] = {}
    exec(compile(encoded, "bot.py", "exec"), namespace)  # bytes honour the cookie
    assert namespace["HIDDEN"] == 1


@pytest.mark.parametrize("cookie", COOKIES, ids=["line-1", "line-2"])
def test_decide_bot_runs_the_text_not_the_cookie(hosted: StartHosted, secret: str, cookie: str) -> None:
    bot = hosted(decide_bot(cookie))
    assert bot.start_error is None, bot.log_tail()
    assert ask(bot, secret, {}) == {"hidden_ran": 0}, bot.log_tail()


@pytest.mark.skipif(not game_adapter_exists("podracing"), reason="no podracing text adapter")
@pytest.mark.parametrize("cookie", COOKIES, ids=["line-1", "line-2"])
def test_codingame_script_runs_the_text_not_the_cookie(hosted: StartHosted, secret: str, cookie: str) -> None:

    bot = hosted(codingame_script(cookie), contract="codingame", game="podracing")
    assert bot.start_error is None, bot.log_tail()
    response = post_turn(bot.socket_path, secret, PODRACING_OBSERVATION, game="podracing")
    assert response.status_code == 200, (response.text, bot.log_tail())
    assert [pod["x"] for pod in response.json()["action"]["pods"]] == [0, 0], bot.log_tail()


def test_a_bot_using_dataclasses_and_enums_loads_from_its_text(hosted: StartHosted, secret: str) -> None:
    """The module is built from text, not imported: dataclasses and enums still find it."""
    from shared.sandbox.gate import check_source

    source = textwrap.dedent(
        """\
        from __future__ import annotations
        import enum
        from dataclasses import dataclass, field

        class Mode(enum.Enum):
            RACE = "race"

        @dataclass
        class Memory:
            mode: Mode = Mode.RACE
            seen: list[int] = field(default_factory=list)

        MEMORY = Memory

        def decide(observation):
            memory = MEMORY()
            memory.seen.append(1)
            return {"mode": memory.mode.value, "seen": memory.seen, "name": __name__}
        """
    )
    assert check_source(source) == []
    bot = hosted(source)
    assert ask(bot, secret, {}) == {"mode": "race", "seen": [1], "name": "bot"}, bot.log_tail()
