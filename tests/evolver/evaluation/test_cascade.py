"""The evaluation cascade with real sandboxes (bubblewrap) against the built-in bots, on short
configs: good programs pass every stage, broken and hostile ones stop early, see no secret and
cost bounded time."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.evolver.evaluation.cascade import EvalStage, Evaluation, TournamentPlan, evaluate
from services.evolver.evaluation.matches import LocalExecutor
from services.evolver.evaluation.records import MatchSpec
from services.evolver.evaluation.settings import EvaluationSettings
from shared.config import get_settings

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")

ROOT = Path(__file__).resolve().parents[3]
BATTLE_BOTS = (ROOT / "shared" / "games" / "battle" / "bots.py").read_text()
PODRACING_BOTS = (ROOT / "shared" / "games" / "podracing" / "bots.py").read_text()
GOOD_BATTLE = BATTLE_BOTS + "\n\ndef decide(observation):\n    return aggressive(observation)\n"
GOOD_PODRACING = PODRACING_BOTS + "\n\ndef decide(observation):\n    return runner(observation)\n"
SHORT_BATTLE = {"time_limit_s": 6}
"""30 decision turns."""
SHORT_RACE = {"laps": 1, "max_turns": 60}
SECRET = "sk-test-secret-" + "4f1c9a"

FAST = {"turn_timeout_ms": 300, "first_turn_timeout_ms": 1500, "max_consecutive_failures": 3}
"""Turn limits that make failing programs forfeit quickly."""


@pytest.fixture(autouse=True)
def _secret_in_our_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The evolver process holds an LLM key; no program may ever see it."""
    monkeypatch.setenv("ARENA_LLM_API_KEY", SECRET)


@pytest.fixture(scope="module")
def battle_local() -> Iterator[LocalExecutor]:
    with LocalExecutor("battle", get_settings()) as executor:
        yield executor


@pytest.fixture(scope="module")
def podracing_local() -> Iterator[LocalExecutor]:
    with LocalExecutor("podracing", get_settings()) as executor:
        yield executor


def battle_settings(**overrides: object) -> EvaluationSettings:
    return EvaluationSettings.model_validate(
        {"match_config": SHORT_BATTLE, "tournament_matches": 4, **FAST, **overrides}
    )


def assert_no_secret(evaluation: Evaluation) -> None:
    assert SECRET not in json.dumps(evaluation.to_json())


@pytest.mark.slow
def test_good_battle_program_passes_every_stage(battle_local: LocalExecutor, tmp_path: Path) -> None:
    opponent = tmp_path / "sniper_bot.py"
    opponent.write_text(BATTLE_BOTS + "\n\ndef decide(observation):\n    return sniper(observation)\n")
    plan = TournamentPlan(opponents=["builtin:defensive", f"file:{opponent}"])
    settings = battle_settings(turn_timeout_ms=1000, jobs=2)
    started = time.monotonic()
    evaluation = evaluate("battle", GOOD_BATTLE, settings, local=battle_local, tournament=plan, seed=7)
    assert time.monotonic() - started < 40
    assert evaluation.stage is EvalStage.DONE, evaluation.message
    assert evaluation.passed, evaluation.message
    assert evaluation.fitness > 0
    metrics = evaluation.metrics
    assert metrics["matches"] == 3 + 4
    assert metrics["failed_matches"] == 0
    assert set(metrics["per_opponent"]) == {
        "builtin:aggressive",
        "builtin:defensive",
        "builtin:sniper",
        f"file:{opponent}",
    }
    assert all(0 <= metrics[name] <= 1 for name in ("win_rate", "kill_rate", "damage_share"))
    assert set(evaluation.descriptors) == {"aggression", "accuracy"}
    assert evaluation.descriptors["aggression"] > 0
    assert evaluation.cell is not None
    assert all(0 <= i < 5 for i in evaluation.cell)
    stages = [r["stage"] for r in evaluation.records]
    assert stages == ["smoke"] + ["quick"] * 3 + ["tournament"] * 4
    quick = [r for r in evaluation.records if r["stage"] == "quick"]
    assert [(r["opponent"], r["seat"]) for r in quick] == [
        ("builtin:aggressive", 0),
        ("builtin:defensive", 1),
        ("builtin:sniper", 0),
    ]
    assert all(r["turns"] == 30 or r["end_reason"] == "eliminated" for r in quick)
    feedback = evaluation.feedback
    assert feedback["worst_match"]
    assert feedback["worst_match"][0].startswith("vs ")
    assert feedback["latency_ms"]["p50"] is not None
    assert Evaluation.from_json(json.loads(json.dumps(evaluation.to_json()))) == evaluation

    again = evaluate("battle", GOOD_BATTLE, settings, local=battle_local, tournament=plan, seed=7)
    assert [(r["opponent"], r["seed"], r["seat"]) for r in again.records] == [
        (r["opponent"], r["seed"], r["seat"]) for r in evaluation.records
    ]
    assert again.metrics["per_opponent"] == evaluation.metrics["per_opponent"]  # built-ins are deterministic


@pytest.mark.slow
def test_good_podracing_program_passes(podracing_local: LocalExecutor) -> None:
    settings = EvaluationSettings.model_validate(
        {"match_config": SHORT_RACE, **FAST, "turn_timeout_ms": 1000}
    )
    evaluation = evaluate(
        "podracing", GOOD_PODRACING, settings, local=podracing_local, tournament=None, seed=3
    )
    assert evaluation.stage is EvalStage.DONE, evaluation.message
    assert evaluation.passed, evaluation.message
    assert evaluation.fitness > 0
    assert set(evaluation.metrics["per_opponent"]) == {"builtin:blocker", "builtin:runner", "builtin:search"}
    assert "progress" in evaluation.metrics
    assert set(evaluation.descriptors) == {"collisions", "boost_timing"}


def test_the_gate_refuses_before_anything_runs(battle_local: LocalExecutor) -> None:
    source = "import os\n\ndef decide(observation):\n    return {'units': {}, 'memory': dict(os.environ)}\n"
    evaluation = evaluate("battle", source, battle_settings(), local=battle_local, tournament=None, seed=1)
    assert evaluation.stage is EvalStage.GATE
    assert not evaluation.passed
    assert evaluation.fitness == 0.0
    assert evaluation.records == []
    assert "line 1" in evaluation.message
    assert "os" in evaluation.message
    assert evaluation.feedback["gate_problems"]
    assert_no_secret(evaluation)


def test_a_socket_is_refused_by_the_gate(battle_local: LocalExecutor) -> None:
    source = (
        "import socket\n\ndef decide(observation):\n"
        "    socket.create_connection(('127.0.0.1', 80))\n    return {'units': {}}\n"
    )
    evaluation = evaluate("battle", source, battle_settings(), local=battle_local, tournament=None, seed=1)
    assert evaluation.stage is EvalStage.GATE
    assert "socket" in evaluation.message


def test_a_program_that_raises_fails_the_smoke_run_with_its_message(battle_local: LocalExecutor) -> None:
    source = (
        "def decide(observation):\n    raise ValueError('no plan for turn ' + str(observation['turn']))\n"
    )
    started = time.monotonic()
    evaluation = evaluate("battle", source, battle_settings(), local=battle_local, tournament=None, seed=2)
    assert time.monotonic() - started < 15
    assert evaluation.stage is EvalStage.SMOKE
    assert not evaluation.passed
    assert evaluation.fitness == 0.0
    assert "no plan for turn 0" in evaluation.message
    assert any("no plan for turn" in e["message"] for e in evaluation.feedback["errors"])
    assert [r["stage"] for r in evaluation.records] == ["smoke"]


@pytest.mark.slow
def test_a_program_that_loops_forever_forfeits_in_bounded_time(battle_local: LocalExecutor) -> None:
    source = "def decide(observation):\n    while True:\n        pass\n"
    started = time.monotonic()
    evaluation = evaluate("battle", source, battle_settings(), local=battle_local, tournament=None, seed=3)
    elapsed = time.monotonic() - started
    assert evaluation.stage is EvalStage.SMOKE
    assert not evaluation.passed
    assert evaluation.fitness == 0.0
    assert "forfeited the smoke run after 3 turns" in evaluation.message
    assert "no answer within 300 ms" in evaluation.message  # the evaluation's turn limit
    assert evaluation.feedback["timeout_count"] >= 3
    assert elapsed < 15, elapsed


def test_gate_passing_program_that_hunts_for_secrets_finds_none(battle_local: LocalExecutor) -> None:
    """What the gate lets through (sys.argv, exception texts) carries no secret."""
    source = (
        "import sys\n\ndef decide(observation):\n"
        "    raise RuntimeError('FOUND ' + repr(sys.argv) + repr(observation.get('constants')))\n"
    )
    evaluation = evaluate("battle", source, battle_settings(), local=battle_local, tournament=None, seed=4)
    assert evaluation.stage is EvalStage.SMOKE
    assert "FOUND" in evaluation.message
    assert_no_secret(evaluation)


HUNTER = """
import os

def decide(observation):
    found = ['ENV=' + repr(dict(os.environ))]
    for pid in ['self', '1', '2', '3']:
        try:
            with open('/proc/' + pid + '/environ', 'rb') as f:
                found.append(pid + '=' + repr(f.read()))
        except Exception as exc:
            found.append(pid + ':' + type(exc).__name__)
    raise RuntimeError(' '.join(found))
"""


def test_the_sandbox_hides_secrets_even_from_code_the_gate_would_refuse(battle_local: LocalExecutor) -> None:
    """The gate is not the boundary: run a program straight in the sandbox (no gate) that reads
    its environment and every /proc environ it can; the evolver's secret is in none of them."""
    record = battle_local.smoke(HUNTER, MatchSpec("builtin:aggressive", 5, 0, SHORT_BATTLE), 3)
    text = " ".join(record.error_samples)
    assert "ENV=" in text, text
    assert SECRET not in text
    assert "ARENA_" not in text
    assert SECRET not in json.dumps(record.to_json())


def test_the_sandbox_refuses_sockets(battle_local: LocalExecutor) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.2)
        port = listener.getsockname()[1]
        accepted: list[object] = []
        stop = threading.Event()

        def accept() -> None:
            while not stop.is_set():
                try:
                    accepted.append(listener.accept())
                except OSError:
                    continue

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        source = (
            "import socket\n\ndef decide(observation):\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=0.5)\n"
            "    return {'units': {}}\n"
        )
        record = battle_local.smoke(source, MatchSpec("builtin:aggressive", 5, 0, SHORT_BATTLE), 3)
        stop.set()
        thread.join(timeout=2)
    assert accepted == []
    assert record.valid_turns == 0
    assert record.error_samples, record


def test_parallel_local_matches_return_records_in_spec_order() -> None:
    settings = get_settings()
    names = ["sniper", "defensive"]
    specs = [MatchSpec(f"builtin:{name}", 11 + i, i % 2, SHORT_BATTLE) for i, name in enumerate(names)]
    with LocalExecutor("battle", settings, jobs=2) as executor:
        records = executor.play(GOOD_BATTLE, specs)
    expected = [(s.opponent, s.candidate_seat, s.seed) for s in specs]
    assert [(r.opponent, r.seat, r.seed) for r in records] == expected
    assert all(r.played and r.turns > 0 for r in records)
    missing = LocalExecutor("battle", settings).play(GOOD_BATTLE, [MatchSpec("builtin:nobody", 1)])
    assert missing[0].failure
    assert "nobody" in missing[0].failure


def test_a_weak_program_is_screened_out_before_the_tournament(battle_local: LocalExecutor) -> None:
    idle = "def decide(observation):\n    return {'units': {}}\n"
    settings = battle_settings(min_quick_win_rate=0.6)
    plan = TournamentPlan(opponents=["builtin:sniper"])
    evaluation = evaluate("battle", idle, settings, local=battle_local, tournament=plan, seed=5)
    assert evaluation.stage is EvalStage.QUICK
    assert not evaluation.passed
    assert "under 0.60" in evaluation.message
    assert [r["stage"] for r in evaluation.records] == ["smoke", "quick", "quick", "quick"]
    assert evaluation.metrics["matches"] == 3
    assert evaluation.cell is not None
    assert evaluation.metrics["kill_rate"] == 0.0


def test_the_cell_is_cut_with_the_run_s_grid_bins(battle_local: LocalExecutor) -> None:
    """A run's grid_bins decides the cell a program falls in, not a fixed five bins a side: the
    heat map, the elites and the sampling all read the stored cell."""
    from services.evolver.evaluation.fitness import cell

    evaluation = evaluate(
        "battle",
        GOOD_BATTLE,
        battle_settings(tournament_matches=0, quick_matches=1, grid_bins=20),
        local=battle_local,
        tournament=None,
        seed=3,
    )
    assert evaluation.passed
    assert evaluation.descriptors["aggression"] > 0
    assert evaluation.cell == cell(evaluation.descriptors, 20)
    assert tuple(i // 4 for i in evaluation.cell) == cell(evaluation.descriptors, 5)  # a finer cut
