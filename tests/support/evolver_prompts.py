"""A child's prompt as the evolver's engine writes it (a parent, its feedback, inspirations), for the
tests of the built-in child and of the LLM server."""

from __future__ import annotations

from services.evolver import contract
from tests.support.environment import ROOT

SEED = (ROOT / "services" / "evolver" / "seeds" / "battle_weak.py").read_text()
"""A seed program: the parent the prompts show."""


def child_prompt(code: str = SEED, *, inspirations: tuple[str, ...] = ()) -> str:
    parts = [
        "# Your task\n\nTune the numeric constants.",
        f"{contract.PARENT_HEADING} p3 (fitness 0.412)\n\n```python\n{code.rstrip()}\n```",
        "## Evaluation feedback of p3\n\n{}",
    ]
    parts += [
        f"{contract.INSPIRATION_HEADING} p{4 + i} (fitness 0.5)\n\n```python\n{c.rstrip()}\n```"
        for i, c in enumerate(inspirations)
    ]
    parts.append(
        "Answer with SEARCH/REPLACE blocks against p3, or the whole new program in one ```python block."
    )
    return "\n\n".join(parts)
