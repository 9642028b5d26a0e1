"""Seed programs: the first generation of an evolution run, one file per game and name.

They are data (read as text, never imported by the platform) and pass the hosted-bot static gate
for the `decide` contract, like any program the evolver produces.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SEED_NAMES", "seed_program"]

_FOLDER = Path(__file__).resolve().parent

SEED_NAMES: dict[str, tuple[str, ...]] = {
    "battle": ("weak",),
    "podracing": ("weak",),
}
"""The seeds there are, by game."""


def seed_program(game: str, name: str = "weak") -> str:
    """The source text of a seed program; ValueError for an unknown game or name."""
    names = SEED_NAMES.get(game)
    if names is None:
        raise ValueError(f"no seed programs for game {game!r}; games with seeds: {sorted(SEED_NAMES)}")
    if name not in names:
        raise ValueError(f"no seed program {name!r} for {game}; there are: {list(names)}")
    return (_FOLDER / f"{game}_{name}.py").read_text(encoding="utf-8")
