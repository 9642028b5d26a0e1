"""The program database's rules without a database: the grid, islands and migration, sampling,
statistics and trends."""

from __future__ import annotations

import random
import uuid

from services.evolver.search.database import (
    Islands,
    ProgramView,
    elites,
    generation_stats,
    occupancy,
    sample,
    trends,
)
from shared.states import ParentSelection, ProgramStatus


def prog(
    seq: int,
    fitness: float | None,
    *,
    generation: int = 0,
    island: int = 0,
    cell: tuple[int, int] | None = (0, 0),
    status: ProgramStatus = ProgramStatus.EVALUATED,
    nash: float | None = None,
) -> ProgramView:
    return ProgramView(uuid.uuid4(), seq, generation, island, status, fitness, cell, nash_fitness=nash)


def test_the_grid_keeps_the_best_program_of_each_cell() -> None:
    a, b, c = prog(0, 0.2, cell=(1, 1)), prog(1, 0.6, cell=(1, 1)), prog(2, 0.1, cell=(3, 0))
    failed = prog(3, 0.9, cell=(2, 2), status=ProgramStatus.FAILED)
    grid = elites([a, b, c, failed])
    assert grid == {(1, 1): b, (3, 0): c}
    filled = occupancy([a, b, c], bins=5, islands=2)
    assert filled["cells_filled"] == 2
    assert filled["cells_total"] == 25
    assert filled["islands_filled"] == 1


def test_migration_moves_each_islands_best_to_the_next_one_once() -> None:
    progs = [prog(0, 0.3, island=0), prog(1, 0.5, island=0), prog(2, 0.4, island=1)]
    islands = Islands(2)
    moves = islands.migrate(progs)
    assert moves == [(0, 1, "p1"), (1, 0, "p2")]
    assert islands.migrate(progs) == [], "a program migrates into an island once"
    assert {p.name for p in islands.pool(progs, 1)} == {"p1", "p2"}
    again = Islands.from_json(2, islands.to_json())
    assert again.migrants == islands.migrants


def test_exploitation_prefers_the_selection_and_nash_fitness_exploration_draws_from_the_grid() -> None:
    weak_farmer = prog(0, 0.9, cell=(0, 0), nash=0.2)
    strong = prog(1, 0.6, cell=(1, 0), nash=0.6)
    other = prog(2, 0.1, cell=(4, 4), island=1)
    progs = [weak_farmer, strong, other]
    rng = random.Random(3)
    picks = [sample(progs, Islands(2), 0, [], rng, exploration_ratio=0.0, inspirations=1) for _ in range(200)]
    counts = {p.parent.name: 0 for p in picks if p is not None}
    for p in picks:
        assert p is not None
        assert p.how == "exploitation"
        assert p.parent.island == 0
        counts[p.parent.name] += 1
    assert counts["p1"] > counts["p0"], "Nash fitness outranks a high plain fitness"
    by_fitness = [
        sample(
            progs,
            Islands(2),
            0,
            [],
            rng,
            exploration_ratio=0.0,
            inspirations=0,
            selection=ParentSelection.FITNESS,
        )
        for _ in range(200)
    ]
    names = [d.parent.name for d in by_fitness if d is not None]
    assert names.count("p0") > names.count("p1"), "a run that asks for it ranks parents by fitness"
    chosen = [
        sample(progs, Islands(2), 0, [str(other.id)], rng, exploration_ratio=0.0, inspirations=0)
        for _ in range(50)
    ]
    assert all(d is not None for d in chosen)
    explored = {
        d.parent.name
        for d in (
            sample(progs, Islands(2), 0, [], rng, exploration_ratio=1.0, inspirations=2) for _ in range(200)
        )
        if d is not None
    }
    assert explored == {"p0", "p1", "p2"}, "exploration reaches every elite, any island"
    draw = sample(progs, Islands(2), 0, [], random.Random(1), exploration_ratio=0.0, inspirations=2)
    assert draw is not None
    assert all(i.id != draw.parent.id for i in draw.inspirations)
    assert (
        sample(
            [prog(0, None, status=ProgramStatus.PENDING)],
            Islands(1),
            0,
            [],
            rng,
            exploration_ratio=0.5,
            inspirations=1,
        )
        is None
    )


def test_statistics_and_trends_count_generations_without_improvement() -> None:
    progs = [
        prog(0, 0.3, generation=0),
        prog(1, 0.5, generation=1, island=1),
        prog(2, 0.4, generation=1),
        prog(3, 0.45, generation=2),
        prog(4, None, generation=2, status=ProgramStatus.REJECTED),
    ]
    stats = generation_stats(progs, 1, islands=2)
    assert stats["best"] == 0.5
    assert stats["median"] == 0.45
    assert stats["islands"]["1"]["best"] == 0.5
    assert generation_stats(progs, 2, islands=2)["rejected"] == 1
    trend = trends(progs, 3)
    assert [r["running_best"] for r in trend["generations"]] == [0.3, 0.5, 0.5, 0.5]
    assert trend["generations_without_improvement"] == 2


def test_with_racing_the_run_improved_when_it_made_the_newest_program_that_led_a_field() -> None:
    """A child that drew lucky matches and was never kept (so never replayed) holds the highest
    figure of the run forever; with racing it must not make the run look stagnant while the field's
    leaders, measured on the same matches, keep being replaced by newer programs. Nor may an old
    program that takes the lead back, when the newer leaders sink, reset the count to its age."""
    lucky = prog(1, 0.9, generation=1)
    parent = ProgramView(uuid.uuid4(), 5, 2, 0, ProgramStatus.EVALUATED, 0.65, (0, 0), last_round=4)
    child = prog(9, 0.7, generation=4)
    progs = [prog(0, 0.4, generation=0), lucky, parent, child]
    assert trends(progs, 4)["generations_without_improvement"] == 3
    # the current field's leader (child, made in 4) is the newest leader
    assert trends(progs, 4, field_leaders=[0, 1, 2, 2])["generations_without_improvement"] == 0

    weaker_child = prog(9, 0.6, generation=4)
    field = [*progs[:3], weaker_child]
    # parent (made in 2) leads generation 4's field: two generations since the newest leader
    assert trends(field, 4, field_leaders=[0, 1, 2, 2])["generations_without_improvement"] == 2
    # a program made in 3 led generation 3 and sank; the old parent leading again changes nothing
    assert trends(field, 4, field_leaders=[0, 1, 2, 3])["generations_without_improvement"] == 1
    # nothing has led a field yet: counted from the start
    assert trends(progs[:1], 3, field_leaders=[])["generations_without_improvement"] == 3
