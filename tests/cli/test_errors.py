"""Every problem is one clear line on stderr with a non-zero exit status, never a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from shared.ports import free_port
from tests.support.cli import BOTS, assert_one_line_error, finish_cli, run_cli, start_cli

CASES = {
    "unknown game": (
        ["play", "chess", "builtin:runner", "builtin:runner"],
        ["unknown game 'chess'", "podracing"],
    ),
    "bad config JSON": (
        ["play", "podracing", "builtin:runner", "builtin:runner", "--config", "{laps: 1"],
        ["--config is not valid JSON"],
    ),
    "config the game refuses": (
        ["play", "podracing", "builtin:runner", "builtin:runner", "--config", '{"laps": 0}'],
        ["invalid --config for podracing", "laps"],
    ),
    "gate failure with line numbers": (
        ["play", "podracing", str(BOTS / "gate_failure.py"), "builtin:runner"],
        ["gate_failure.py fails the static gate with 2 problem(s)", "line 3,", "'os'", "line 7,", "eval"],
    ),
    "unknown built-in": (
        ["play", "battle", "builtin:runner", "builtin:sniper"],
        ["built-in bots: aggressive"],
    ),
    "missing file": (["play", "podracing", "nothere.py", "builtin:runner"], ["'nothere.py': no such file"]),
    "codingame outside podracing": (
        ["play", "battle", f"codingame:{BOTS / 'podracing_codingame.py'}", "builtin:sniper"],
        ["battle has no CodinGame adapter"],
    ),
    "HTTP bot without a secret": (
        ["play", "podracing", "http://127.0.0.1:9", "builtin:runner"],
        ["needs its signing secret", "ARENA_BOT_SECRET"],
    ),
    "wrong number of bots": (["play", "podracing", "builtin:runner"], ["played by 2 bots; got 1"]),
    "usage error": (["play", "podracing"], ["arena play:", "--help"]),
    "not a replay": (["view", str(BOTS / "battle_decide.py")], ["is not a replay"]),
    "unreachable server": (
        ["leaderboard", "podracing", "--url", "http://127.0.0.1:{port}"],
        ["cannot reach the Arena server at http://127.0.0.1:"],
    ),
    "API command without a key": (["bots", "list", "--url", "http://127.0.0.1:{port}"], ["needs an API key"]),
}


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[subprocess.Popen[str], Path]]:
    """Every case's command, started at once (each is a short process; together they are faster)."""
    port = str(free_port())  # nothing listens there
    runs = {}
    for case, (args, _) in CASES.items():
        cwd = tmp_path_factory.mktemp("cli-error")
        runs[case] = (start_cli(*[arg.replace("{port}", port) for arg in args], cwd=cwd), cwd)
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_one_line_error(case: str, started: dict[str, tuple[subprocess.Popen[str], Path]]) -> None:
    process, cwd = started[case]
    assert_one_line_error(finish_cli(process), *CASES[case][1])
    assert not list(cwd.iterdir()), "a failed command wrote nothing"


def test_an_unreachable_bot_stops_the_match_before_it_starts(tmp_path: Path) -> None:
    from shared.protocol.signing import generate_secret

    url = f"http://127.0.0.1:{free_port()}"
    run = run_cli(
        "play",
        "podracing",
        url,
        "builtin:runner",
        cwd=tmp_path,
        env={"ARENA_BOT_SECRET": generate_secret(), "ARENA_BOT_NETWORKS": '["127.0.0.0/8"]'},
    )
    assert_one_line_error(run, f"bot '{url}': health check: cannot connect")
    assert not list(tmp_path.iterdir())


def test_a_hosted_bot_that_crashes_on_load_is_one_line(tmp_path: Path) -> None:
    """It passes the gate but raises when loaded: the sandbox's start error, reduced to its last line."""
    bot = tmp_path / "broken.py"
    bot.write_text('LIMIT = 1 / 0\n\n\ndef decide(observation):\n    return {"pods": []}\n')
    run = run_cli("play", "podracing", str(bot), "builtin:runner", cwd=tmp_path)
    assert_one_line_error(run, "bot 'broken.py':", "ZeroDivisionError")
