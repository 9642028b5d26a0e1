"""The surrogate over named constants: what it parses, what it fits, and that the built-in child
screened by it moves constants the way the table says is better."""

from __future__ import annotations

import math
import random

import pytest

from services.evolver.llm import prompts
from services.evolver.llm.builtin import builtin_child_answer
from services.evolver.search.diffs import apply_blocks, parse_blocks
from services.evolver.search.surrogate import (
    MAX_TABLE_CHARS,
    Scored,
    Surrogate,
    TableRow,
    best_predicted,
    named_constants,
    parse_table,
    render_table,
)
from services.evolver.seeds import seed_program

PROGRAM = """\
import math

RANGE = 10
LEAD: float = 0.5
BACK = -2.5
FLAG = True
NAME = "x"
PAIR = (1, 2)
TICKS = 1e3


def decide(state):
    INSIDE = 3
    return []
"""


def test_named_constants_are_the_top_level_numeric_assignments() -> None:
    assert named_constants(PROGRAM) == {"RANGE": 10.0, "LEAD": 0.5, "BACK": -2.5, "TICKS": 1000.0}
    assert named_constants("def broken(:\n") == {}


def test_the_table_round_trips_and_is_cut_from_its_oldest_rows() -> None:
    names = ["RANGE", "LEAD", "BACK"]
    rows = [
        TableRow("p1", 0.5, 9, {"RANGE": 10.0, "LEAD": 0.5, "BACK": -2.5}),
        TableRow("p7", 0.625, 18, {"RANGE": 12.5, "BACK": -2.0}),
    ]
    text = render_table(names, rows)
    assert text.splitlines() == [
        "constants: RANGE LEAD BACK",
        "p1 0.500 (9 matches): 10 0.5 -2.5",
        "p7 0.625 (18 matches): 12.5 - -2",
    ]
    assert parse_table(f"prose before\n{text}\nnot a row\np9 0.5 (9 matches): 1 2\n") == [
        Scored({"RANGE": 10.0, "LEAD": 0.5, "BACK": -2.5}, 0.5, 9),
        Scored({"RANGE": 12.5, "BACK": -2.0}, 0.625, 18),
    ]
    many = [TableRow(f"p{i}", 0.5, 9, {"RANGE": float(i + 1)}) for i in range(3_000)]
    cut = render_table(["RANGE"], many)
    assert len(cut) <= MAX_TABLE_CHARS
    assert cut.splitlines()[-1].startswith("p2999 ")
    assert "\np0 " not in cut


def _synthetic(centre: dict[str, float], count: int, slopes: dict[str, float], seed: int) -> list[Scored]:
    """Programs around `centre` whose fitness rises by `slopes[name]` per e-fold of that constant,
    with match noise."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        constants = {
            name: value * math.exp(rng.gauss(0, 0.5)) if rng.random() < 0.3 else value
            for name, value in centre.items()
        }
        fitness = 0.5 + sum(
            slope * math.log(constants[name] / centre[name]) for name, slope in slopes.items()
        )
        rows.append(Scored(constants, fitness + rng.gauss(0, 0.05), 9))
    return rows


def test_the_fit_recovers_which_way_each_constant_should_move() -> None:
    centre = {"A": 10.0, "B": 2.0, "C": -1.5, "D": 0.3}
    rows = _synthetic(centre, 120, {"A": 0.1, "B": -0.08}, seed=1)
    model = Surrogate.fit(centre, rows)
    assert model is not None
    slopes = dict(zip(model.names, model.slopes, strict=True))
    assert slopes["A"] > 0.05
    assert slopes["B"] < -0.04
    assert abs(slopes["C"]) < 0.03
    assert abs(slopes["D"]) < 0.03
    better = model.predict({**centre, "A": 20.0, "B": 1.0})
    worse = model.predict({**centre, "A": 5.0, "B": 4.0})
    assert better is not None
    assert worse is not None
    assert better > 0.57 > 0.43 > worse  # truth: 0.625 and 0.375
    assert model.predict({**centre, "C": 1.5}) is None, "the other sign is outside the model"
    assert Surrogate.fit(centre, rows[:5]) is None, "too few rows for even the slopes"


def test_best_predicted_keeps_the_step_up_the_slope() -> None:
    parent = "A = 10.0\nB = 2.0\n"
    rows = _synthetic({"A": 10.0, "B": 2.0}, 60, {"A": 0.1}, seed=2)
    candidates = ["A = 8.0\nB = 2.0\n", "A = 10.0\nB = 2.5\n", "A = 14.0\nB = 2.0\n"]
    assert best_predicted(parent, candidates, rows) == 2
    assert best_predicted(parent, candidates, rows[:3]) == 0, "no surrogate: the first step"


def test_optimism_favours_a_direction_no_program_has_tried() -> None:
    """Fitted with optimism, a constant the rows never moved has a slope held at zero by the
    prior alone, so a step along it has a wider upper bound than an equal step along a constant
    the rows measured flat; without optimism both predict the same."""
    centre = {"A": 10.0, "B": 2.0, "U": 4.0}
    rows = [row for row in _synthetic({"A": 10.0, "B": 2.0}, 90, {"A": 0.1}, seed=3)]
    rows = [Scored({**row.constants, "U": 4.0}, row.fitness, row.matches) for row in rows]
    plain = Surrogate.fit(centre, rows)
    optimistic = Surrogate.fit(centre, rows, optimism=1.0)
    assert plain is not None
    assert optimistic is not None
    along_b, along_u = {**centre, "B": 3.0}, {**centre, "U": 6.0}
    assert plain.predict(along_b) == pytest.approx(plain.predict(along_u), abs=0.01)
    assert plain.upper(along_u, 1.0) == plain.predict(along_u), "no covariance without optimism"
    bonus_b = optimistic.upper(along_b, 1.0) - optimistic.predict(along_b)  # type: ignore[operator]
    bonus_u = optimistic.upper(along_u, 1.0) - optimistic.predict(along_u)  # type: ignore[operator]
    assert bonus_u > 1.5 * bonus_b > 0
    candidates = ["A = 10.0\nB = 3.0\nU = 4.0\n", "A = 10.0\nB = 2.0\nU = 6.0\n"]
    parent = "A = 10.0\nB = 2.0\nU = 4.0\n"
    assert best_predicted(parent, candidates, rows, optimism=2.0) == 1


def _net_log_change(parent: str, child: str) -> float:
    before, after = named_constants(parent), named_constants(child)
    return sum(math.log(after[name] / before[name]) for name in before if name in after and before[name] != 0)


@pytest.mark.slow
def test_the_built_in_child_follows_the_table() -> None:
    """With a table in which every constant is better larger, the screened child's steps mostly
    raise constants; without the table they go either way."""
    seed = seed_program("battle")
    centre = {name: value for name, value in named_constants(seed).items() if value != 0}
    rows = _synthetic(centre, 150, dict.fromkeys(centre, 0.05), seed=3)
    table = render_table(
        list(named_constants(seed)),
        [TableRow(f"p{i + 1}", row.fitness, row.matches, row.constants) for i, row in enumerate(rows)],
    )

    def share_up(with_table: bool) -> float:
        ups = moved = 0
        for index in range(30):
            prompt = prompts.child_prompt(
                f"generation 1, child {index}",
                "Tune the numeric constants.",
                "p0",
                seed,
                {},
                0.5,
                [],
                None,
                table if with_table else None,
            )
            answer = builtin_child_answer([{"role": "user", "content": prompt}])
            child = apply_blocks(seed, parse_blocks(answer))
            change = _net_log_change(seed, child)
            if change != 0:
                moved += 1
                ups += change > 0
        assert moved >= 20
        return ups / moved

    screened, blind = share_up(with_table=True), share_up(with_table=False)
    assert screened >= 0.85, (screened, blind)
    assert screened >= blind + 0.2, (screened, blind)
