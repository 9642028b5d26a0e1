"""The `arena` commands that call the REST API, as real processes against the real gateway."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from shared.db.models import Match, MatchParticipant
from shared.states import MatchStatus
from tests.support.accounts import Account, unique
from tests.support.bot_servers import BotServer
from tests.support.cli import (
    BOTS,
    PODRACING_CONFIG,
    CliRun,
    assert_one_line_error,
    finish_cli,
    run_cli,
    start_cli,
)

pytestmark = pytest.mark.slow


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
    assert http_bot["name"] == http_name
    assert http_bot["status"] == "active"
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
    assert http_name in listed.stdout
    assert hosted_name in listed.stdout
    assert "2 of 2 bots" in listed.stdout

    challenged = arena(
        "challenge", "podracing", http_bot["id"], hosted_id, "--seed", "5", "--config", PODRACING_CONFIG
    )
    assert challenged.returncode == 0, challenged.stderr
    assert "seed 5" in challenged.stdout
    assert "status: queued" in challenged.stdout
    match_id = challenged.stdout.split()[1]
    assert f"watch: {gateway_url}/matches/{match_id}" in challenged.stdout

    # No worker runs beside this gateway, so the match stays queued: --wait gives up in one line.
    waited = arena("challenge", "podracing", http_bot["id"], hosted_id, "--wait", "--timeout", "1")
    assert_one_line_error(waited, "is still queued after 1 s", f"{gateway_url}/matches/")

    board = arena("leaderboard", "podracing")
    assert board.returncode == 0, board.stderr
    assert board.stdout.startswith("podracing leaderboard") or board.stdout.startswith("no rated bots")


def _upload(env: dict[str, str], tmp_path: Path, prefix: str) -> tuple[str, str]:
    """A new hosted podracing bot of the key's user, uploaded by the CLI: (name, id)."""
    name = unique(prefix)
    uploaded = run_cli(
        "bots", "upload", str(BOTS / "podracing_decide.py"), "--game", "podracing", "--name", name, "--json",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert uploaded.returncode == 0, uploaded.stderr
    return name, json.loads(uploaded.stdout)["id"]


def test_challenge_takes_bot_names_and_prints_the_rating_change(
    gateway_url: str,
    make_user: Callable[..., Account],
    admin: Account,
    db_session: Session,
    tmp_path: Path,
) -> None:
    alice = {"ARENA_URL": gateway_url, "ARENA_API_KEY": make_user("cli-names").key}
    bob = {"ARENA_URL": gateway_url, "ARENA_API_KEY": make_user("cli-names").key}
    mine, mine_id = _upload(alice, tmp_path, "cli-mine")
    theirs, theirs_id = _upload(bob, tmp_path, "cli-theirs")

    by_name = run_cli("challenge", "podracing", mine, theirs, "--json", cwd=tmp_path, env=alice)
    assert by_name.returncode == 0, by_name.stderr
    seated = sorted(json.loads(by_name.stdout)["participants"], key=lambda p: p["slot"])
    assert [p["bot_id"] for p in seated] == [mine_id, theirs_id]
    mixed = run_cli("challenge", "podracing", mine_id, theirs, "--json", cwd=tmp_path, env=alice)
    assert mixed.returncode == 0, mixed.stderr
    assert_one_line_error(
        run_cli("challenge", "podracing", mine, "no-such-bot", cwd=tmp_path, env=alice),
        "no podracing bot is named 'no-such-bot'",
    )

    # A rated challenge (admins only) waited for; no worker runs here, so the test finishes the
    # match the way the runner does (result and ratings in the participants' rows).
    admin_env = {"ARENA_URL": gateway_url, "ARENA_API_KEY": admin.key}
    waiting = start_cli(
        "challenge", "podracing", mine, theirs, "--rated", "--wait", "--timeout", "60",
        cwd=tmp_path, env=admin_env,
    )  # fmt: skip
    match = _rated_match_of(db_session, uuid.UUID(mine_id))
    match.status, match.turns, match.end_reason = MatchStatus.FINISHED, 40, "race_won"
    for part in match.participants:
        won = str(part.bot_id) == mine_id
        part.rank, part.score, part.metrics = (0, 1.0, {}) if won else (1, 0.0, {})
        part.mu_before, part.sigma_before = 25.0, 8.0
        part.mu_after, part.sigma_after = (27.5, 7.5) if won else (22.5, 7.5)
    db_session.commit()
    done = finish_cli(waiting, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "status: finished" in done.stdout, done.stdout
    rating = next(line for line in done.stdout.splitlines() if line.startswith("rating "))
    assert "1.00 -> 5.00 (+4.00)" in rating, done.stdout
    assert "1.00 -> 0.00 (-1.00)" in rating, done.stdout
    assert "25.00 -> 27.50 (+2.50)" in done.stdout
    assert "8.00 -> 7.50 (-0.50)" in done.stdout
    assert "as the leaderboard ranks bots" in done.stdout


def _rated_match_of(session: Session, bot_id: uuid.UUID) -> Match:
    """The rated match the CLI is waiting for, once its challenge reached the server."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = session.scalar(
            select(Match)
            .join(MatchParticipant)
            .where(MatchParticipant.bot_id == bot_id, Match.rated.is_(True))
        )
        if found is not None:
            return found
        session.rollback()  # a fresh snapshot for the next look
        time.sleep(0.2)
    raise AssertionError("the rated challenge never reached the server")


def test_bots_deactivate_and_reactivate_by_name_for_their_owner_only(
    gateway_url: str, make_user: Callable[..., Account], tmp_path: Path
) -> None:
    alice = {"ARENA_URL": gateway_url, "ARENA_API_KEY": make_user("cli-owner").key}
    bob = {"ARENA_URL": gateway_url, "ARENA_API_KEY": make_user("cli-other").key}
    name, bot_id = _upload(alice, tmp_path, "cli-onoff")

    off = run_cli("bots", "deactivate", name, cwd=tmp_path, env=alice)
    assert off.returncode == 0, off.stderr
    assert off.stdout.startswith(f"podracing bot '{name}' ({bot_id}): inactive"), off.stdout
    on = run_cli("bots", "reactivate", name, cwd=tmp_path, env=alice)
    assert on.returncode == 0, on.stderr
    assert on.stdout.strip() == f"podracing bot '{name}' ({bot_id}): active; back on the ladder"
    by_id = run_cli("bots", "reactivate", bot_id, "--json", cwd=tmp_path, env=alice)
    assert by_id.returncode == 0, by_id.stderr
    assert json.loads(by_id.stdout)["status"] == "active", by_id.stderr

    assert_one_line_error(
        run_cli("bots", "reactivate", bot_id, cwd=tmp_path, env=bob), "HTTP 403", "belongs to another user"
    )
    assert_one_line_error(
        run_cli("bots", "reactivate", name, cwd=tmp_path, env=bob), f"you have no bot named '{name}'"
    )
    assert_one_line_error(
        run_cli("bots", "reactivate", str(uuid.uuid4()), cwd=tmp_path, env=alice), "HTTP 404", "not found"
    )


@pytest.mark.usefixtures("make_user")
def test_an_admin_creates_an_account_whose_key_works(
    gateway_url: str, admin: Account, tmp_path: Path
) -> None:
    admin_env = {"ARENA_URL": gateway_url, "ARENA_API_KEY": admin.key}
    name = unique("cli-account")
    created = run_cli("users", "create", name, cwd=tmp_path, env=admin_env)
    assert created.returncode == 0, created.stderr
    assert created.stdout.startswith(f"created user '{name}'"), created.stdout
    key = created.stdout.split("hand it over now): ")[1].split()[0]
    user_env = {"ARENA_URL": gateway_url, "ARENA_API_KEY": key}
    mine = run_cli("bots", "list", cwd=tmp_path, env=user_env)
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout.strip() == "no bots", mine.stderr
    another = run_cli("keys", "create", "--name", "laptop", "--json", cwd=tmp_path, env=user_env)
    assert another.returncode == 0, another.stderr
    second = json.loads(another.stdout)
    assert second["name"] == "laptop"
    assert second["api_key"] != key
    assert (
        run_cli("bots", "list", cwd=tmp_path, env={**user_env, "ARENA_API_KEY": second["api_key"]}).returncode
        == 0
    )

    assert_one_line_error(
        run_cli("users", "create", unique("cli-nope"), cwd=tmp_path, env=user_env),
        "POST /api/v1/users: HTTP 403",
    )
    assert_one_line_error(run_cli("users", "create", name, cwd=tmp_path, env=admin_env), "HTTP 409")


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
    assert "submitted to" in submitted.stdout
    assert "/evolution/" in submitted.stdout
    run_id = submitted.stdout.split()[2]
    shown = run_cli("evolve", "battle", "--server", gateway_url, "--generations", "0", cwd=tmp_path, env=env)
    assert_one_line_error(shown, "HTTP 422", "max_generations")
    import httpx

    detail = httpx.get(f"{gateway_url}/api/v1/evolution/runs/{run_id}", headers=user.headers, timeout=10)
    assert detail.status_code == 200, detail.text
    body = detail.json()
    assert body["name"] == "from-the-cli"
    assert body["config"]["limits"]["max_generations"] == 3
