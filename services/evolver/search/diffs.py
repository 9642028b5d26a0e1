"""SEARCH/REPLACE edit blocks: how a child model (or the built-in mutation) changes a program.

A block names lines of the parent to replace and what replaces them:

    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE

Models copy the old lines imperfectly, so applying a block tries the exact lines first, then the
lines with trailing whitespace ignored, then with a uniform indentation difference. A block must
match exactly one place: an edit that could land in two places is refused rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from services.evolver.contract import DIVIDER_MARKER, REPLACE_MARKER, SEARCH_MARKER

__all__ = ["DiffError", "EditBlock", "apply_blocks", "has_blocks", "parse_blocks", "render_blocks"]

_SEARCH_LINE = re.compile(r"^[ \t]*<{5,9}[ \t]*SEARCH[ \t]*$")
_DIVIDER_LINE = re.compile(r"^[ \t]*={5,9}[ \t]*$")
_REPLACE_LINE = re.compile(r"^[ \t]*>{5,9}[ \t]*REPLACE[ \t]*$")
_FENCE_LINE = re.compile(r"^[ \t]*(```|~~~)")
_HAS_SEARCH = re.compile(r"^[ \t]*<{5,9}[ \t]*SEARCH[ \t]*$", re.MULTILINE)
_HAS_REPLACE = re.compile(r"^[ \t]*>{5,9}[ \t]*REPLACE[ \t]*$", re.MULTILINE)


class DiffError(ValueError):
    """Edit blocks that are malformed or do not apply; the message says which block and why."""


@dataclass(frozen=True, slots=True)
class EditBlock:
    """Replace the lines `search` (newline-terminated) with the lines `replace`."""

    search: str
    replace: str


def _join(lines: Sequence[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _unfence(lines: list[str]) -> list[str]:
    """Drop a code fence wrapped round one side of a block (models sometimes put it there)."""
    if len(lines) >= 2 and _FENCE_LINE.match(lines[0]) and _FENCE_LINE.match(lines[-1]):
        return lines[1:-1]
    return lines


def has_blocks(answer: str) -> bool:
    """Whether the answer holds at least one SEARCH/REPLACE block (well formed or not)."""
    return _HAS_SEARCH.search(answer) is not None and _HAS_REPLACE.search(answer) is not None


def parse_blocks(answer: str) -> list[EditBlock]:
    """The edit blocks of an answer, in order; prose and code fences around them are ignored."""
    blocks: list[EditBlock] = []
    lines = answer.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if _REPLACE_LINE.match(line):
            raise DiffError(
                f"line {index + 1}: '{REPLACE_MARKER}' without a '{SEARCH_MARKER}' before it; "
                "each block is SEARCH marker, old lines, divider, new lines, REPLACE marker"
            )
        if not _SEARCH_LINE.match(line):
            index += 1
            continue
        number = len(blocks) + 1
        start = index
        search: list[str] = []
        index += 1
        while index < len(lines) and not _DIVIDER_LINE.match(lines[index]):
            if _SEARCH_LINE.match(lines[index]) or _REPLACE_LINE.match(lines[index]):
                raise DiffError(
                    f"block {number} (line {start + 1}): missing the divider '{DIVIDER_MARKER}' "
                    "between the old lines and the new lines"
                )
            search.append(lines[index])
            index += 1
        if index >= len(lines):
            raise DiffError(
                f"block {number} (line {start + 1}): missing the divider '{DIVIDER_MARKER}' "
                "between the old lines and the new lines"
            )
        index += 1
        replace: list[str] = []
        while index < len(lines) and not _REPLACE_LINE.match(lines[index]):
            if _SEARCH_LINE.match(lines[index]):
                break
            replace.append(lines[index])
            index += 1
        if index >= len(lines) or not _REPLACE_LINE.match(lines[index]):
            raise DiffError(
                f"block {number} (line {start + 1}): unterminated; it must end with a '{REPLACE_MARKER}' line"
            )
        index += 1
        blocks.append(EditBlock(_join(_unfence(search)), _join(_unfence(replace))))
    return blocks


def render_blocks(blocks: Sequence[EditBlock]) -> str:
    """The blocks as text that `parse_blocks` reads back to the same blocks."""
    parts = []
    for block in blocks:
        search = _join(block.search.splitlines())
        replace = _join(block.replace.splitlines())
        parts.append(f"{SEARCH_MARKER}\n{search}{DIVIDER_MARKER}\n{replace}{REPLACE_MARKER}\n")
    return "\n".join(parts)


# ---------------------------------------------------------------- applying
def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _first_indent(lines: Sequence[str]) -> str | None:
    for line in lines:
        if line.strip():
            return _indent(line)
    return None


def _reindent(lines: Sequence[str], add: str, remove: str) -> list[str] | None:
    """Lines with `remove` taken off and `add` put on each non-blank line; None if one lacks `remove`."""
    out = []
    for line in lines:
        if not line.strip():
            out.append(line)
        elif line.startswith(remove):
            out.append(add + line[len(remove) :])
        else:
            return None
    return out


def _shift(search: Sequence[str], window: Sequence[str]) -> tuple[str, str] | None:
    """(add, remove): the uniform indentation change that turns `search` into `window`, if any."""
    have, want = _first_indent(search), _first_indent(window)
    if have is None or want is None:
        return None
    if want.startswith(have):
        shift = (want[len(have) :], "")
    elif have.startswith(want):
        shift = ("", have[len(want) :])
    else:
        return None
    moved = _reindent(search, *shift)
    if moved is None:
        return None
    if [line.rstrip() for line in moved] != [line.rstrip() for line in window]:
        return None
    return shift


def _positions(lines: Sequence[str], search: Sequence[str], same: Callable[[int], bool]) -> list[int]:
    size = len(search)
    return [start for start in range(len(lines) - size + 1) if same(start)]


def _apply_one(lines: list[str], block: EditBlock, number: int) -> list[str]:
    search = block.search.splitlines()
    replace = block.replace.splitlines()
    first = next((line.strip() for line in search if line.strip()), "")
    label = f"block {number} (search starting {first!r})"
    if not first:
        raise DiffError(f"block {number}: the search text is empty; it must quote lines of the program")
    size = len(search)
    stripped_search = [line.rstrip() for line in search]
    attempts: list[Callable[[int], bool]] = [
        lambda start: lines[start : start + size] == search,
        lambda start: [line.rstrip() for line in lines[start : start + size]] == stripped_search,
        lambda start: _shift(search, lines[start : start + size]) is not None,
    ]
    for attempt, same in enumerate(attempts):
        found = _positions(lines, search, same)
        if not found:
            continue
        if len(found) > 1:
            places = ", ".join(str(start + 1) for start in found[:5])
            raise DiffError(
                f"{label} matches {len(found)} places (lines {places}); quote more surrounding "
                "lines so that it matches exactly one"
            )
        start = found[0]
        new = replace
        if attempt == 2:
            shift = _shift(search, lines[start : start + size])
            assert shift is not None
            add, remove = shift
            new = [
                add + line[len(remove) :] if line.startswith(remove) else add + line.lstrip(" \t")
                for line in replace
            ]
            new = [line if line.strip() else line.strip(" \t") for line in new]
        return lines[:start] + list(new) + lines[start + size :]
    raise DiffError(
        f"{label} matches nothing in the program; the search text must copy existing lines "
        "exactly (whitespace and indentation included)"
    )


def apply_blocks(source: str, blocks: Sequence[EditBlock]) -> str:
    """`source` with each block applied in order (each to the result of the ones before it)."""
    lines = source.splitlines()
    for number, block in enumerate(blocks, start=1):
        lines = _apply_one(lines, block, number)
    text = "\n".join(lines)
    if lines and source.endswith(("\n", "\r")):
        text += "\n"
    return text
