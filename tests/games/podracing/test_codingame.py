"""The CodinGame text adapter, including an unchanged CodinGame script run as a subprocess."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from shared.games.podracing import codingame
from shared.games.podracing.bots import naive
from shared.games.podracing.codingame import CodinGameProcess, init_lines, parse_output, turn_lines
from shared.games.podracing.game import PodracingGame, PodracingMatch

GAME = PodracingGame()

CODINGAME_SCRIPT = textwrap.dedent(
    """
    import sys
    import math

    laps = int(input())
    checkpoint_count = int(input())
    checkpoints = [tuple(map(int, input().split())) for _ in range(checkpoint_count)]
    turn = 0
    while True:
        pods = [list(map(int, input().split())) for _ in range(4)]
        print("turn", turn, "laps", laps, file=sys.stderr)
        for x, y, vx, vy, angle, next_id in pods[:2]:
            cx, cy = checkpoints[next_id]
            thrust = "BOOST" if turn == 3 else 100
            print(f"{cx - 3 * vx} {cy - 3 * vy} {thrust} go {next_id}")
        turn += 1
    """
)


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_text_lines_match_the_codingame_protocol() -> None:
    match = GAME.create_match(6, {})
    assert isinstance(match, PodracingMatch)
    observation = match.observation(1)
    init = init_lines(observation)
    count = len(match.race.checkpoints)
    assert init[:2] == ["3", str(count)]
    assert len(init) == count + 2
    assert init[2] == "{} {}".format(*match.race.checkpoints[0])
    lines = turn_lines(observation)
    assert len(lines) == 4
    pod2 = match.race.pods[2]
    assert lines[0] == f"{int(pod2.x)} {int(pod2.y)} 0 0 -1 1"  # own pods first, angle -1 at start
    pod0 = match.race.pods[0]
    assert lines[2] == f"{int(pod0.x)} {int(pod0.y)} 0 0 -1 1"


def test_parse_output_is_tolerant() -> None:
    action = parse_output(["100 200 BOOST hello there", "1.5 -7 shield"])
    assert action == {
        "pods": [
            {"x": 100, "y": 200, "thrust": "BOOST", "message": "hello there"},
            {"x": 1.5, "y": -7, "thrust": "SHIELD"},
        ]
    }
    action = parse_output(["100 200 fast", "nan 3 50"])
    assert action["pods"] == [None, None]
    assert len(action["errors"]) == 2
    action = parse_output(["5 6 70"])
    assert action["pods"] == [{"x": 5, "y": 6, "thrust": 70}, None]
    assert action["errors"] == ["pod 1: no line"]
    assert parse_output(["1 2 3 " + "m" * 100, "1 2 3"])["pods"][0]["message"] == "m" * 64


def test_unchanged_codingame_script_plays_a_match(tmp_path: Path) -> None:
    script = _write(tmp_path, "bot.py", CODINGAME_SCRIPT)
    match = GAME.create_match(6, {})
    assert isinstance(match, PodracingMatch)
    with CodinGameProcess(script, python=sys.executable, timeout=5.0) as bot:
        for turn in range(15):
            action = bot.decide(match.observation(0))
            assert action is not None, bot.stderr
            assert bot.last_errors == []
            assert action["pods"][0]["message"].startswith("go ")
            step = match.step([action, naive(match.observation(1))])
            if turn == 3:
                assert [e.player for e in step.events if e.kind == "boost"] == [0, 0]
        assert bot.alive
        # stderr is read by a thread: give it a moment to catch up with the last answer.
        deadline = time.monotonic() + 5.0
        while not any(line.startswith("turn 14") for line in bot.stderr) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert any(line.startswith("turn 14") for line in bot.stderr)
    assert not bot.alive
    assert match.result().players[0].metrics["invalid_actions"] == 0
    cp1 = match.race.checkpoints[1]
    pod = match.race.pods[0]
    assert pod.checkpoints_passed > 1 or (pod.x - cp1[0]) ** 2 + (pod.y - cp1[1]) ** 2 < 3000**2


@pytest.mark.parametrize(
    ("body", "expected_errors"),
    [
        ("import time\nwhile True:\n    input()\n    time.sleep(10)\n", None),
        ("raise SystemExit(1)\n", None),
        ("while True:\n    input()\n    print('oops')\n    print('1 2 3')\n", 1),
    ],
)
def test_silent_dead_or_rude_scripts_do_not_hang(
    tmp_path: Path, body: str, expected_errors: int | None
) -> None:
    script = _write(tmp_path, "bad.py", body)
    match = GAME.create_match(6, {})
    with CodinGameProcess(script, timeout=0.3, first_timeout=1.0) as bot:
        action = bot.decide(match.observation(0))
        if expected_errors is None:
            assert action is None
        else:
            assert action is not None
            assert len(bot.last_errors) == expected_errors
            match.step([action, None])
            assert match.result().players[0].metrics["invalid_actions"] == 1


def test_adapter_is_standard_library_only() -> None:
    source = Path(codingame.__file__).read_text()
    assert "from shared" not in source
    assert "import shared" not in source
    imports = {
        line.split()[1].split(".")[0] for line in source.splitlines() if line.startswith(("import ", "from "))
    }
    assert imports <= set(sys.stdlib_module_names) | {"__future__"}


SLOW_ONCE_SCRIPT = """
import time
laps = int(input())
count = int(input())
for _ in range(count):
    input()
turn = 0
while True:
    for _ in range(4):
        input()
    turn += 1
    if turn == 2:
        time.sleep(0.8)
    print(turn, turn, 50)
    print(turn, turn, 50)
"""


def test_a_late_answer_is_dropped_not_shifted_onto_the_next_turn(tmp_path: Path) -> None:
    """A turn that times out must not make every later turn read the previous turn's answer."""
    script = _write(tmp_path, "slow_once.py", SLOW_ONCE_SCRIPT)
    match = PodracingGame().create_match(3, {})
    with CodinGameProcess(script, timeout=0.3, first_timeout=5.0) as bot:
        answers = [bot.decide(match.observation(0)) for _ in range(6)]
    assert answers[1] is None, "turn 2 answered after the timeout and must count as no answer"
    assert answers[-1] is not None, "the script caught up and must be heard again"
    for turn, answer in enumerate(answers, start=1):
        if answer is not None:
            assert answer["pods"][0]["x"] == turn, (
                f"turn {turn} got the answer to turn {answer['pods'][0]['x']}"
            )
