"""The platform end to end with real processes: gateway (uvicorn), match-runner worker (celery) and
SDK bots as subprocesses; users, registration and a challenge through the REST API; the worker plays
it; results, ratings, leaderboard and a replay that re-simulates to the same frames."""

from __future__ import annotations

import gzip
import json
import re
import secrets
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from scripts.demo_fleet import hosted_bots as hosted_fleet
from services.match_runner.commands import worker_command
from shared.games.registry import get_game
from shared.games.replay import resimulate
from shared.ports import free_port
from shared.protocol.signing import generate_secret
from tests.support.environment import ROOT
from tests.support.processes import PYTHON, ManagedProcess


def _start_bot(spawn: Callable[..., ManagedProcess], name: str, module: str) -> tuple[str, str]:
    secret, port = generate_secret(), free_port()
    bot = spawn(
        [PYTHON, "-m", "shared.botsdk.run", "--module", module, "--port", str(port)],
        name,
        env={"ARENA_BOT_SECRET": secret},
    )
    url = f"http://127.0.0.1:{port}"
    bot.wait_until(lambda: httpx.get(url + "/health", timeout=2).status_code == 401, 20, "bot listening")
    return url, secret


@pytest.mark.e2e
@pytest.mark.usefixtures("database_url")
def test_challenge_played_by_a_real_worker(
    private_redis_url: str, spawn: Callable[..., ManagedProcess]
) -> None:
    admin_key = "arena_e2e_" + secrets.token_urlsafe(24)
    env = {"ARENA_REDIS_URL": private_redis_url, "ARENA_BOOTSTRAP_ADMIN_KEY": admin_key}
    port = free_port()
    gateway = spawn(
        [PYTHON, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1", "--port", str(port)],
        "gateway",
        env=env,
    )
    worker = spawn(
        worker_command(python=PYTHON),
        "worker",
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    gateway.wait_http(base + "/ready")
    api = httpx.Client(base_url=base + "/api/v1", timeout=30)
    admin = {"X-API-Key": admin_key}

    def user(name: str) -> dict[str, str]:
        answer = api.post("/users", json={"name": f"{name}-{secrets.token_hex(3)}"}, headers=admin)
        assert answer.status_code == 201, answer.text
        return {"Authorization": f"Bearer {answer.json()['api_key']['api_key']}"}

    alice, bob = user("alice"), user("bob")
    bots: dict[str, dict[str, Any]] = {}
    for owner, name, module in [
        (alice, "runner", str(ROOT / "examples/bots/podracing_runner_bot.py")),
        (bob, "follower", str(ROOT / "examples/bots/podracing_follower_bot.py")),
    ]:
        url, secret = _start_bot(spawn, f"bot-{name}", module)
        answer = api.post(
            "/bots",
            json={
                "name": f"e2e-{name}-{secrets.token_hex(3)}",
                "game": "podracing",
                "endpoint": url,
                "secret": secret,
            },
            headers=owner,
        )
        assert answer.status_code == 201, answer.text
        bots[name] = answer.json()

    created = api.post(
        "/matches",
        json={
            "game": "podracing",
            "bot_ids": [bots["runner"]["id"], bots["follower"]["id"]],
            "seed": 7,
            "rated": True,
        },
        headers=admin,  # only admins may start rated challenges (docs/api.md, Challenge)
    )
    assert created.status_code == 201, created.text
    match_id = created.json()["id"]
    worker.wait_log("ready", timeout=60)

    deadline = time.monotonic() + 150
    match = created.json()
    while match["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, f"match not finished: {match}\n{worker.log()[-3000:]}"
        time.sleep(0.5)
        match = api.get(f"/matches/{match_id}").json()
    assert match["status"] == "finished", json.dumps(match)[:2000]
    assert match["turns"] > 0
    assert match["end_reason"]
    parts = {p["bot_id"]: p for p in match["participants"]}
    assert sorted(p["rank"] for p in parts.values()) == [0, 1]  # a race between these bots has a winner
    for p in parts.values():
        assert p["latency_p50_ms"] is not None
        assert p["mu_before"] == 25.0
        assert p["mu_after"] is not None
        assert p["errors"] == 0
        assert p["timeouts"] == 0
        assert not p["forfeited"]
    winner = next(p for p in parts.values() if p["rank"] == 0)
    loser = next(p for p in parts.values() if p["rank"] == 1)
    assert winner["mu_after"] > winner["mu_before"]
    assert loser["mu_after"] < loser["mu_before"]
    assert winner["ordinal_change"] > 0
    board = api.get("/leaderboard/podracing").json()["entries"]
    order = [e["bot_id"] for e in board if e["bot_id"] in parts]
    assert order == [winner["bot_id"], loser["bot_id"]]
    top = next(e for e in board if e["bot_id"] == winner["bot_id"])
    assert (top["wins"], top["losses"], top["matches"]) == (1, 0, 1)

    replay_answer = api.get(f"/matches/{match_id}/replay")
    assert replay_answer.status_code == 200
    replay = replay_answer.json()
    assert replay["seed"] == 7
    assert len(replay["turns"]) == match["turns"]
    again = resimulate(get_game("podracing"), replay)
    assert again["frames"] == replay["frames"]
    assert again["result"] == replay["result"]
    packed = api.get(f"/matches/{match_id}/replay", params={"compressed": 1})
    assert json.loads(gzip.decompress(packed.content)) == replay

    # A hosted bot, uploaded through the API, plays the same way (in the sandbox).
    hosted_bots, _ = hosted_fleet("podracing")
    source = next(b.source for b in hosted_bots if b.name == "hosted-runner")
    hosted = api.post(
        "/bots/hosted",
        json={"name": f"e2e-hosted-{secrets.token_hex(3)}", "game": "podracing", "source": source},
        headers=alice,
    )
    assert hosted.status_code == 201, hosted.text
    second = api.post(
        "/matches",
        json={"game": "podracing", "bot_ids": [hosted.json()["id"], bots["follower"]["id"]], "rated": False},
        headers=alice,
    ).json()
    deadline = time.monotonic() + 150
    while second["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, f"hosted match not finished\n{worker.log()[-3000:]}"
        time.sleep(0.5)
        second = api.get(f"/matches/{second['id']}").json()
    assert second["status"] == "finished", json.dumps(second)[:2000]
    sandboxed = second["participants"][0]
    assert sandboxed["errors"] == 0, sandboxed
    assert not sandboxed["forfeited"], sandboxed
    assert sandboxed["mu_after"] is None  # unrated: ratings untouched
    assert api.get(f"/bots/{hosted.json()['id']}", headers=alice).json()["rating"]["matches_played"] == 0

    metrics = httpx.get(base + "/metrics").text
    finished = re.search(r'^arena_matches\{status="finished"\} (\S+)$', metrics, flags=re.M)
    assert finished
    assert float(finished.group(1)) >= 2
