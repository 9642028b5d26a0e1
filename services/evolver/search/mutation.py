"""The built-in mutation operator: a child's role when no model is configured.

It makes one small, syntax-aware change to a program: a numeric constant scaled or nudged, an
ordering comparison loosened, tightened or reversed, the two branches of an if/else (or of a
conditional expression) exchanged under the same test, or a top-level function (or named
constant) taken from an inspiration program.
Edits rewrite only the source span of the nodes they touch (positions from `ast`), so comments and
layout elsewhere survive and the diff against the parent stays small. The change is also returned
as SEARCH/REPLACE blocks, the same form a model's answer takes.
"""

from __future__ import annotations

import ast
import difflib
import functools
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from services.evolver.search.diffs import DiffError, EditBlock, apply_blocks

__all__ = ["Mutation", "MutationError", "MutationKind", "mutate"]

MAX_ATTEMPTS = 60
"""Candidate edits tried before giving up on a program."""
KIND_WEIGHTS: dict[str, float] = {
    "constant": 12.0,
    "comparison": 1.0,
    "branch_swap": 1.0,
    "crossover": 2.0,
}
"""Most steps tune numbers: in a program written around named constants, that is where a blind
operator finds gains; comparisons and branch swaps mostly break play."""
NAMED_CONSTANT_WEIGHT = 6.0
"""How much likelier a module-level named constant is to be tuned than a literal inside code."""
NAMED_STEP_SIGMA = 0.6
"""A named constant is multiplied by exp(N(0, NAMED_STEP_SIGMA)): half the steps within x0.67..1.5,
one in twenty beyond x0.3..3.2. The good values of a weak program's constants are often several
times away from the written ones (a strafe of 1 m where 5 m is right), beyond reach of small steps
on the plateaus between them."""
SIGNIFICANT_DIGITS = 3


class MutationKind(StrEnum):
    CONSTANT = "constant"
    COMPARISON = "comparison"
    BRANCH_SWAP = "branch_swap"
    CROSSOVER = "crossover"


class MutationError(ValueError):
    """No mutation of the program both parses and changes it."""


@dataclass(frozen=True, slots=True)
class Mutation:
    source: str
    kind: MutationKind
    description: str
    blocks: tuple[EditBlock, ...]
    """SEARCH/REPLACE blocks that turn the parent's text into `source` (see diffs.apply_blocks)."""


@dataclass(frozen=True, slots=True)
class _Edit:
    start: int
    end: int
    text: str
    description: str


@dataclass(frozen=True, slots=True)
class _Candidate:
    kind: MutationKind
    weight: float
    build: Callable[[random.Random], _Edit | None]


# ---------------------------------------------------------------- positions
class _Text:
    """The source with a map from ast positions (line, UTF-8 byte column) to string offsets."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def line(self, lineno: int) -> str:
        return self.lines[lineno - 1].rstrip("\r\n")

    def line_start(self, lineno: int) -> int:
        return self.starts[lineno - 1]

    def line_end(self, lineno: int) -> int:
        """Offset of the end of the line's text (before its newline)."""
        return self.starts[lineno - 1] + len(self.line(lineno))


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    """Each node's parent, in breadth-first order. The inside of f-strings is left out: before
    Python 3.12 the positions of nodes there are not reliable enough to edit by."""
    out: dict[ast.AST, ast.AST] = {}
    queue = [tree]
    index = 0
    while index < len(queue):
        node = queue[index]
        index += 1
        if isinstance(node, ast.JoinedStr):
            continue
        for child in ast.iter_child_nodes(node):
            out[child] = node
            queue.append(child)
    return out


def _enclosing(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    current: ast.AST | None = node
    while current is not None:
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return current.name
        current = parents.get(current)
    return "module"


def _where(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    return f"in {_enclosing(node, parents)} (line {node.lineno})"  # type: ignore[attr-defined]


# ---------------------------------------------------------------- constants
def _is_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
        and math.isfinite(node.value)
    )


def _module_constant_name(node: ast.AST, parents: dict[ast.AST, ast.AST], tree: ast.Module) -> str | None:
    """The name when `node` is the value of a top-level `NAME = <number>` (possibly negated)."""
    parent = parents.get(node)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub | ast.UAdd):
        parent = parents.get(parent)
    if isinstance(parent, ast.Assign | ast.AnnAssign) and parent in tree.body:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            return targets[0].id
    return None


def _is_pi(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("pi", "tau")


def _is_call_to(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def _structural(node: ast.Constant, parents: dict[ast.AST, ast.AST], named: bool) -> bool:
    """Literals that encode structure rather than a tunable quantity: indices, parities, rounding
    digits, lengths, zero, fractions of pi, epsilons, and small whole numbers (halves, signs) inside
    code."""
    value = node.value
    if not isinstance(value, int | float) or value == 0:
        return True
    if named:
        return False
    if value in (1, -1) or (isinstance(value, int) and abs(value) <= 2) or abs(value) < 1e-4:
        return True
    child: ast.AST = node
    parent = parents.get(node)
    if isinstance(parent, ast.UnaryOp):
        child, parent = parent, parents.get(parent)
    if isinstance(parent, ast.BinOp):
        other = parent.right if parent.left is child else parent.left
        if isinstance(value, int) and isinstance(parent.op, ast.Mod | ast.FloorDiv | ast.Pow):
            return True
        if _is_pi(other):
            return True
    if isinstance(parent, ast.Compare) and any(
        _is_call_to(part, ("len",)) for part in [parent.left, *parent.comparators]
    ):
        return True
    if parent is not None and _is_call_to(parent, ("round", "len")):
        return True
    # Inside a subscript's index or slice.
    current: ast.AST | None = child
    while current is not None:
        above = parents.get(current)
        if isinstance(above, ast.Subscript) and above.slice is current:
            return True
        if not isinstance(above, ast.Slice | ast.Tuple | ast.UnaryOp | ast.BinOp | ast.Subscript):
            break
        current = above
    return False


def _format_number(value: float, like: int | float) -> str:
    if isinstance(like, int):
        return str(int(value))
    rounded = float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    return repr(rounded)


def _new_number(old: int | float, rng: random.Random) -> int | float:
    """A nearby value: ints step by one when small, anything else is scaled by 0.5..2 (often less)."""
    spread = math.log(1.25) if rng.random() < 0.5 else math.log(2.0)
    factor = math.exp(rng.uniform(-spread, spread))
    if isinstance(old, int):
        if abs(old) <= 10:
            new = old + rng.choice((-1, 1))
            if new == 0 or (new < 0) != (old < 0):
                new = old - (new - old)
            return new
        new = round(old * factor)
        return new if new != old else old + (1 if factor >= 1 else -1)
    return float(_format_number(old * factor, old))


def _new_named_value(old: int | float, rng: random.Random) -> int | float:
    """A named constant's next value: log-normal steps (NAMED_STEP_SIGMA), sign kept; an int stays
    an int and always changes (by at least one, in the step's direction)."""
    factor = math.exp(rng.gauss(0.0, NAMED_STEP_SIGMA))
    if isinstance(old, int):
        new = round(old * factor)
        if new == old:
            new = old + (1 if (factor >= 1) == (old > 0) else -1)
        if new == 0:
            new = 1 if old > 0 else -1
        return new
    return float(_format_number(old * factor, old))


def _constant_candidates(text: _Text, tree: ast.Module, parents: dict[ast.AST, ast.AST]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for node in parents:  # every node but the module, in walk order
        if not isinstance(node, ast.Constant) or not _is_number(node):
            continue
        name = _module_constant_name(node, parents, tree)
        if _structural(node, parents, name is not None):
            continue

        def build(rng: random.Random, node: ast.Constant = node, name: str | None = name) -> _Edit | None:
            old = node.value
            if not isinstance(old, int | float):
                return None
            new = _new_named_value(old, rng) if name is not None else _new_number(old, rng)
            literal = _format_number(new, old)
            start, end = text.span(node)
            if literal == text.source[start:end] or new == old:
                return None
            what = name if name is not None else f"constant {_where(node, parents)}"
            return _Edit(start, end, literal, f"{what}: {text.source[start:end]} -> {literal}")

        weight = NAMED_CONSTANT_WEIGHT if name is not None else 1.0
        out.append(_Candidate(MutationKind.CONSTANT, weight, build))
    return out


# ---------------------------------------------------------------- comparisons
_OP_TOKEN = re.compile(r"not\s+in\b|is\s+not\b|==|!=|<=|>=|<|>|\bin\b|\bis\b")
_LOOSEN = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
_REVERSE = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _op_token(text: _Text, compare: ast.Compare, index: int) -> tuple[int, int, str] | None:
    """(start, end, token) of the index-th operator of a comparison, found between its operands."""
    left = compare.left if index == 0 else compare.comparators[index - 1]
    right = compare.comparators[index]
    gap_start = text.span(left)[1]
    gap_end = text.span(right)[0]
    if "#" in text.source[gap_start:gap_end]:
        return None  # a comment between the operands; leave it alone
    match = _OP_TOKEN.search(text.source, gap_start, gap_end)
    if match is None:
        return None
    token = " ".join(match.group(0).split())
    return match.start(), match.end(), token


def _comparison_candidates(text: _Text, parents: dict[ast.AST, ast.AST]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for node in parents:  # every node but the module, in walk order
        if not isinstance(node, ast.Compare):
            continue
        for index, op in enumerate(node.ops):
            if not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
                continue

            def build(rng: random.Random, node: ast.Compare = node, index: int = index) -> _Edit | None:
                found = _op_token(text, node, index)
                if found is None or found[2] not in _LOOSEN:
                    return None
                start, end, token = found
                table = _REVERSE if rng.random() < 0.25 else _LOOSEN
                new = table[token]
                return _Edit(start, end, new, f"comparison {token} -> {new} {_where(node, parents)}")

            out.append(_Candidate(MutationKind.COMPARISON, 1.0, build))
    return out


# ---------------------------------------------------------------- branch swap
_HEADER_TAIL = re.compile(r"^[\s)]*:\s*(#.*)?$")
_ELSE_LINE = re.compile(r"^(\s*)else\s*:\s*(#.*)?$")


def _wrapped(text: _Text, node: ast.expr) -> str:
    segment = text.segment(node)
    if isinstance(node, ast.IfExp | ast.Lambda | ast.NamedExpr):
        return f"({segment})"
    return segment


def _swap_if(text: _Text, node: ast.If, parents: dict[ast.AST, ast.AST]) -> _Edit | None:
    """The if/else with its two bodies exchanged; the header (test, comments) stays as written."""
    if not node.orelse or not node.body:
        return None
    if [ast.dump(n) for n in node.body] == [ast.dump(n) for n in node.orelse]:
        return None
    if (
        len(node.orelse) == 1
        and isinstance(node.orelse[0], ast.If)
        and text.line(node.orelse[0].lineno).lstrip().startswith("elif")
    ):
        return None
    indent = text.line(node.lineno)[: node.col_offset]
    if indent.strip():
        return None
    test_end = node.test.end_lineno or node.test.lineno
    tail_start = text.span(node.test)[1] - text.line_start(test_end)
    if not _HEADER_TAIL.match(text.line(test_end)[tail_start:]):
        return None
    if node.body[0].lineno <= test_end:
        return None  # body on the header line
    else_line = 0
    for lineno in range((node.body[-1].end_lineno or 0) + 1, node.orelse[0].lineno):
        match = _ELSE_LINE.match(text.line(lineno))
        if match and match.group(1) == indent:
            else_line = lineno
            break
    if not else_line or node.orelse[0].lineno <= else_line:
        return None
    end_line = node.orelse[-1].end_lineno or node.orelse[-1].lineno
    body = [text.line(n) for n in range(test_end + 1, else_line)]
    orelse = [text.line(n) for n in range(else_line + 1, end_line + 1)]
    lines = [*orelse, text.line(else_line), *body]
    return _Edit(
        text.line_start(test_end + 1),
        text.line_end(end_line),
        "\n".join(lines),
        f"if/else bodies swapped (same test) {_where(node, parents)}",
    )


def _swap_ifexp(text: _Text, node: ast.IfExp, parents: dict[ast.AST, ast.AST]) -> _Edit | None:
    if ast.dump(node.body) == ast.dump(node.orelse):
        return None
    new = f"{_wrapped(text, node.orelse)} if {text.segment(node.test)} else {_wrapped(text, node.body)}"
    if "\n" in new:
        new = f"({new})"
    start, end = text.span(node)
    return _Edit(start, end, new, f"conditional expression's values swapped {_where(node, parents)}")


def _branch_candidates(text: _Text, parents: dict[ast.AST, ast.AST]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for node in parents:  # every node but the module, in walk order
        if isinstance(node, ast.If) and node.orelse:

            def build_if(_rng: random.Random, node: ast.If = node) -> _Edit | None:
                return _swap_if(text, node, parents)

            out.append(_Candidate(MutationKind.BRANCH_SWAP, 1.0, build_if))
        elif isinstance(node, ast.IfExp):

            def build_exp(_rng: random.Random, node: ast.IfExp = node) -> _Edit | None:
                return _swap_ifexp(text, node, parents)

            out.append(_Candidate(MutationKind.BRANCH_SWAP, 1.0, build_exp))
    return out


# ---------------------------------------------------------------- crossover
def _top_level(tree: ast.Module) -> tuple[dict[str, ast.FunctionDef], dict[str, ast.expr]]:
    functions: dict[str, ast.FunctionDef] = {}
    constants: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and (
                _is_number(node.value)
                or (isinstance(node.value, ast.UnaryOp) and _is_number(node.value.operand))
            )
        ):
            constants[node.targets[0].id] = node.value
    return functions, constants


def _module_names(tree: ast.Module) -> set[str]:
    """Names bound at the top level of a module."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _function_lines(node: ast.FunctionDef) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _fixed(edit: _Edit) -> Callable[[random.Random], _Edit | None]:
    return lambda _rng: edit


@dataclass(frozen=True, slots=True)
class _Outline:
    """A program's top level as crossover compares it: its functions and named constants with
    their dumped ASTs (equal dumps, equal code), the names each function reads from outside
    itself, and the names the module binds."""

    text: _Text
    tree: ast.Module
    functions: dict[str, ast.FunctionDef]
    constants: dict[str, ast.expr]
    dumps: dict[tuple[str, str], str]
    reads: dict[str, frozenset[str]]
    names: frozenset[str]


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise MutationError(f"the program does not parse: {exc}") from exc


@functools.lru_cache(maxsize=64)
def _outline(source: str) -> _Outline:
    """Cached per source: the same parents and inspirations recur across a generation's children.
    A MutationError when the source does not parse (not cached)."""
    tree = _parse(source)
    functions, constants = _top_level(tree)
    dumps = {("def", name): ast.dump(node) for name, node in functions.items()}
    dumps.update({("const", name): ast.dump(node) for name, node in constants.items()})
    reads: dict[str, frozenset[str]] = {}
    for name, node in functions.items():
        local = {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)} | {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        reads[name] = frozenset({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - local)
    return _Outline(_Text(source), tree, functions, constants, dumps, reads, frozenset(_module_names(tree)))


def _crossover_candidates(mine: _Outline, inspirations: Sequence[str]) -> list[_Candidate]:
    out: list[_Candidate] = []
    text = mine.text
    for number, other in enumerate(inspirations, start=1):
        try:
            theirs_outline = _outline(other)
        except MutationError:
            continue
        other_text = theirs_outline.text
        for name, node in mine.functions.items():
            theirs = theirs_outline.functions.get(name)
            if theirs is None or theirs_outline.dumps[("def", name)] == mine.dumps[("def", name)]:
                continue
            # Only when every module-level name their version reads exists here too.
            if (theirs_outline.reads[name] & theirs_outline.names) - mine.names:
                continue
            first, last = _function_lines(node)
            their_first, their_last = _function_lines(theirs)
            new = "\n".join(other_text.line(n) for n in range(their_first, their_last + 1))
            edit = _Edit(
                text.line_start(first),
                text.line_end(last),
                new,
                f"function {name} taken from inspiration {number}",
            )
            out.append(_Candidate(MutationKind.CROSSOVER, 1.0, _fixed(edit)))
        differing: list[tuple[str, int, int, str]] = []
        for name, value in mine.constants.items():
            their_value = theirs_outline.constants.get(name)
            if their_value is None or theirs_outline.dumps[("const", name)] == mine.dumps[("const", name)]:
                continue
            start, end = text.span(value)
            literal = other_text.segment(their_value)
            differing.append((name, start, end, literal))
            edit = _Edit(
                start,
                end,
                literal,
                f"{name}: {text.source[start:end]} -> {literal} (from inspiration {number})",
            )
            out.append(_Candidate(MutationKind.CROSSOVER, 1.0, _fixed(edit)))
        if len(differing) >= 2:
            build = _recombination(text, differing, number)
            out.append(_Candidate(MutationKind.CROSSOVER, float(len(differing)), build))
    return out


def _recombination(
    text: _Text, differing: Sequence[tuple[str, int, int, str]], number: int
) -> Callable[[random.Random], _Edit | None]:
    """Uniform crossover of named constants: each constant whose value differs in the inspiration
    takes that value with probability one half (at least one, never all). Two programs that each
    found good values for different constants pass both on at once, which single steps would need
    several lucky generations to assemble."""

    def build(rng: random.Random) -> _Edit | None:
        taken = [item for item in differing if rng.random() < 0.5]
        if not taken or len(taken) == len(differing):
            taken = rng.sample(list(differing), rng.randint(1, len(differing) - 1))
        taken.sort(key=lambda item: item[1])
        start, end = taken[0][1], taken[-1][2]
        pieces: list[str] = []
        position = start
        for _name, value_start, value_end, literal in taken:
            pieces += [text.source[position:value_start], literal]
            position = value_end
        pieces.append(text.source[position:end])
        changes = ", ".join(
            f"{name}: {text.source[value_start:value_end]} -> {literal}"
            for name, value_start, value_end, literal in taken
        )
        return _Edit(start, end, "".join(pieces), f"{changes} (recombined from inspiration {number})")

    return build


# ---------------------------------------------------------------- edit blocks
def _blocks(old: str, new: str) -> tuple[EditBlock, ...]:
    """Line-level SEARCH/REPLACE blocks from `old` to `new`, each widened until it matches once."""
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    regions = [list(op[1:]) for op in matcher.get_opcodes() if op[0] != "equal"]
    for _ in range(len(a) + len(regions) + 2):
        regions = _merged(regions)
        blocks = [_block(a, b, region) for region in regions]
        current = list(a)
        widened = False
        for region, block in zip(regions, blocks, strict=True):
            search = block.search.splitlines()
            found = [
                s
                for s in range(len(current) - len(search) + 1)
                if search and current[s : s + len(search)] == search
            ]
            if len(found) != 1 or not any(line.strip() for line in search):
                _widen(region, len(a))
                widened = True
                break
            current[found[0] : found[0] + len(search)] = block.replace.splitlines()
        if not widened:
            return tuple(blocks)
    raise MutationError("could not make the edit blocks unique")


def _block(a: list[str], b: list[str], region: list[int]) -> EditBlock:
    i1, i2, j1, j2 = region
    return EditBlock("".join(line + "\n" for line in a[i1:i2]), "".join(line + "\n" for line in b[j1:j2]))


def _widen(region: list[int], size: int) -> None:
    """One more line of context: before when there is one, else after."""
    i1, i2, j1, j2 = region
    if (i1 > 0 and (i2 - i1) % 2 == 0) or i2 >= size:
        region[:] = [i1 - 1, i2, j1 - 1, j2]
    else:
        region[:] = [i1, i2 + 1, j1, j2 + 1]
    if region[0] < 0:
        raise MutationError("could not make the edit blocks unique")


def _merged(regions: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for region in sorted(regions):
        if out and region[0] <= out[-1][1]:
            last = out[-1]
            out[-1] = [last[0], max(last[1], region[1]), last[2], max(last[3], region[3])]
        else:
            out.append(list(region))
    return out


# ---------------------------------------------------------------- the operator
def _parses(source: str) -> bool:
    try:
        _parse(source)
    except MutationError:
        return False
    return True


@functools.lru_cache(maxsize=16)
def _candidate_pools(
    source: str, inspirations: tuple[str, ...]
) -> tuple[tuple[MutationKind, tuple[_Candidate, ...]], ...]:
    """Every change `mutate` may draw from, by kind. Cached: a screened child draws several steps
    from the same parent and inspirations, and the candidates only read the parsed program."""
    outline = _outline(source)
    text, tree = outline.text, outline.tree
    parents = _parents(tree)
    return (
        (MutationKind.CONSTANT, tuple(_constant_candidates(text, tree, parents))),
        (MutationKind.COMPARISON, tuple(_comparison_candidates(text, parents))),
        (MutationKind.BRANCH_SWAP, tuple(_branch_candidates(text, parents))),
        (MutationKind.CROSSOVER, tuple(_crossover_candidates(outline, inspirations))),
    )


def mutate(source: str, rng: random.Random, inspirations: Sequence[str] = ()) -> Mutation:
    """One random, parseable change of `source`; the same rng state gives the same change."""
    ends_with_newline = source.endswith(("\n", "\r"))
    source = "\n".join(source.splitlines()) + ("\n" if ends_with_newline else "")
    pools = {kind: list(candidates) for kind, candidates in _candidate_pools(source, tuple(inspirations))}
    for _ in range(MAX_ATTEMPTS):
        kinds = [kind for kind in MutationKind if pools[kind]]
        if not kinds:
            break
        kind = rng.choices(kinds, weights=[KIND_WEIGHTS[kind] for kind in kinds])[0]
        pool = pools[kind]
        index = rng.choices(range(len(pool)), weights=[c.weight for c in pool])[0]
        candidate = pool[index]
        edit = candidate.build(rng)
        if edit is None:
            pool.pop(index)
            continue
        result = source[: edit.start] + edit.text + source[edit.end :]
        if result == source or not _parses(result):
            pool.pop(index)
            continue
        blocks = _blocks(source, result)
        try:
            applied = apply_blocks(source, blocks)
        except DiffError:
            applied = None
        if applied != result:
            pool.pop(index)
            continue
        return Mutation(result, kind, edit.description, blocks)
    raise MutationError("no mutation of this program parses and changes it")


def mutate_several(
    source: str, rng: random.Random, inspirations: Sequence[str] = (), most: int = 3
) -> Mutation:
    """One to `most` mutations in a row (one is the likeliest), as one change of `source`: single
    steps of a constant are often too small to leave a plateau of the game, several at once explore
    further. The kind is the first step's; the description lists every step."""
    count = rng.choices(range(1, most + 1), weights=[2 ** (most - n) for n in range(1, most + 1)])[0]
    first = mutate(source, rng, inspirations)
    current, descriptions = first.source, [first.description]
    for _ in range(count - 1):
        try:
            step = mutate(current, rng, inspirations)
        except MutationError:
            break
        current = step.source
        descriptions.append(step.description)
    if current == first.source:
        return first
    blocks = _blocks(source, current)
    try:
        applied = apply_blocks(source, blocks)
    except DiffError:
        applied = None
    if applied != current:
        return first
    return Mutation(current, first.kind, "; ".join(descriptions), blocks)
