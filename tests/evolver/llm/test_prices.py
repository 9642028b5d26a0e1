from __future__ import annotations

import pytest

from services.evolver.llm import (
    BUILTIN_CHILD_MODEL,
    BUILTIN_ROOT_MODEL,
    DEFAULT_PRICE,
    PRICES,
    Price,
    price_for,
)


def test_listed_and_dated_names() -> None:
    assert price_for("gpt-4o") == Price(2.5, 10.0)
    assert price_for("gpt-4o-2024-08-06") == PRICES["gpt-4o"]
    assert price_for("gpt-4o-mini-2024-07-18") == PRICES["gpt-4o-mini"]
    assert price_for("o3-mini") == PRICES["o3-mini"] != PRICES["o3"]
    assert price_for("claude-sonnet-4-20250514") == PRICES["claude-sonnet-4"]
    assert price_for("openrouter/deepseek/deepseek-chat") == PRICES["deepseek-chat"]
    assert price_for("Qwen-Max:latest") == PRICES["qwen-max"]
    assert price_for(BUILTIN_ROOT_MODEL).cost(10**9, 10**9) == 0 == price_for(BUILTIN_CHILD_MODEL).cost(5, 5)


def test_unknown_models_cost_the_default_unless_overridden() -> None:
    assert price_for("my-local-llama") == DEFAULT_PRICE
    assert price_for("gpt-4.5-preview") == DEFAULT_PRICE  # not priced as gpt-4-anything
    assert all(p.input_per_million <= DEFAULT_PRICE.input_per_million for p in PRICES.values())
    assert all(p.output_per_million <= DEFAULT_PRICE.output_per_million for p in PRICES.values())
    assert price_for("my-local-llama", {"my-local-llama": (0, 0)}) == Price(0, 0)
    assert price_for("my-local-llama", {"*": {"input": 1, "output": 2}}) == Price(1, 2)
    assert price_for("gpt-4o", {"gpt-4o": Price(9, 9), "*": (0, 0)}) == Price(9, 9)
    assert price_for("gpt-4o", {"*": (0, 0)}) == PRICES["gpt-4o"]
    with pytest.raises(ValueError, match=r"a price pair has two numbers \(input, output\)"):
        price_for("x", {"x": (1, 2, 3)})
    with pytest.raises(ValueError, match="must be a finite, non-negative number, not -1"):
        Price(-1, 0)


def test_cost() -> None:
    assert Price(2.5, 10).cost(1_000_000, 100_000) == pytest.approx(3.5)
    assert Price(1, 1).cost(-5, 0) == 0
