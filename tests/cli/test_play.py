"""`arena play`: each game between each kind of bot, as a real process with no ARENA_ settings,
no database and no Redis; every replay it writes re-simulates exactly."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shared.games.registry import get_game
from shared.games.replay import resimulate
from tests.support.bot_servers import BotServer
from tests.support.cli import BATTLE_CONFIG, BOTS, PODRACING_CONFIG, run_cli
from tests.support.processes import PYTHON

LOOPBACK_ONLY = {"ARENA_BOT_NETWORKS": '["127.0.0.0/8"]'}
"""The HTTP bot lives on loopback; this fence makes sure nothing else could be reached."""


def load(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    replay = json.loads(gzip.decompress(data) if path.name.endswith(".gz") else data)
    assert isinstance(replay, dict)
    return replay


def assert_resimulates(replay: dict[str, Any]) -> None:
    again = json.loads(json.dumps(resimulate(get_game(replay["game"]), replay)))
    assert "truncated" not in replay
    assert again["frames"] == replay["frames"]
    assert again["events"] == replay["events"]
    assert again["result"] == replay["result"]


def test_podracing_builtin_against_a_hosted_file(tmp_path: Path) -> None:
    run = run_cli(
        "play",
        "podracing",
        "builtin:runner",
        str(BOTS / "podracing_decide.py"),
        "--seed",
        "11",
        "--config",
        PODRACING_CONFIG,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "podracing  seed 11" in run.stdout
    for row in ("bot ", "rank ", "score ", "checkpoints ", "collisions ", "timeouts ", "latency p50 ms"):
        assert row in run.stdout
    assert "podracing_decide.py" in run.stdout
    replay = load(tmp_path / "replay-podracing-11.json")
    assert replay["seed"] == 11
    assert replay["config"] == json.loads(PODRACING_CONFIG)
    assert len(replay["turns"]) == replay["result"]["turns"] > 0
    assert_resimulates(replay)


def test_podracing_codingame_script_against_an_http_bot(
    tmp_path: Path, http_bot: Callable[[str, str], BotServer]
) -> None:
    bot = http_bot("podracing", "blocker")
    run = run_cli(
        "play",
        "podracing",
        f"codingame:{BOTS / 'podracing_codingame.py'}",
        bot.url,
        "--seed",
        "12",
        "--config",
        PODRACING_CONFIG,
        "--replay",
        "out/race.json.gz",
        cwd=tmp_path,
        env={"ARENA_BOT_SECRET": bot.secret, **LOOPBACK_ONLY},
    )
    assert run.returncode == 0, run.stderr
    assert "codingame:podracing_codingame.py" in run.stdout
    assert bot.url in run.stdout
    replay = load(tmp_path / "out" / "race.json.gz")
    assert (tmp_path / "out" / "race.json.gz").read_bytes()[:2] == b"\x1f\x8b"
    # The script and the HTTP bot both answered every turn (no default actions played).
    assert all(action is not None for turn in replay["turns"] for action in turn["actions"])
    assert_resimulates(replay)


def test_battle_hosted_file_against_a_builtin_as_json(tmp_path: Path) -> None:
    run = run_cli(
        "play",
        "battle",
        str(BOTS / "battle_decide.py"),
        "builtin:sniper",
        "--seed",
        "13",
        "--config",
        BATTLE_CONFIG,
        "--json",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["game"] == "battle"
    assert result["seed"] == 13
    assert [p["bot"] for p in result["players"]] == ["battle_decide.py", "builtin:sniper"]
    assert {"kills", "deaths", "units_alive"} <= set(result["players"][0]["metrics"])
    assert result["players"][0]["errors"] == 0
    assert result["players"][0]["timeouts"] == 0
    replay = load(tmp_path / result["replay"])
    assert replay["frames"][0]["units"]
    assert len(replay["frames"]) > len(replay["turns"])
    assert_resimulates(replay)


def test_battle_http_bot_against_a_builtin(tmp_path: Path, http_bot: Callable[[str, str], BotServer]) -> None:
    bot = http_bot("battle", "aggressive")
    run = run_cli(
        "play",
        "battle",
        "builtin:defensive",
        bot.url,
        "--secret",
        bot.secret,
        "--seed",
        "14",
        "--config",
        BATTLE_CONFIG,
        "--replay",
        "battle.json",
        cwd=tmp_path,
        env=LOOPBACK_ONLY,
    )
    assert run.returncode == 0, run.stderr
    replay = load(tmp_path / "battle.json")
    assert all(action is not None for turn in replay["turns"] for action in turn["actions"])
    assert_resimulates(replay)


def test_plain_subprocess_backend_warns_in_one_line(tmp_path: Path) -> None:
    """Without bubblewrap (forced here), hosted bots still play, after a one-line warning."""
    run = run_cli(
        "play",
        "podracing",
        str(BOTS / "podracing_decide.py"),
        "builtin:blocker",
        "--sandbox",
        "process",
        "--seed",
        "15",
        "--config",
        '{"laps": 1, "max_turns": 20}',
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        "warning: hosted bots run as plain subprocesses without isolation; run only code you trust"
    ]
    replay = load(tmp_path / "replay-podracing-15.json")
    assert all(turn["actions"][0] is not None for turn in replay["turns"])
    assert_resimulates(replay)


@pytest.mark.skipif(shutil.which("arena", path=str(Path(PYTHON).parent)) is None, reason="not installed")
def test_the_console_script_is_installed(tmp_path: Path) -> None:
    import subprocess

    arena = shutil.which("arena", path=str(Path(PYTHON).parent))
    assert arena is not None
    done = subprocess.run([arena, "play", "--help"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "builtin:NAME" in done.stdout
    assert "codingame:FILE" in done.stdout


@pytest.mark.slow
def test_invalid_actions_are_shown_with_what_the_bot_sent_and_what_was_expected(tmp_path: Path) -> None:
    """A decide bot that sends one pod with a word for a thrust, and a CodinGame script whose second
    line is not an order: each sample names the problem, shows the action and the expected form."""
    one_pod = tmp_path / "one_pod.py"
    one_pod.write_text(
        'def decide(observation):\n    return {"pods": [{"x": 8000, "y": 4500, "thrust": "fast"}]}\n'
    )
    chatty = tmp_path / "chatty.py"
    chatty.write_text(
        "laps = int(input())\n"
        "for _ in range(int(input())):\n"
        "    input()\n"
        "while True:\n"
        "    for _ in range(4):\n"
        "        input()\n"
        '    print("8000 4500 100")\n'
        '    print("hello there")\n'
    )
    run = run_cli(
        "play", "podracing", str(one_pod), f"codingame:{chatty}", "--seed", "3",
        "--config", '{"laps": 1, "max_turns": 5}', cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    decide_samples = [line for line in lines if line.startswith("player 0 (one_pod.py) turn ")]
    assert len(decide_samples) == 3, run.stdout  # samples shown, not all five turns
    assert decide_samples[0] == (
        "player 0 (one_pod.py) turn 0: invalid action ('pods' has 1 entries instead of 2; "
        "pod 0: thrust is neither a number, BOOST nor SHIELD); "
        'sent {"pods":[{"x":8000,"y":4500,"thrust":"fast"}]}'
    ), run.stdout
    assert 'player 0 (one_pod.py) expected an action like {"pods": [{"x": 8000' in run.stdout
    script_sample = next(line for line in lines if line.startswith("player 1 (codingame:chatty.py) turn 0"))
    assert "invalid action (pod 1: pod entry is not an object)" in script_sample, script_sample
    assert "got 'hello there'" in script_sample, script_sample
    assert "player 1 (codingame:chatty.py) expected 2 lines a turn, one per pod: 'X Y thrust" in run.stdout

    as_json = run_cli(
        "play", "podracing", str(one_pod), "builtin:runner", "--seed", "3",
        "--config", '{"laps": 1, "max_turns": 2}', "--json", cwd=tmp_path,
    )  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    samples = json.loads(as_json.stdout)["players"][0]["invalid_samples"]
    assert [s["turn"] for s in samples] == [0, 1]
    assert samples[0]["problems"][0] == "'pods' has 1 entries instead of 2"
