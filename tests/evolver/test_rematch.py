"""Racing (`evaluation.rematch`): the programs kept as parents replay every generation's new matches
and are judged on all their matches, so a program that drew lucky matches once loses its place;
the run ends with a last round for its leaders. Real database, sandboxes and matches."""

from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from services.evolver.engine.judging import FINAL_MAX_ROUNDS, FINAL_MIN_MATCHES, next_final_round
from services.evolver.evaluation.fitness import fitness
from services.evolver.evaluation.records import MatchRecord
from services.evolver.search.code import normalised_hash
from services.evolver.seeds import seed_program
from services.evolver.store import evaluations as evaluation_store
from services.evolver.store import generations as generation_store
from services.evolver.store import programs as program_store
from shared.db.models import EvolutionProgram
from shared.evolution import EvolutionConfig
from shared.evolution.payoff import nash_average, payoff_table
from shared.states import EvolutionEventKind, JobStatus, ProgramOrigin, ProgramStatus
from tests.support.evolver_engine import config, drive, events, make_run, programs, run_row

pytestmark = pytest.mark.usefixtures("database_url")

QUICK = 2


def scored(records: list[dict[str, object]]) -> list[MatchRecord]:
    return [
        MatchRecord.from_json({k: v for k, v in r.items() if k != "stage"})
        for r in records
        if r["stage"] in ("quick", "tournament")
    ]


RUN_WEIGHTS = {"win_rate": 0.5, "kill_rate": 0.5}


@pytest.mark.slow
def test_kept_parents_replay_each_generation_and_are_judged_on_all_their_matches() -> None:
    run_id, job_id = make_run(
        config(
            limits={"max_generations": 3, "max_children_per_generation": 2},
            evaluation={
                "quick_matches": QUICK,
                "match_seeds": "generation",
                "rematch": True,
                "fitness_weights": RUN_WEIGHTS,
            },
            search={"islands": 1},
            random_seed=3,
        )
    )
    assert drive(job_id) == JobStatus.FINISHED
    rows = {row.id: row for row in programs(run_id)}
    with_generations: dict[int, list[str]] = {}
    for number in range(3):
        generation = generation_store.generation_row(run_id, number)
        assert generation is not None
        with_generations[number] = [str(i) for i in generation.selected_ids or []]
    # The stagnation rule reads, per closed generation, when its field's leader was made.
    recorded = [
        (number, gen.stats["leader"]["generation"])
        for number in range(3)
        if (gen := generation_store.generation_row(run_id, number)) is not None and gen.closed_at is not None
    ]
    assert len(recorded) >= 2
    assert all(made <= number for number, made in recorded)
    assert generation_store.field_leader_generations(run_id) == [made for _, made in recorded]
    rematched = 0
    for number in (1, 2):
        for selected in with_generations[number - 1]:
            row = next(r for r in rows.values() if str(r.id) == selected)
            if row.generation == number:
                continue
            rematched += 1
            assert f"g{number}" in row.metrics["rounds"], (row.seq, row.metrics["rounds"])
    assert rematched >= 2, "parents kept from one generation to the next were rematched"
    for row in rows.values():
        if row.status != ProgramStatus.EVALUATED:
            continue
        rounds = row.metrics["rounds"]
        assert len(rounds) == len(set(rounds)), "no round played twice"
        assert rounds[0] == f"g{row.generation}"
        records = scored(row.feedback["records"])
        # Every round played the quick matches again, on new seeds; the fitness is over all of them.
        assert len(records) == QUICK * len(rounds) == row.metrics["matches"]
        assert len({r.seed for r in records}) == len(records)
        expected = fitness("battle", records, RUN_WEIGHTS)  # the run's own weights, not the defaults
        assert row.fitness == pytest.approx(expected, abs=1e-6)
        assert set(row.metrics["round_seconds"]) == set(rounds)
    finals = [row for row in rows.values() if "final" in (row.metrics or {}).get("rounds", [])]
    run = run_row(run_id)
    evaluated = [r for r in rows.values() if r.status == ProgramStatus.EVALUATED]
    leaders = sorted(evaluated, key=lambda r: (-(r.fitness or 0.0), r.seq))[:4]
    assert all(r in finals for r in leaders), "the leaders at the end all played the last round"
    for r in leaders:
        # Each leader played final rounds, in order, until it had played enough matches in all.
        played = [x for x in r.metrics["rounds"] if x == "final" or x.startswith("final-")]
        assert played == ["final", *(f"final-{n}" for n in range(2, len(played) + 1))]
        assert r.metrics["matches"] >= FINAL_MIN_MATCHES or len(played) == FINAL_MAX_ROUNDS
    assert len([x for x in leaders[0].metrics["rounds"] if x.startswith("final")]) == FINAL_MAX_ROUNDS
    leader = leaders[0]
    assert run.best_program_id == leader.id
    assert run.best_fitness == leader.fitness
    assert run.best_program_id in {r.id for r in finals}
    # Every evaluated program's stored Nash fitness is the one of the run's payoff table.
    nash = nash_average(payoff_table((f"p{r.seq}", r.metrics) for r in evaluated)).fitness
    assert len(nash) == len(evaluated)
    for r in evaluated:
        assert r.nash_fitness == pytest.approx(nash[f"p{r.seq}"], abs=1e-5), r.seq
    rematch_events = events(run_id, EvolutionEventKind.PROGRAM_REMATCHED)
    assert len(rematch_events) == sum(len(r.metrics["rounds"]) - 1 for r in evaluated)

    # Saving a round again changes nothing (a resumed chunk finds it done).
    row = finals[0]
    again = evaluation_store.save_rematch(
        run_id,
        row.id,
        "final",
        evaluation_store.EvaluationRow(ProgramStatus.EVALUATED, "done", 0.0, {}, {}, None, {}, None),
        round_generation=None,
        promotion_threshold=1.0,
    )
    assert again == evaluation_store.Saved(False, None)
    assert programs(run_id)[row.seq].fitness == row.fitness


def test_a_leader_plays_final_rounds_until_it_has_played_enough_matches() -> None:
    def row(rounds: list[str], matches: int) -> EvolutionProgram:
        return EvolutionProgram(metrics={"rounds": rounds, "matches": matches})

    assert next_final_round(row(["g19"], 9)) == "final"
    assert next_final_round(row(["g19", "final"], 18)) == "final-2"
    assert next_final_round(row(["g19", "final", "final-2"], FINAL_MIN_MATCHES - 1)) == "final-3"
    # An old parent with plenty of matches plays one final round, as every leader does.
    assert next_final_round(row(["g3", "g4"], FINAL_MIN_MATCHES + 20)) == "final"
    assert next_final_round(row(["g3", "g4", "final"], FINAL_MIN_MATCHES + 29)) is None
    finals = ["final", *(f"final-{n}" for n in range(2, FINAL_MAX_ROUNDS + 1))]
    assert next_final_round(row(["g19", *finals], 2 * FINAL_MAX_ROUNDS)) is None


def test_rematch_needs_new_matches_every_generation() -> None:
    with pytest.raises(ValidationError, match="rematch needs match_seeds 'generation'"):
        EvolutionConfig.model_validate({"evaluation": {"rematch": True}})
    assert EvolutionConfig.model_validate(
        {"evaluation": {"rematch": True, "match_seeds": "generation"}}
    ).evaluation.rematch


def _evaluated(run_id: uuid.UUID, key: str, source: str, fitness_value: float) -> uuid.UUID:
    made = program_store.insert_program(
        run_id,
        program_store.NewProgram(
            created_key=key,
            generation=0,
            island=0,
            origin=ProgramOrigin.SEED,
            status=ProgramStatus.PENDING,
            code=source,
            code_hash=normalised_hash(source),
        ),
    )
    row = evaluation_store.EvaluationRow(
        ProgramStatus.EVALUATED, "done", fitness_value, {"rounds": ["g0"]}, {}, None, {}, None
    )
    evaluation_store.save_evaluation(run_id, made.program.id, row, promotion_threshold=1.0)
    return made.program.id


def test_a_rematch_that_sinks_the_best_hands_the_lead_on_and_promotes_the_new_leader() -> None:
    run_id, _ = make_run(config())
    seed = seed_program("battle")
    lucky = _evaluated(run_id, "a", seed, 0.9)
    steady = _evaluated(run_id, "b", seed.replace("ENGAGE_RANGE = 10.0", "ENGAGE_RANGE = 12.0"), 0.7)
    assert run_row(run_id).best_program_id == lucky
    sunk = evaluation_store.EvaluationRow(
        ProgramStatus.EVALUATED, "done", 0.4, {"matches": 18}, {}, None, {}, None
    )
    saved = evaluation_store.save_rematch(
        run_id, lucky, "g1", sunk, round_generation=1, promotion_threshold=0.6
    )
    run = run_row(run_id)
    assert run.best_program_id == steady
    assert run.best_fitness == 0.7
    steady_row = program_store.program(steady)
    assert steady_row is not None
    assert steady_row.promoted_version_id is not None
    assert saved == evaluation_store.Saved(True, steady_row.promoted_version_id, steady_row.seq)
    lucky_row = program_store.program(lucky)
    assert lucky_row is not None
    assert lucky_row.fitness == 0.4
    assert lucky_row.metrics["rounds"] == ["g0", "g1"]
    assert lucky_row.metrics["round"] == 1
