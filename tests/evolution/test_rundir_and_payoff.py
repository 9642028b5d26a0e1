"""The run directory written from the database (shared.evolution.rundir) and the payoff table's
Nash averaging (shared.evolution.payoff)."""

from __future__ import annotations

import io
import json
import tarfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from shared.config import get_settings
from shared.db.models import User
from shared.evolution import EvolutionConfig, EvolutionEvaluationConfig, LlmConfig, get_run, new_run
from shared.evolution.config import DEFAULT_FITNESS_WEIGHTS
from shared.evolution.payoff import PayoffTable, nash_average, payoff_table, solve_meta_game
from shared.evolution.rundir import archive_name, run_archive, sanitise, write_run_directory
from shared.states import UserRole
from tests.support.evolution import CHILD_CODE, CHILD_DIFF, OWN_LLM_URL, seed_run

LLM_KEY = "sk-rundir-" + uuid.uuid4().hex


def record(wins: int, draws: int, losses: int) -> dict[str, int]:
    return {"wins": wins, "draws": draws, "losses": losses, "games": wins + draws + losses}


# --------------------------------------------------------------------------- payoff


def test_rock_paper_scissors_is_uniform() -> None:
    # Programs R, P, S against opponents R, P, S; a win is 1, a draw 0.5, a loss 0.
    beats = {"R": "S", "P": "R", "S": "P"}
    rows = []
    for me in "RPS":
        table = {}
        for them in "RPS":
            table[them] = (
                record(1, 0, 0) if beats[me] == them else record(0, 1, 0) if me == them else record(0, 0, 1)
            )
        rows.append((me, {"per_opponent": table}))
    nash = nash_average(payoff_table(rows))
    for weight in nash.mixture.values():
        assert weight == pytest.approx(1 / 3, abs=0.02)
    for fitness in nash.fitness.values():
        assert fitness == pytest.approx(0.5, abs=0.02)
    assert nash.value == pytest.approx(0.0, abs=0.02)
    # Deterministic: the same table, the same numbers.
    assert nash_average(payoff_table(rows)) == nash


def test_a_dominated_opponent_gets_no_weight() -> None:
    rows = [
        (
            "a",
            {
                "per_opponent": {
                    "strong": record(3, 0, 7),
                    "medium": record(6, 0, 4),
                    "pushover": record(10, 0, 0),
                }
            },
        ),
        (
            "b",
            {
                "per_opponent": {
                    "strong": record(5, 0, 5),
                    "medium": record(4, 0, 6),
                    "pushover": record(9, 1, 0),
                }
            },
        ),
        ("c", {"per_opponent": {"strong": record(1, 0, 9), "pushover": record(10, 0, 0)}}),
    ]
    table = payoff_table(rows)
    assert table.opponents == ["medium", "pushover", "strong"]
    assert table.matrix()[2] == [0.5, 1.0, 0.1]  # c never met "medium": counted even
    nash = nash_average(table)
    assert nash.mixture["pushover"] < 0.01
    # b beats the strong opponent most: it ranks first by Nash fitness, a first by plain average.
    assert max(nash.fitness, key=lambda k: nash.fitness[k]) == "b"
    assert nash.fitness["c"] < nash.fitness["a"] < nash.fitness["b"]


def test_solver_edge_cases() -> None:
    one = solve_meta_game([[0.2]])
    assert one.row_mixture == [1.0]
    assert one.column_mixture == [1.0]
    assert one.value == pytest.approx(0.2)
    assert solve_meta_game([[0.0, 0.0], [0.0, 0.0]]).gap == pytest.approx(0.0)
    with pytest.raises(ValueError, match="needs at least one row and one column"):
        solve_meta_game([])
    empty = nash_average(PayoffTable())
    assert empty.mixture == {}
    assert empty.fitness == {}
    # Programs without records, malformed records and empty ones are left out.
    table = payoff_table(
        [("x", {}), ("y", {"per_opponent": {"o": "bad", "q": record(0, 0, 0)}}), ("z", None)]
    )
    assert table.programs == []
    assert table.opponents == []


# --------------------------------------------------------------------------- run directory


@pytest.fixture
def seeded_run(db_session: Session) -> Any:
    owner = User(name=f"rundir-{uuid.uuid4().hex[:8]}", role=UserRole.USER)
    db_session.add(owner)
    db_session.flush()
    run, _ = new_run(
        db_session,
        get_settings(),
        owner,
        name="dir-run",
        game="podracing",
        config=EvolutionConfig.model_validate({"llm": {"base_url": OWN_LLM_URL}}),
        api_key=LLM_KEY,
    )
    db_session.commit()
    seeded = seed_run(run.id, finished=True)
    return get_run(db_session, owner, run.id), seeded


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def test_write_run_directory(db_session: Session, seeded_run: Any, tmp_path: Path) -> None:
    run, seeded = seeded_run
    root = write_run_directory(db_session, run, tmp_path / "out")
    # The run's stored config: what it was created with, the game's fitness weights written in.
    weights = DEFAULT_FITNESS_WEIGHTS["podracing"]
    stored = EvolutionConfig(
        llm=LlmConfig(base_url=OWN_LLM_URL), evaluation=EvolutionEvaluationConfig(fitness_weights=weights)
    )
    assert read_json(root / "config.json") == stored.model_dump(mode="json")
    summary = read_json(root / "summary.json")
    assert summary["status"] == "queued"
    assert summary["generations"] == 3
    assert summary["best_program"] == "p2"
    assert summary["best_fitness"] == 0.7
    assert summary["spend"] == {"usd": 0.014, "tokens": 4680, "llm_calls": 3}
    assert summary["termination_reason"] == "max generations"

    log = [json.loads(line) for line in (root / "evolution_log.jsonl").read_text().splitlines()]
    assert len(log) == len(seeded.events)
    assert set(log[0]) == {"timestamp", "event", "generation", "data"}
    assert log[1]["event"] == "root_decision"
    assert log[1]["data"]["reasoning"].startswith("Start by")
    root_log = [json.loads(line) for line in (root / "root_llm_log.jsonl").read_text().splitlines()]
    kinds = [line["event"] for line in root_log]
    assert "run_started" not in kinds
    assert {
        "root_decision",
        "fallback",
        "parameters_changed",
        "generation_advanced",
        "terminated",
        "llm_call",
    } == set(kinds)
    call = next(line for line in root_log if line["event"] == "llm_call")
    assert call["data"]["prompt_tokens"] == 1200
    assert call["data"]["cost_usd"] == 0.004
    assert call["data"]["latency_ms"] == 900.0
    assert call["data"]["status"] == "ok"

    gen1 = root / "generations" / "gen_001"
    gsum = read_json(gen1 / "generation_summary.json")
    assert gsum["selected"] == ["p2"]
    assert gsum["reasoning"] == "p2 boosts well"
    assert gsum["stats"]["best"] == 0.7
    p2 = gen1 / "programs" / "p00002"
    assert (p2 / "code.py").read_text() == CHILD_CODE
    metrics = read_json(p2 / "metrics.json")
    assert metrics["fitness"] == 0.7
    assert metrics["cell"] == [3, 2]
    assert metrics["stage"] == "tournament"
    assert metrics["descriptors"] == {"aggression": 0.7, "accuracy": 0.45}
    assert metrics["feedback"] == {"summary": "wins races"}
    assert "per_opponent" in metrics["metrics"]
    meta = read_json(p2 / "metadata.json")
    assert meta["id"] == str(seeded.ids["p2"])
    assert meta["generation"] == 1
    assert meta["island"] == 0
    assert meta["origin"] == "diff"
    assert meta["status"] == "evaluated"
    assert meta["focus"] == "boost on straights"
    assert meta["explanation"] == "boost when aligned"
    assert meta["created_at"]
    parent = read_json(p2 / "parent_info.json")
    assert parent == {"parent": "p1", "parent_fitness": 0.4, "inspirations": ["p1"], "diff": CHILD_DIFF}
    assert read_json(root / "generations/gen_000/programs/p00001/parent_info.json")["parent"] is None

    calls = sorted(p.name for p in (gen1 / "llm_calls").iterdir())
    assert calls == ["g1_child_p2_a.json", "g1_child_p4.json"]
    child = read_json(gen1 / "llm_calls" / "g1_child_p2_a.json")
    assert child["prompt"][0]["content"] == "you write podracing bots"
    assert child["answer"] == "<<<SEARCH ... >>>"
    assert child["prompt_tokens"] == 3000
    assert child["cost_usd"] == 0.01
    assert not (root / "generations/gen_000/llm_calls").exists()  # the root's call is in the root log

    best = (root / "best_bot.py").read_text()
    assert best.endswith(CHILD_CODE)
    assert best.startswith("# Evolved by Arena")
    compile(best, "best_bot.py", "exec")
    for path in root.rglob("*"):
        if path.is_file():
            assert LLM_KEY not in path.read_text()


def test_run_archive(db_session: Session, seeded_run: Any) -> None:
    run, _ = seeded_run
    blob = run_archive(db_session, run)
    top = archive_name(run)
    assert top == f"evolution-dir-run-{run.id.hex[:8]}"
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        names = tar.getnames()
        assert all(name == top or name.startswith(top + "/") for name in names)
        code = tar.extractfile(f"{top}/generations/gen_001/programs/p00002/code.py")
        assert code is not None
        assert code.read().decode() == CHILD_CODE
        for member in tar.getmembers():
            if member.isfile():
                handle = tar.extractfile(member)
                assert handle is not None
                assert LLM_KEY.encode() not in handle.read()


def test_sanitise() -> None:
    assert sanitise("g1:child:p2/a") == "g1_child_p2_a"
    assert sanitise("../../etc") == "etc"
    assert sanitise("::") == "call"


def test_a_few_games_against_the_hardest_opponent_do_not_decide_the_nash_fitness() -> None:
    # "veteran" is known well; "young" won all six games against the easier opponents and lost
    # both against the hard one, where the mixture rests: on two games its raw Nash fitness is 0.
    rows = [
        (
            "veteran",
            {
                "per_opponent": {
                    "easy": record(30, 0, 10),
                    "mid": record(24, 0, 16),
                    "hard": record(12, 0, 28),
                }
            },
        ),
        (
            "young",
            {"per_opponent": {"easy": record(3, 0, 0), "mid": record(3, 0, 0), "hard": record(0, 0, 2)}},
        ),
    ]
    table = payoff_table(rows)
    raw = nash_average(table, prior_games=0)
    assert raw.mixture["hard"] > 0.95
    assert raw.fitness["young"] == pytest.approx(0.0, abs=0.01)
    shrunk = nash_average(table)
    # Its two games move it from its overall 0.75 toward 0, not all the way.
    assert 0.3 < shrunk.fitness["young"] < 0.75
    # Many games: the estimate is the cell's own win rate, near enough.
    estimates = dict(zip(table.programs, table.estimates(), strict=True))
    assert estimates["veteran"] == pytest.approx([0.75, 0.3, 0.6], abs=0.04)  # easy, hard, mid
    # A cell never played is the program's overall rate (matrix() shows it as even for the pages).
    gap = payoff_table(
        [("a", {"per_opponent": {"x": record(3, 0, 1)}}), ("b", {"per_opponent": {"y": record(1, 0, 1)}})]
    )
    assert gap.estimates()[0] == [0.75, 0.75]
    assert gap.matrix()[0] == [0.75, 0.5]
