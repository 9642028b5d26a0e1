"""The built-in mutation operator and the seed programs: pure functions, no services."""

from __future__ import annotations

import ast
import functools
import random

import pytest

from services.evolver.search.code import normalised_hash, unified_diff
from services.evolver.search.diffs import apply_blocks, parse_blocks, render_blocks
from services.evolver.search.mutation import Mutation, MutationError, MutationKind, mutate
from services.evolver.seeds import SEED_NAMES, seed_program
from shared.sandbox.gate import check_source
from shared.states import HostedContract

PROGRAM = '''"""A small bot."""

import math

RANGE = 8.0  # how far to look
STEPS = 3


def helper(x):
    return x * 1.5


def decide(observation):
    # read the input
    distance = observation["distance"]
    items = observation["items"]
    if distance < RANGE and items[0] > 4:
        move = helper(distance)  # closer
    else:
        move = -2.5
    side = 1.0 if distance >= 12.5 else -1.0
    return {"move": move * side, "count": len(items) == 2, "turn": math.pi / 2}
'''

INSPIRATION = PROGRAM.replace("    return x * 1.5\n", "    y = x + 0.25\n    return y * 2.0\n").replace(
    "STEPS = 3", "STEPS = 7"
)


parent_hash = functools.lru_cache(maxsize=8)(normalised_hash)


def check(mutation: Mutation, source: str) -> None:
    """Parses, differs from the parent, and its blocks turn the parent into it exactly."""
    ast.parse(mutation.source)
    assert normalised_hash(mutation.source) != parent_hash(source)
    assert mutation.blocks
    assert apply_blocks(source, mutation.blocks) == mutation.source
    assert parse_blocks(render_blocks(mutation.blocks)) == list(mutation.blocks)
    assert mutation.description


def mutations_by_kind(source: str, inspirations: tuple[str, ...] = ()) -> dict[MutationKind, Mutation]:
    found: dict[MutationKind, Mutation] = {}
    wanted = len(MutationKind) if inspirations else len(MutationKind) - 1
    for seed in range(400):
        mutation = mutate(source, random.Random(seed), inspirations)
        check(mutation, source)
        found.setdefault(mutation.kind, mutation)
        if len(found) == wanted:
            break
    return found


def test_every_kind_appears_and_applies() -> None:
    found = mutations_by_kind(PROGRAM, (INSPIRATION,))
    assert set(found) == set(MutationKind)


def test_edits_touch_only_their_lines() -> None:
    for mutation in mutations_by_kind(PROGRAM, (INSPIRATION,)).values():
        diff = unified_diff(PROGRAM, mutation.source, "a", "b")
        changed = [
            line for line in diff.splitlines()[2:] if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        limit = 8 if mutation.kind in (MutationKind.BRANCH_SWAP, MutationKind.CROSSOVER) else 2
        assert 0 < len(changed) <= limit, (mutation.kind, diff)
        # Comments survive every edit.
        assert "# how far to look" in mutation.source
        assert "# read the input" in mutation.source


def test_constant_mutation_keeps_types_and_skips_structure() -> None:
    seen: set[str] = set()
    for seed in range(300):
        mutation = mutate(PROGRAM, random.Random(seed))
        if mutation.kind is not MutationKind.CONSTANT:
            continue
        tree = ast.parse(mutation.source)
        values = {
            node.targets[0].id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
        }
        assert isinstance(values["RANGE"], float)
        assert isinstance(values["STEPS"], int)
        assert values["STEPS"] > 0
        # Indices, len() comparisons and fractions of pi are structure, never tuned.
        assert "items[0]" in mutation.source
        assert "len(items) == 2" in mutation.source
        assert "math.pi / 2" in mutation.source
        seen.add(mutation.description.split(":")[0])
    assert {"RANGE", "STEPS"} <= seen


def test_comparison_mutation() -> None:
    found = mutations_by_kind(PROGRAM)
    mutation = found[MutationKind.COMPARISON]
    before = {line for line in PROGRAM.splitlines()}
    changed = [line for line in mutation.source.splitlines() if line not in before]
    assert len(changed) == 1
    assert any(op in changed[0] for op in ("<=", ">", ">=", "<"))


def test_branch_swap_exchanges_the_bodies() -> None:
    swaps = set()
    for seed in range(400):
        mutation = mutate(PROGRAM, random.Random(seed))
        if mutation.kind is MutationKind.BRANCH_SWAP:
            swaps.add(mutation.source)
    assert (
        PROGRAM.replace(
            "        move = helper(distance)  # closer\n    else:\n        move = -2.5\n",
            "        move = -2.5\n    else:\n        move = helper(distance)  # closer\n",
        )
        in swaps
    )
    assert PROGRAM.replace("1.0 if distance >= 12.5 else -1.0", "-1.0 if distance >= 12.5 else 1.0") in swaps


def test_crossover_takes_functions_and_constants_from_inspirations() -> None:
    sources = set()
    for seed in range(400):
        mutation = mutate(PROGRAM, random.Random(seed), [INSPIRATION])
        if mutation.kind is MutationKind.CROSSOVER:
            sources.add(mutation.source)
    assert PROGRAM.replace("    return x * 1.5\n", "    y = x + 0.25\n    return y * 2.0\n") in sources
    assert PROGRAM.replace("STEPS = 3", "STEPS = 7") in sources


def test_crossover_recombines_several_named_constants_at_once() -> None:
    """Uniform crossover: a child can take any proper subset of the constants on which an
    inspiration differs, in one step, leaving the rest of the parent as it was."""

    def program(values: dict[str, str]) -> str:
        lines = [f"{name} = {value}" for name, value in values.items()]
        return "\n".join(lines) + "\n\n\ndef decide(o):\n    return {'x': A + B + C + D}\n"

    ours = {"A": "1.0", "B": "2.0", "C": "3", "D": "-4.0"}
    theirs = {"A": "1.5", "B": "0.5", "C": "9", "D": "-8.0"}
    parent = program(ours)
    subsets = set()
    for seed in range(300):
        mutation = mutate(parent, random.Random(seed), [program(theirs)])
        if "recombined" not in mutation.description:
            continue
        check(mutation, parent)
        assigned = dict(line.split(" = ") for line in mutation.source.splitlines()[:4])
        taken = frozenset(name for name in assigned if assigned[name] == theirs[name])
        assert all(assigned[name] == ours[name] for name in assigned if name not in taken)
        assert 1 <= len(taken) < 4
        subsets.add(taken)
    assert any(len(subset) >= 2 for subset in subsets)
    assert len(subsets) >= 6


def test_crossover_skips_functions_that_need_missing_names() -> None:
    other = PROGRAM.replace("    return x * 1.5\n", "    return x * EXTRA\n") + "\nEXTRA = 2.0\n"
    for seed in range(200):
        mutation = mutate(PROGRAM, random.Random(seed), [other])
        assert "EXTRA" not in mutation.source


def test_deterministic_for_equal_rng_states() -> None:
    for seed in range(30):
        one = mutate(PROGRAM, random.Random(seed), [INSPIRATION])
        two = mutate(PROGRAM, random.Random(seed), [INSPIRATION])
        assert one == two
    assert len({mutate(PROGRAM, random.Random(seed)).source for seed in range(30)}) > 10


def test_widened_blocks_are_unique() -> None:
    source = "def f(x):\n    y = 2.5\n    return y\n\n\ndef g(x):\n    y = 2.5\n    return y\n"
    for seed in range(50):
        mutation = mutate(source, random.Random(seed))
        check(mutation, source)
        for block in mutation.blocks:
            assert block.search.count("y = 2.5") <= 1
            assert block.search.startswith("def ") or "y = 2.5" not in block.search


def test_keeps_line_endings_and_missing_final_newline() -> None:
    source = "LIMIT = 4.0\nSPEED = 2.0"
    mutation = mutate(source, random.Random(1))
    assert not mutation.source.endswith("\n")
    assert apply_blocks(source, mutation.blocks) == mutation.source


def test_nothing_to_mutate() -> None:
    with pytest.raises(MutationError):
        mutate("import math\n\n\ndef decide(observation):\n    return observation\n", random.Random(0))
    with pytest.raises(MutationError, match="does not parse"):
        mutate("def f(:\n", random.Random(0))


# ---------------------------------------------------------------- seeds
@pytest.mark.parametrize(("game", "name"), [(g, n) for g, names in SEED_NAMES.items() for n in names])
def test_seeds_pass_the_static_gate(game: str, name: str) -> None:
    source = seed_program(game, name)
    assert check_source(source, contract=HostedContract.DECIDE) == []
    assert "def decide(" in source


def test_unknown_seed() -> None:
    with pytest.raises(ValueError, match="no seed programs"):
        seed_program("chess")
    with pytest.raises(ValueError, match="no seed program 'strong'"):
        seed_program("battle", "strong")


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(SEED_NAMES))
def test_mutated_seeds_still_pass_the_gate(game: str) -> None:
    source = seed_program(game)
    kinds = set()
    for seed in range(50):
        mutation = mutate(source, random.Random(seed))
        check(mutation, source)
        kinds.add(mutation.kind)
        assert check_source(mutation.source, contract=HostedContract.DECIDE) == [], mutation.description
    assert MutationKind.CONSTANT in kinds


def test_leaves_f_strings_and_commented_comparisons_alone() -> None:
    source = 'def f(x):\n    return f"{x * 2.5:.3f}" if (x <  # note < here\n        4.5) else ""\n'
    for seed in range(60):
        mutation = mutate(source, random.Random(seed))
        check(mutation, source)
        assert "{x * 2.5:.3f}" in mutation.source
        assert "x <  # note < here" in mutation.source


def test_several_mutations_in_a_row_are_one_change_whose_blocks_apply() -> None:
    from services.evolver.search.diffs import apply_blocks
    from services.evolver.search.mutation import mutate_several
    from services.evolver.seeds import seed_program

    source = seed_program("battle")
    steps = []
    for seed in range(30):
        result = mutate_several(source, random.Random(seed))
        assert result.source != source
        assert apply_blocks(source, result.blocks) == result.source
        assert mutate_several(source, random.Random(seed)) == result, "deterministic"
        steps.append(result.description.count("; ") + 1)
    assert min(steps) == 1, steps
    assert max(steps) >= 2, steps


def test_named_constants_take_log_normal_steps_far_enough_to_leave_a_plateau() -> None:
    """A named constant's good value is often several times the written one: steps reach beyond
    x0.5..2 now and then, an int constant moves by more than one, and types and signs hold."""
    ratios: list[float] = []
    int_moves: set[int] = set()
    for seed in range(600):
        mutation = mutate(PROGRAM, random.Random(seed))
        if mutation.kind is not MutationKind.CONSTANT:
            continue
        values = {
            node.targets[0].id: node.value.value
            for node in ast.parse(mutation.source).body
            if isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
        }
        if values["RANGE"] != 8.0:
            assert isinstance(values["RANGE"], float)
            assert values["RANGE"] > 0
            ratios.append(values["RANGE"] / 8.0)
        if values["STEPS"] != 3:
            assert isinstance(values["STEPS"], int)
            assert values["STEPS"] > 0
            int_moves.add(values["STEPS"] - 3)
    assert len(ratios) >= 50
    assert max(ratios) > 2.0, (min(ratios), max(ratios))
    assert min(ratios) < 0.5, (min(ratios), max(ratios))
    assert 0.6 < sorted(ratios)[len(ratios) // 2] < 1.6, "most steps stay near the old value"
    assert any(abs(move) > 1 for move in int_moves), int_moves


@pytest.mark.slow
def test_cached_candidates_give_the_changes_a_fresh_parse_gives() -> None:
    """The operator caches each program's candidate changes (a screened child draws several steps
    from one parent); a draw that uses some up must leave the next draw's candidates whole."""
    from services.evolver.search import mutation

    parent = seed_program("battle")
    inspiration = parent.replace("ENGAGE_RANGE = 10.0", "ENGAGE_RANGE = 14.0").replace(
        "MIN_RANGE = 5.0", "MIN_RANGE = 9.0"
    )

    def draw(seed: int, cached: bool) -> tuple[str, str]:
        if not cached:
            mutation._candidate_pools.cache_clear()
            mutation._outline.cache_clear()
        step = mutation.mutate_several(parent, random.Random(seed), [inspiration])
        return step.source, step.description

    fresh = [draw(seed, cached=False) for seed in range(40)]
    assert [draw(seed, cached=True) for seed in range(40)] == fresh
    assert len({source for source, _ in fresh}) > 30
    assert any("inspiration" in description for _, description in fresh)
