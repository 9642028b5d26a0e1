"""The evolver's LLM layer: one call shape (`LlmRequest` -> `LlmOutcome`) over any OpenAI-compatible
endpoint (`LlmClient`) or the built-in rule-based models (`BuiltinTransport`, and the local server
in `services.evolver.llm.server`)."""

from services.evolver.llm.builtin import (
    BuiltinTransport,
    builtin_child_answer,
    builtin_completion,
    builtin_root_answer,
)
from services.evolver.llm.client import (
    BaseTransport,
    Budget,
    FailureKind,
    LlmClient,
    LlmOutcome,
    LlmRequest,
    LlmRole,
    MemoryBudget,
    OutcomeStatus,
    RejectedToolCall,
    ToolCall,
    parse_completion,
)
from services.evolver.llm.prices import (
    BUILTIN_CHILD_MODEL,
    BUILTIN_ROOT_MODEL,
    DEFAULT_PRICE,
    PRICES,
    Price,
    price_for,
)
from services.evolver.llm.schema import validate

__all__ = [
    "BUILTIN_CHILD_MODEL",
    "BUILTIN_ROOT_MODEL",
    "DEFAULT_PRICE",
    "PRICES",
    "BaseTransport",
    "Budget",
    "BuiltinTransport",
    "FailureKind",
    "LlmClient",
    "LlmOutcome",
    "LlmRequest",
    "LlmRole",
    "MemoryBudget",
    "OutcomeStatus",
    "Price",
    "RejectedToolCall",
    "ToolCall",
    "builtin_child_answer",
    "builtin_completion",
    "builtin_root_answer",
    "parse_completion",
    "price_for",
    "validate",
]
