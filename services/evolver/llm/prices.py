"""What a model costs, so the evolver can keep a run inside its budget before the provider's invoice
says otherwise.

Prices are list prices in USD per million tokens for common model names. A run may override any of
them (or price a model this table does not know); an unknown model without an override is charged
`DEFAULT_PRICE`, deliberately as dear as the dearest model listed, so that a budget errs on the side
of stopping early rather than overspending.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

BUILTIN_ROOT_MODEL = "arena-builtin-root"
BUILTIN_CHILD_MODEL = "arena-builtin-child"


@dataclass(frozen=True)
class Price:
    """USD per million input (prompt) and output (completion) tokens."""

    input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        for value in (self.input_per_million, self.output_per_million):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"a price must be a finite, non-negative number, not {value!r}")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        spent = max(prompt_tokens, 0) * self.input_per_million
        spent += max(completion_tokens, 0) * self.output_per_million
        return spent / 1_000_000


FREE = Price(0.0, 0.0)

DEFAULT_PRICE = Price(15.0, 75.0)
"""For a model this table does not know: as dear as the dearest listed (claude-opus-4)."""

PRICES: dict[str, Price] = {
    # The built-in root and child run in-process or on the local server: free.
    BUILTIN_ROOT_MODEL: FREE,
    BUILTIN_CHILD_MODEL: FREE,
    # OpenAI
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4-turbo": Price(10.00, 30.00),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    "o1": Price(15.00, 60.00),
    "o1-mini": Price(1.10, 4.40),
    "o3": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    # Anthropic (through an OpenAI-compatible gateway)
    "claude-opus-4": Price(15.00, 75.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-haiku-4-5": Price(1.00, 5.00),
    # Google
    "gemini-2.5-pro": Price(1.25, 10.00),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.0-flash": Price(0.10, 0.40),
    # DeepSeek
    "deepseek-chat": Price(0.27, 1.10),
    "deepseek-reasoner": Price(0.55, 2.19),
    "deepseek-coder": Price(0.27, 1.10),
    # Qwen (Alibaba Cloud list prices; self-hosted ones should be overridden with 0)
    "qwen-max": Price(1.60, 6.40),
    "qwen-plus": Price(0.40, 1.20),
    "qwen-turbo": Price(0.05, 0.20),
    "qwen3-coder-plus": Price(1.00, 5.00),
    "qwen2.5-coder-32b-instruct": Price(0.20, 0.60),
    "qwen2.5-72b-instruct": Price(0.40, 1.20),
    # Mistral
    "mistral-large": Price(2.00, 6.00),
    "codestral": Price(0.30, 0.90),
}

PriceLike = Price | Sequence[float] | Mapping[str, float]
"""An override: a `Price`, an (input, output) pair, or {"input": .., "output": ..}."""

_VERSION_SEPARATORS = ("-", ":", "@", "_")


def _as_price(value: PriceLike) -> Price:
    if isinstance(value, Price):
        return value
    if isinstance(value, Mapping):
        return Price(float(value["input"]), float(value["output"]))
    if len(value) != 2:
        raise ValueError(f"a price pair has two numbers (input, output), not {value!r}")
    return Price(float(value[0]), float(value[1]))


def _normalise(model: str) -> str:
    # "openrouter/anthropic/claude-sonnet-4" and "openai/gpt-4o" are priced by the model's own name.
    return model.strip().lower().rsplit("/", 1)[-1]


def _lookup(model: str, table: Mapping[str, Price]) -> Price | None:
    if model in table:
        return table[model]
    # A dated or tagged release ("gpt-4o-2024-08-06", "claude-sonnet-4-20250514", "qwen-max:latest")
    # costs what its family costs: the longest listed name it extends at a separator.
    best: str | None = None
    for name in table:
        if (
            model.startswith(name)
            and model[len(name)] in _VERSION_SEPARATORS
            and (best is None or len(name) > len(best))
        ):
            best = name
    return table[best] if best is not None else None


def price_for(model: str, overrides: Mapping[str, PriceLike] | None = None) -> Price:
    """The price of `model`: the run's override if it has one, else the table, else the default.

    Override keys are model names (matched like the table, exact name first); the key "*" prices
    every model that neither the overrides nor the table know.
    """
    if overrides:
        table = {_normalise(name): _as_price(value) for name, value in overrides.items() if name != "*"}
        for candidate in (model.strip().lower(), _normalise(model)):
            found = _lookup(candidate, table)
            if found is not None:
                return found
    found = _lookup(_normalise(model), PRICES)
    if found is not None:
        return found
    if overrides and "*" in overrides:
        return _as_price(overrides["*"])
    return DEFAULT_PRICE
