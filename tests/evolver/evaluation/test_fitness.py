"""Fitness, behaviour descriptors and grid cells from hand-made match records."""

from __future__ import annotations

import pytest

from services.evolver.evaluation.cascade import EvalStage, Evaluation
from services.evolver.evaluation.fitness import (
    AGGRESSION_CAP,
    cell,
    components,
    damage_share,
    descriptor_names,
    descriptors,
    fitness,
    kill_rate,
    win_rate,
)
from services.evolver.evaluation.records import MatchRecord, Outcome, derive_seed, outcome_of
from services.evolver.evaluation.settings import EvaluationSettings
from shared.evolution.config import FITNESS_COMPONENTS


def battle(outcome: Outcome, kills: float, enemy_units: float = 3, **mine: float) -> MatchRecord:
    return MatchRecord(
        opponent="builtin:x",
        seat=0,
        outcome=outcome,
        candidate_metrics={"kills": kills, "units_alive": 3, "deaths": 0, **mine},
        opponent_metrics={"units_alive": enemy_units - kills, "deaths": kills},
        turns=300,
        game_seconds=60.0,
    )


def race(outcome: Outcome, own: float, theirs: float, **mine: float) -> MatchRecord:
    return MatchRecord(
        opponent="builtin:y",
        seat=1,
        outcome=outcome,
        candidate_metrics={"checkpoints": own, **mine},
        opponent_metrics={"checkpoints": theirs},
        turns=200,
    )


def test_outcomes_from_ranks() -> None:
    assert outcome_of([0, 1], 0) is Outcome.WIN
    assert outcome_of([0, 1], 1) is Outcome.LOSS
    assert outcome_of([0, 0], 1) is Outcome.DRAW
    assert [o.points for o in Outcome] == [1.0, 0.5, 0.0]


def test_battle_fitness_is_a_fifth_wins_and_four_fifths_damage_share() -> None:
    records = [
        battle(Outcome.WIN, 3, damage_dealt=300, damage_taken=100),
        battle(Outcome.DRAW, 1, damage_dealt=100, damage_taken=100),
        battle(Outcome.LOSS, 0),  # nobody was hurt: an even fight
    ]
    assert win_rate(records) == pytest.approx(0.5)
    assert kill_rate(records) == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert damage_share(records) == pytest.approx((0.75 + 0.5 + 0.5) / 3)
    parts = components("battle", records)
    assert set(parts) == {"win_rate", "kill_rate", "damage_share"}
    # What a run's fitness_weights may name (checked at creation) is what the evaluation measures.
    assert tuple(parts) == FITNESS_COMPONENTS["battle"]
    assert tuple(components("podracing", [race(Outcome.WIN, 3, 1)])) == FITNESS_COMPONENTS["podracing"]
    weights = EvaluationSettings().weights("battle")
    assert fitness("battle", records, weights) == pytest.approx(0.2 * 0.5 + 0.8 * 1.75 / 3)


def test_damage_share_counts_friendly_fire_as_taken_and_skips_failed_matches() -> None:
    shot_own_side = battle(Outcome.LOSS, 0, damage_dealt=0, damage_taken=120)
    failed = MatchRecord("builtin:x", 0, Outcome.LOSS, failure="worker died")
    assert damage_share([shot_own_side, failed]) == 0.0
    assert damage_share([failed]) == 0.0


def test_failed_matches_are_left_out_and_no_match_is_zero() -> None:
    failed = MatchRecord("builtin:x", 0, Outcome.LOSS, failure="worker died")
    assert win_rate([battle(Outcome.WIN, 3), failed]) == 1.0
    assert fitness("battle", [failed], {"win_rate": 1.0}) == 0.0
    assert fitness("battle", [], {"win_rate": 1.0}) == 0.0


def test_podracing_fitness_adds_a_small_progress_term() -> None:
    records = [race(Outcome.WIN, 12, 4), race(Outcome.LOSS, 5, 15)]
    parts = components("podracing", records)
    assert parts["win_rate"] == 0.5
    assert parts["progress"] == pytest.approx((0.75 + 0.25) / 2)
    assert fitness("podracing", records, EvaluationSettings().weights("podracing")) == pytest.approx(
        0.9 * 0.5 + 0.1 * 0.5
    )


def test_battle_descriptors() -> None:
    # 3 units for 1 minute firing 150 shots: 50 shots per unit-minute; 60 hits.
    records = [battle(Outcome.WIN, 1, shots=150, hits=60)]
    found = descriptors("battle", records)
    assert list(found) == list(descriptor_names("battle")) == ["aggression", "accuracy"]
    assert found["aggression"] == pytest.approx(50 / AGGRESSION_CAP)
    assert found["accuracy"] == pytest.approx(0.4)
    assert cell(found) == (2, 2)
    assert descriptors("battle", [battle(Outcome.LOSS, 0, shots=0, hits=0)]) == {
        "aggression": 0.0,
        "accuracy": 0.0,
    }
    flood = descriptors("battle", [battle(Outcome.WIN, 0, shots=10_000, hits=10)])
    assert flood["aggression"] == 1.0
    assert cell(flood) == (4, 0)


def test_podracing_descriptors() -> None:
    records = [
        race(Outcome.WIN, 10, 5, collisions=30, boosts_used=2, shields_used=2),
        race(Outcome.LOSS, 10, 5, collisions=0, boosts_used=0, shields_used=0),
    ]
    found = descriptors("podracing", records)
    assert list(found) == ["collisions", "boost_timing"]
    assert found["collisions"] == pytest.approx((100 * 30 / 400) / 30)
    assert found["boost_timing"] == 0.5
    assert descriptors("podracing", [race(Outcome.WIN, 1, 1)])["boost_timing"] == 0.5


def test_cells() -> None:
    assert cell({"a": 0.0, "b": 1.0}) == (0, 4)
    assert cell({"a": 0.19, "b": 0.2}, bins=5) == (0, 1)
    assert cell({"a": 0.5, "b": 0.5}, bins=2) == (1, 1)
    with pytest.raises(ValueError, match="needs exactly two descriptors, got 1"):
        cell({"a": 0.5})


def test_seeds_derive_deterministically() -> None:
    assert derive_seed(1, "quick", 0) == derive_seed(1, "quick", 0)
    assert derive_seed(1, "quick", 0) != derive_seed(1, "quick", 1) != derive_seed(2, "quick", 1)
    assert 0 <= derive_seed(99, "x") < 2**53


def test_records_and_evaluations_round_trip_through_json() -> None:
    import json

    record = battle(Outcome.DRAW, 2, shots=3)
    assert MatchRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    evaluation = Evaluation(
        stage=EvalStage.DONE,
        passed=True,
        fitness=0.5,
        metrics={"win_rate": 0.5},
        descriptors={"aggression": 0.1, "accuracy": 0.2},
        cell=(0, 1),
        feedback={"errors": []},
        records=[{**record.to_json(), "stage": "quick"}],
        message="ok",
    )
    again = Evaluation.from_json(json.loads(json.dumps(evaluation.to_json())))
    assert again == evaluation
    assert again.match_records() == [record]
