"""The static gate: a fast lint pass over uploaded Python before it is stored or run.

It is not the security boundary (the sandbox is); it turns obvious mistakes and obvious escape
attempts into clear messages at upload time, listing every problem with its line. Two contracts:

  decide     a module defining decide(observation) (and optionally init(config)); top level may
             hold only imports, function and class definitions, constant assignments, a docstring
             and `if __name__ == "__main__":` blocks, so loading the module has no side effects.
  codingame  a script that reads its input with input()/sys.stdin and prints its moves; any
             top-level statements are allowed, since such scripts run at top level.
Both contracts share the import allow-list and the bans on dynamic code and dunder tricks.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

DEFAULT_MAX_CHARS = 100_000

ALLOWED_MODULES: frozenset[str] = frozenset(
    {
        "__future__",
        "array",
        "bisect",
        "cmath",
        "collections",
        "copy",
        "dataclasses",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "json",
        "math",
        "operator",
        "random",
        "re",
        "statistics",
        "string",
        "sys",
        "time",
        "typing",
    }
)
"""Pure computation, plus sys (CodinGame scripts read sys.stdin) and time (budgeting a turn)."""

FORBIDDEN_BUILTINS: frozenset[str] = frozenset(
    {
        "__import__",
        "breakpoint",
        "compile",
        "delattr",
        "eval",
        "exec",
        "globals",
        "help",
        "locals",
        "memoryview",
        "open",
        "vars",
    }
)
ALLOWED_DUNDER_NAMES: frozenset[str] = frozenset({"__name__"})
ALLOWED_DUNDER_ATTRIBUTES: frozenset[str] = frozenset({"__init__", "__name__"})
FORBIDDEN_SYS_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "_getframe",
        "addaudithook",
        "breakpointhook",
        "meta_path",
        "modules",
        "path",
        "path_hooks",
        "path_importer_cache",
        "setprofile",
        "settrace",
    }
)
FRAME_ATTRIBUTES: frozenset[str] = frozenset(
    {"f_back", "f_builtins", "f_globals", "f_locals", "gi_frame", "cr_frame", "ag_frame", "tb_frame"}
)
CONTRACTS = ("decide", "codingame")


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, column {self.col}: {self.message}"


def check_source(
    source: str, *, contract: str = "decide", max_chars: int = DEFAULT_MAX_CHARS
) -> list[Problem]:
    """Every problem found in `source`, sorted by position; an empty list means it passes."""
    if contract not in CONTRACTS:
        raise ValueError(f"unknown contract {contract!r}; expected one of {CONTRACTS}")
    if len(source) > max_chars:
        return [Problem(1, 0, f"the source is {len(source)} characters long; the limit is {max_chars}")]
    try:
        tree = ast.parse(source, filename="bot.py", type_comments=False)
    except SyntaxError as exc:
        return [Problem(exc.lineno or 1, exc.offset or 0, f"syntax error: {exc.msg}")]
    except ValueError as exc:  # e.g. null bytes
        return [Problem(1, 0, f"cannot parse: {exc}")]
    checker = _Checker(contract)
    checker.visit(tree)
    if contract == "decide":
        checker.check_top_level(tree)
    return sorted(set(checker.problems), key=lambda p: (p.line, p.col, p.message))


class _Checker(ast.NodeVisitor):
    def __init__(self, contract: str) -> None:
        self.contract = contract
        self.problems: list[Problem] = []

    def add(self, node: ast.AST, message: str) -> None:
        self.problems.append(Problem(getattr(node, "lineno", 1), getattr(node, "col_offset", 0), message))

    # -- imports ---------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.add(node, "relative imports are not allowed: a bot is a single file")
        elif node.module:
            self._check_module(node, node.module)
            if node.module.split(".")[0] == "sys":
                for alias in node.names:
                    if alias.name in FORBIDDEN_SYS_ATTRIBUTES:
                        self.add(node, f"sys.{alias.name} is not available to bots")

    def _check_module(self, node: ast.AST, name: str) -> None:
        top = name.split(".")[0]
        if top not in ALLOWED_MODULES:
            allowed = ", ".join(sorted(ALLOWED_MODULES - {"__future__"}))
            self.add(node, f"import of '{name}' is not allowed; allowed modules: {allowed}")

    # -- names and attributes --------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_BUILTINS:
            self.add(node, f"'{node.id}' is not allowed in bots")
        elif node.id == "input" and self.contract == "decide":
            self.add(node, "'input' is for the codingame contract; a decide bot gets its observation")
        elif _is_dunder(node.id) and node.id not in ALLOWED_DUNDER_NAMES:
            self.add(node, f"the name '{node.id}' is not allowed in bots")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _is_dunder(node.attr) and node.attr not in ALLOWED_DUNDER_ATTRIBUTES:
            self.add(node, f"access to the attribute '{node.attr}' is not allowed in bots")
        elif node.attr in FRAME_ATTRIBUTES:
            self.add(node, f"access to frame internals ('{node.attr}') is not allowed in bots")
        elif (
            isinstance(node.value, ast.Name)
            and node.value.id == "sys"
            and node.attr in (FORBIDDEN_SYS_ATTRIBUTES)
        ):
            self.add(node, f"sys.{node.attr} is not available to bots")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        attr_funcs = ("getattr", "setattr", "hasattr")
        if isinstance(func, ast.Name) and func.id in attr_funcs and len(node.args) >= 2:
            name = node.args[1]
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self.add(node, f"{func.id}() needs a literal attribute name in bots")
            elif _is_dunder(name.value) or name.value in FRAME_ATTRIBUTES:
                self.add(node, f"{func.id}() with '{name.value}' is not allowed in bots")
        self.generic_visit(node)

    # -- the decide contract's top level ---------------------------------------------------

    def check_top_level(self, tree: ast.Module) -> None:
        has_decide = False
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef):
                has_decide = has_decide or stmt.name == "decide"
            elif isinstance(stmt, ast.AsyncFunctionDef):
                self.add(stmt, "async functions are not supported; decide() is called synchronously")
            elif isinstance(stmt, ast.Import | ast.ImportFrom | ast.ClassDef | ast.Pass):
                pass
            elif isinstance(stmt, ast.Expr) and _is_str_constant(stmt.value):
                pass  # the module docstring, or a constant's docstring below it
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                value = stmt.value
                if value is not None and not _is_constant_expr(value):
                    self.add(
                        stmt,
                        "top-level assignments must be constants (literals, names, arithmetic); "
                        "compute anything else inside a function",
                    )
            elif isinstance(stmt, ast.If) and _is_main_guard(stmt.test):
                pass
            else:
                kind = type(stmt).__name__
                self.add(
                    stmt,
                    f"top-level statement '{kind}' is not allowed in a decide bot; put it inside a "
                    "function, or submit the script with the codingame contract",
                )
        if not has_decide:
            self.add(tree, "the bot must define a top-level function decide(observation)")


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_str_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_constant_expr(node: ast.AST) -> bool:
    """Literals and containers of them, names, module attributes (math.pi) and arithmetic."""
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _is_constant_expr(node.value)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_is_constant_expr(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _is_constant_expr(k) for k in node.keys) and all(
            _is_constant_expr(v) for v in node.values
        )
    if isinstance(node, ast.UnaryOp):
        return _is_constant_expr(node.operand)
    if isinstance(node, ast.BinOp):
        return _is_constant_expr(node.left) and _is_constant_expr(node.right)
    if isinstance(node, ast.Subscript):  # type aliases: Point = tuple[float, float]
        return _is_constant_expr(node.value) and _is_constant_expr(node.slice)
    return False


def _is_main_guard(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )
