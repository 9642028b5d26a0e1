"""The `arena` commands that call the REST API, as real processes against the real gateway."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.cli.conftest import BOTS, PODRACING_CONFIG, CliRun, assert_one_line_error, run_cli
from tests.gateway.conftest import Account, BotServer, unique


def test_bots_challenge_and_leaderboard_commands(
    gateway_url: str, make_user: Callable[..., Account], bot_server: BotServer, tmp_path: Path
) -> None:
    user = make_user("cli")
    env = {"ARENA_URL": gateway_url, "ARENA_API_KEY": user.key}

    def arena(*args: str) -> CliRun:
        return run_cli(*args, cwd=tmp_path, env=env)

    http_name = unique("cli-http")
    registered = arena(
        "bots", "register", "--game", "podracing", "--name", http_name,
        "--endpoint", bot_server.url, "--secret", bot_server.secret, "--json",
    )  # fmt: skip
    assert registered.returncode == 0, registered.stderr
    http_bot = json.loads(registered.stdout)
    assert http_bot["name"] == http_name and http_bot["status"] == "active"
    assert http_bot["secret"] == bot_server.secret

    hosted_name = unique("cli-hosted")
    uploaded = arena(
        "bots", "upload", str(BOTS / "podracing_decide.py"), "--game", "podracing", "--name", hosted_name
    )
    assert uploaded.returncode == 0, uploaded.stderr
    assert f"uploaded hosted podracing bot '{hosted_name}'" in uploaded.stdout
    assert "version 1" in uploaded.stdout
    hosted_id = uploaded.stdout.split("id ")[1].split(",")[0]

    version = arena(
        "bots", "upload", str(BOTS / "podracing_decide.py"), "--bot", hosted_id, "--notes", '{"from": "cli"}'
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"uploaded version 2 of bot {hosted_id} (decide)"

    refused = arena("bots", "upload", str(BOTS / "gate_failure.py"), "--bot", hosted_id)
    assert_one_line_error(refused, "HTTP 422", "2 problem(s)", "line 3,", "line 7,")

    listed = arena("bots", "list", "--game", "podracing")
    assert listed.returncode == 0, listed.stderr
    assert http_name in listed.stdout and hosted_name in listed.stdout
    assert "2 of 2 bots" in listed.stdout

    challenged = arena(
        "challenge", "podracing", http_bot["id"], hosted_id, "--seed", "5", "--config", PODRACING_CONFIG
    )
    assert challenged.returncode == 0, challenged.stderr
    assert "seed 5" in challenged.stdout and "status: queued" in challenged.stdout
    match_id = challenged.stdout.split()[1]
    assert f"watch: {gateway_url}/matches/{match_id}" in challenged.stdout

    # No worker runs beside this gateway, so the match stays queued: --wait gives up in one line.
    waited = arena("challenge", "podracing", http_bot["id"], hosted_id, "--wait", "--timeout", "1")
    assert_one_line_error(waited, "is still queued after 1 s", f"{gateway_url}/matches/")

    board = arena("leaderboard", "podracing")
    assert board.returncode == 0, board.stderr
    assert board.stdout.startswith("podracing leaderboard") or board.stdout.startswith("no rated bots")


def test_api_errors_are_one_line(gateway_url: str, tmp_path: Path) -> None:
    env = {"ARENA_URL": gateway_url, "ARENA_API_KEY": "arena_not_a_real_key"}
    assert_one_line_error(
        run_cli("bots", "list", cwd=tmp_path, env=env),
        "GET /api/v1/bots: HTTP 401",
        "invalid or revoked API key",
    )
    assert_one_line_error(
        run_cli("leaderboard", "chess", cwd=tmp_path, env=env), "HTTP 404", "unknown game 'chess'"
    )
    assert_one_line_error(
        run_cli("challenge", "podracing", "not-a-uuid", "x", cwd=tmp_path, env=env), "HTTP 4"
    )


def test_evolve_submits_a_run_to_the_server(
    gateway_url: str, make_user: Callable[..., Account], tmp_path: Path
) -> None:
    user = make_user("cli-evolve")
    env = {"ARENA_URL": gateway_url, "ARENA_API_KEY": user.key}
    submitted = run_cli(
        "evolve", "battle", "--server", gateway_url, "--generations", "3", "--children", "2",
        "--name", "from-the-cli", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    assert "submitted to" in submitted.stdout and "/evolution/" in submitted.stdout
    run_id = submitted.stdout.split()[2]
    shown = run_cli("evolve", "battle", "--server", gateway_url, "--generations", "0", cwd=tmp_path, env=env)
    assert_one_line_error(shown, "HTTP 422", "max_generations")
    import httpx

    detail = httpx.get(f"{gateway_url}/api/v1/evolution/runs/{run_id}", headers=user.headers, timeout=10)
    assert detail.status_code == 200, detail.text
    body = detail.json()
    assert body["name"] == "from-the-cli" and body["config"]["limits"]["max_generations"] == 3
