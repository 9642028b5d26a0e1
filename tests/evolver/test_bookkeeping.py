"""`modify_parameters` checks its arguments against the tool's own schema again, whoever calls it:
a refusal names the parameter and what is wrong, and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from services.evolver.engine.bookkeeping import Bookkeeping
from services.evolver.engine.judging import Judge
from services.evolver.engine.state import EngineState, ToolError
from services.evolver.evaluation.evaluator import CascadeEvaluator
from services.evolver.store import runs as run_store
from shared.config import get_settings
from tests.support.evolver_engine import config, make_run, run_row

pytestmark = pytest.mark.usefixtures("database_url")


@pytest.fixture
def books() -> Iterator[Bookkeeping]:
    run_id, _ = make_run(config())
    ctx = run_store.load_context(run_id)
    assert ctx is not None
    state = EngineState()
    evaluator = CascadeEvaluator(ctx, get_settings())
    yield Bookkeeping(ctx, state, Judge(ctx, state, evaluator))
    evaluator.close()


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "arguments: missing required property 'updates'"),
        ({"updates": []}, "updates: expected object, got array"),
        ({"updates": {}}, "updates: fewer than 1 properties"),
        ({"updates": {"temperature": 1}}, "updates: unknown property 'temperature' (allowed: "),
        ({"updates": {"quick_matches": 2.0}}, "updates.quick_matches: expected integer, got number"),
        ({"updates": {"quick_matches": True}}, "updates.quick_matches: expected integer, got boolean"),
        ({"updates": {"exploration_ratio": "0.5"}}, "updates.exploration_ratio: expected number, got string"),
        ({"updates": {"exploration_ratio": 3}}, "updates.exploration_ratio: 3 is above the maximum 1.0"),
        ({"updates": {"migration_interval": 0}}, "updates.migration_interval: 0 is below the minimum 1"),
        ({"updates": {"exploration_ratio": float("inf")}}, "updates.exploration_ratio: inf is not a finite"),
    ],
)
def test_a_refused_update_says_where_and_changes_nothing(
    books: Bookkeeping, arguments: dict[str, Any], expected: str
) -> None:
    before = run_row(books.ctx.id).parameters
    with pytest.raises(ToolError) as refused:
        books.modify_parameters(arguments, "parameters:0")
    assert str(refused.value).startswith(expected), str(refused.value)
    assert run_row(books.ctx.id).parameters == before


def test_an_accepted_update_is_stored_with_the_parameters_types(books: Bookkeeping) -> None:
    result = books.modify_parameters(
        {"updates": {"quick_matches": 1, "exploration_ratio": 1}}, "parameters:0"
    )
    stored = run_row(books.ctx.id).parameters
    assert stored["quick_matches"] == 1
    assert stored["exploration_ratio"] == 1.0
    assert isinstance(stored["exploration_ratio"], float)
    assert result["parameters"] == stored
