"""The demo's steps against a fake API (scripts/demo.py): what it counts, prints, uploads and stops,
without starting the platform; and what it notes about the servers it shares."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from scripts.demo import LEFTOVERS_FILE, Demo, leaderboard_lines, parse_args
from scripts.demo_fleet import HostedBot
from scripts.demo_infra import claim_database, leftovers_note
from tests.support.databases import create_database, drop_database
from tests.support.environment import ROOT

LATER = (datetime.now().astimezone() + timedelta(hours=1)).isoformat()


class FakeApi:
    """Answers GETs from `answers` (a callable per path, or a value) and records every call."""

    def __init__(self, answers: dict[str, Any] | None = None, status: dict[str, int] | None = None) -> None:
        self.answers = answers or {}
        self.status = status or {}
        self.calls: list[tuple[str, str]] = []

    def get(self, path: str, **params: Any) -> Any:
        self.calls.append(("GET", path))
        answer = self.answers.get(path, {"items": []})
        return answer(params) if callable(answer) else answer

    def post(self, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201)) -> httpx.Response:  # noqa: ARG002 (the client's signature)
        self.calls.append(("POST", path))
        return httpx.Response(self.status.get(path, 200), json={})


class NoSupervisor:
    def check_all(self) -> None:
        pass


def _demo(*argv: str) -> Demo:
    return Demo(parse_args(["--game", "podracing", *argv]), NoSupervisor())  # type: ignore[arg-type]


def _match(kind: str, status: str, error: str | None = None) -> dict[str, Any]:
    return {
        "id": secrets.token_hex(8),
        "kind": kind,
        "status": status,
        "error": error,
        "queued_at": LATER,
        "finished_at": LATER,
        "replay_url": None,
        "game": "podracing",
        "turns": 10,
        "participants": [
            {"bot_name": "a", "rank": 1, "slot": 0, "metrics": {}},
            {"bot_name": "b", "rank": 2, "slot": 1, "metrics": {}},
        ],
    }


def _matches(found: list[dict[str, Any]]) -> Any:
    """GET /matches as the gateway answers it: filtered by status, and by kind when asked."""

    def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {
            "items": [
                m
                for m in found
                if m["status"] == params["status"] and params.get("kind") in (None, m["kind"])
            ]
        }

    return answer


def test_the_ladder_counts_ladder_matches_only_not_the_evolvers_evaluations() -> None:
    demo = _demo()
    ladder, evaluation = _match("ladder", "finished"), _match("evaluation", "finished")
    demo.admin = FakeApi({"/matches": _matches([ladder, evaluation])})  # type: ignore[assignment]
    assert [m["id"] for m in demo._recent_matches()] == [ladder["id"]]


def test_an_operator_error_stops_the_ladder_saying_so() -> None:
    demo = _demo("--matches", "3")
    error = (
        "operator error: cannot decrypt bot 'x''s secret (bot 1): the secret key changed (ARENA_SECRET_KEY)"
    )
    demo.admin = FakeApi({"/matches": _matches([_match("ladder", "failed", error)])})  # type: ignore[assignment]
    with pytest.raises(RuntimeError, match="the secret key changed"):
        demo.ladder()


def test_leaderboard_columns_stay_aligned_with_long_bot_names() -> None:
    entries = [
        {"rank": r, "bot_name": name, "owner_name": "demo", "ordinal": 1.5, "mu": 25.0, "sigma": 8.3}
        | {"wins": 1, "draws": 0, "losses": 2, "matches": 3}
        for r, name in enumerate(["short", "evolved-battle-program-generation-12", "hosted-ppo"], 1)
    ]
    lines = leaderboard_lines(entries)
    assert len({len(line) for line in lines}) == 1, "\n".join(lines)
    assert all("evolved-battle-program-generation-12 " in line for line in lines[2:3])


def test_a_hosted_bot_whose_code_is_unchanged_is_not_uploaded_again() -> None:
    bot = HostedBot("hosted-runner", "print('go')\n", "decide")
    stored = {"number": 3, "source_sha256": hashlib.sha256(bot.source.encode()).hexdigest()}
    demo = _demo()
    demo.existing = {("podracing", bot.name): {"id": "b1", "status": "active"}}
    demo.owner = FakeApi({"/bots/b1/versions": [{"number": 1}, {**stored, "contract": "decide"}]})  # type: ignore[assignment]
    demo.hosted_bot("podracing", bot)
    assert ("POST", "/bots/b1/versions") not in demo.owner.calls  # type: ignore[attr-defined]

    changed = HostedBot(bot.name, "print('faster')\n", "decide")
    demo.hosted_bot("podracing", changed)
    assert ("POST", "/bots/b1/versions") in demo.owner.calls  # type: ignore[attr-defined]


def test_exiting_after_the_ladder_stops_the_demos_runs() -> None:
    demo = _demo()
    demo.training_run, demo.evolution_run = "t1", "e1"
    demo.owner = FakeApi(status={"/training/runs/t1/stop": 409})  # type: ignore[assignment]
    demo.stop_runs()
    posts = [path for method, path in demo.owner.calls if method == "POST"]  # type: ignore[attr-defined]
    assert posts == ["/training/runs/t1/stop", "/evolution/runs/e1/stop"]


def test_what_the_demo_leaves_on_configured_servers_is_noted_for_make_clean(tmp_path: Path) -> None:
    assert leftovers_note(None, None) == [], "embedded servers live under the data folder"
    note = leftovers_note("postgresql+psycopg://arena:pw@db.local:5433/arena", "redis://:pw@cache:6380/2")
    assert "dropdb -h db.local -p 5433 -U arena --force arena" in note[0]
    assert "redis-cli -h cache -p 6380 -n 2 FLUSHDB" in note[1]
    assert all("pw" not in line for line in note), "no password in the note"
    demo = _demo()
    demo.data_dir = tmp_path
    demo._record_leftovers("postgresql+psycopg://postgres@127.0.0.1:5432/arena", None)
    demo._record_leftovers("postgresql+psycopg://postgres@127.0.0.1:5432/arena", None)
    text = (tmp_path / LEFTOVERS_FILE).read_text()
    assert text.count("dropdb") == 1, text
    assert f".arena-data/demo/{LEFTOVERS_FILE}" in (ROOT / "Makefile").read_text(), "make clean prints it"


def test_a_database_another_checkouts_demo_used_is_reported() -> None:
    name = f"arena_demo_claim_{secrets.token_hex(4)}"
    url = create_database(name)
    try:
        assert claim_database(url, Path("/src/one")) is None
        assert claim_database(url, Path("/src/one")) is None
        assert claim_database(url, Path("/src/two")) == "/src/one"
        assert claim_database(url, Path("/src/two")) is None
    finally:
        drop_database(name)
