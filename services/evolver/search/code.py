"""Program text helpers: a hash that ignores formatting, code extraction from model answers, diffs.

Programs are keyed by `normalised_hash` so the same code is never evaluated twice, whatever its
comments or layout; `extract_code` finds the program in an answer however the model fenced it.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import re
from dataclasses import dataclass

__all__ = ["extract_code", "normalised_hash", "unified_diff"]

_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([A-Za-z0-9_+.-]*)[^\n]*$", re.MULTILINE)
"""An opening or closing fence line: the fence characters and an optional language tag."""
_INLINE_FENCE = re.compile(r"^(.*\S)[ \t]*((?:```+|~~~+)[A-Za-z0-9_+.-]*)[ \t]*$")
"""A fence at the end of a line of text ("Here it is: ```python", "    return x```")."""
_PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})


def normalised_hash(source: str) -> str:
    """sha256 (hex) of the program's syntax tree, so comments and formatting do not count.

    Docstrings are part of the tree and do count. Text that does not parse is hashed as text with
    trailing whitespace stripped from each line.
    """
    try:
        form = ast.dump(ast.parse(source), include_attributes=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        form = "\n".join(line.rstrip() for line in source.strip("\n").splitlines())
        form = "text:" + form
    return hashlib.sha256(form.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class _Block:
    text: str
    language: str
    closed: bool


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _defines_something(text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom)
        for node in tree.body
    )


def _fenced_blocks(answer: str) -> list[_Block]:
    """Fenced blocks in order; a fence closes only with the same character, at least as long."""
    blocks: list[_Block] = []
    lines: list[str] = []
    for line in answer.splitlines():
        inline = _INLINE_FENCE.match(line)
        if inline is not None and _FENCE.fullmatch(line) is None:
            lines.extend((inline.group(1), inline.group(2)))
        else:
            lines.append(line)
    index = 0
    while index < len(lines):
        opening = _FENCE.fullmatch(lines[index])
        if opening is None:
            index += 1
            continue
        fence, language = opening.group(1), opening.group(2).lower()
        body: list[str] = []
        index += 1
        closed = False
        while index < len(lines):
            closing = _FENCE.fullmatch(lines[index])
            if (
                closing is not None
                and closing.group(1)[0] == fence[0]
                and len(closing.group(1)) >= len(fence)
                and not closing.group(2)
            ):
                closed = True
                index += 1
                break
            body.append(lines[index])
            index += 1
        blocks.append(_Block("\n".join(body).strip("\n") + "\n", language, closed))
    return blocks


def extract_code(answer: str) -> str | None:
    """The Python program in a model's answer, or None when there is none.

    Fenced blocks tagged as Python (or untagged) come first: the longest one that parses, else the
    longest one. An unterminated last fence (a truncated answer) counts as a block up to the end.
    Without fences, the whole answer is taken when it parses and defines something.
    """
    blocks = [b for b in _fenced_blocks(answer) if b.text.strip()]
    python = [b for b in blocks if b.language in _PYTHON_TAGS]
    candidates = python or [b for b in blocks if _parses(b.text)]
    if candidates:
        parsing = [b for b in candidates if _parses(b.text)]
        pool = parsing or candidates
        best = max(pool, key=lambda b: len(b.text))  # max keeps the first of equal lengths
        return best.text
    bare = answer.strip("\n")
    if bare.strip() and _defines_something(bare):
        return bare + "\n"
    return None


def unified_diff(parent: str, child: str, parent_name: str, child_name: str) -> str:
    """A unified diff from parent to child ("" when they are equal), each line newline-terminated."""
    lines = difflib.unified_diff(
        parent.splitlines(keepends=True),
        child.splitlines(keepends=True),
        fromfile=parent_name,
        tofile=child_name,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
