"""The static gate: every problem is reported, with its line, in words an author can act on."""

from __future__ import annotations

import textwrap

import pytest

from shared.sandbox.gate import ALLOWED_MODULES, Problem, check_source

GOOD_DECIDE = textwrap.dedent(
    '''
    """A fine bot."""
    import math
    from collections import deque

    SPEED = 100
    TARGETS = [(1, 2), (3, 4)]
    HALF = SPEED / 2 + math.pi

    class Memory:
        def __init__(self):
            self.seen = deque()

    def init(config):
        pass

    def decide(observation):
        return {"thrust": SPEED}

    if __name__ == "__main__":
        print(decide({}))
    '''
)


def test_good_decide_bot_passes() -> None:
    assert check_source(GOOD_DECIDE) == []


def test_codingame_script_with_top_level_loop_passes() -> None:
    source = textwrap.dedent(
        """
        import sys, math
        laps = int(input())
        while True:
            x, y = [int(v) for v in input().split()]
            print(x, y, 100)
            print("debug", file=sys.stderr, flush=True)
        """
    )
    assert check_source(source, contract="codingame") == []


def test_every_problem_is_listed_with_its_line() -> None:
    source = textwrap.dedent(
        """\
        import os
        import math, subprocess
        from socket import socket
        x = open("/etc/passwd")
        def decide(observation):
            eval("1+1")
            y = ().__class__.__subclasses__()
            z = decide.__globals__
            __import__("os")
            getattr(observation, "__dict__")
            return sys.modules
        """
    )
    problems = check_source(source)
    by_line = {p.line: p.message for p in problems}
    assert all(isinstance(p, Problem) for p in problems)
    assert "import of 'os' is not allowed" in by_line[1]
    assert "import of 'subprocess'" in by_line[2]
    assert "import of 'socket'" in by_line[3]
    assert [p for p in problems if p.line == 4 and "'open' is not allowed" in p.message]
    assert [p for p in problems if p.line == 4 and "top-level assignments must be constants" in p.message]
    assert "'eval' is not allowed" in by_line[6]
    assert [p for p in problems if p.line == 7 and "'__subclasses__'" in p.message]
    assert [p for p in problems if p.line == 7 and "'__class__'" in p.message]
    assert "'__globals__'" in by_line[8]
    assert "'__import__'" in by_line[9]
    assert "getattr() with '__dict__'" in by_line[10]
    assert "sys.modules" in by_line[11]
    assert [p.line for p in problems] == sorted(p.line for p in problems)


def test_decide_contract_rejects_top_level_code_and_missing_decide() -> None:
    source = "import math\nprint('hi')\nfor i in range(3):\n    pass\nvalue = math.sqrt(2)\n"
    problems = check_source(source)
    messages = [(p.line, p.message) for p in problems]
    assert any(line == 2 and "top-level statement 'Expr'" in m for line, m in messages), messages
    assert any(line == 3 and "top-level statement 'For'" in m for line, m in messages), messages
    assert any(line == 5 and "constants" in m for line, m in messages), messages
    assert any("must define a top-level function decide(observation)" in m for _, m in messages), messages


def test_input_belongs_to_the_codingame_contract() -> None:
    source = "def decide(observation):\n    return input()\n"
    assert check_source(source)[0].message.startswith("'input' is for the codingame contract")
    assert check_source("print(input())\n", contract="codingame") == []


def test_dangerous_calls_are_refused_in_codingame_scripts_too() -> None:
    problems = check_source("import os\nexec('x')\nwhile True:\n    pass\n", contract="codingame")
    assert [p.line for p in problems] == [1, 2]


def test_syntax_error_reports_its_position() -> None:
    problems = check_source("def decide(observation):\n    return (\n")
    assert len(problems) == 1
    assert problems[0].line in (2, 3)
    assert problems[0].message.startswith("syntax error")


def test_size_limit_is_configurable() -> None:
    source = "def decide(o):\n    return 1\n" + "#" * 200 + "\n"
    assert check_source(source) == []
    problems = check_source(source, max_chars=100)
    assert len(problems) == 1
    assert "limit is 100" in problems[0].message


def test_null_bytes_and_unknown_contract() -> None:
    assert "null bytes" in check_source("x = 1\0")[0].message
    with pytest.raises(ValueError, match="unknown contract 'other'"):
        check_source("x = 1", contract="other")


def test_allow_list_is_documented_size() -> None:
    assert {"math", "random", "collections", "heapq", "json", "sys"} <= ALLOWED_MODULES
    assert not {"os", "subprocess", "socket", "ctypes", "importlib", "builtins"} & ALLOWED_MODULES


def test_constant_docstrings_and_type_aliases_are_allowed_but_calls_in_them_are_not() -> None:
    source = textwrap.dedent(
        '''
        """A bot."""
        from typing import Any

        Obs = dict[str, Any]
        RANGE = 12.0
        """How far the sensor sees."""

        def decide(observation: Obs) -> dict:
            return {}
        '''
    )
    assert check_source(source) == []
    sneaky = source + "\nTABLE = dict[print('hi'), int]\n"
    problems = check_source(sneaky)
    table_line = sneaky.splitlines().index("TABLE = dict[print('hi'), int]") + 1
    assert [p.line for p in problems] == [table_line], problems
