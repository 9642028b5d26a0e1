"""The static gate: a fast lint pass over uploaded Python before it is stored or run.

It is not the security boundary (the sandbox is); it turns obvious mistakes and known escape
families into clear messages at upload time, listing every problem with its line, since these
messages are what authors (and LLM-written code) learn from. Two contracts:

  decide     a module defining decide(observation) (and optionally init(config)); loading it must
             run none of the author's code, so the top level (and class bodies) may hold only
             imports, function and class definitions, constant assignments, docstrings and an
             `if __name__ == "__main__":` block, with no calls hidden in decorators, default
             arguments, annotations, base classes or class keywords.
  codingame  a script that reads its input with input()/sys.stdin and prints its moves; any
             top-level statements are allowed, since such scripts run at top level.

Both contracts share the rest: the source is UTF-8 text with no other coding declaration (the
sandbox compiles exactly this text, see shared/sandbox/hosted_runner.py); imports come from an
allow-list, never `*`, and an alias (`import numpy as np`) stays the module it names, so every use
of it is checked as the module's; a module is only used as `module.name` with a public name that
is not a banned one or another module; no dynamic code, no dunder tricks (classes may still
declare `__slots__` and the special methods of the allow-list), and no attribute access by
computed name (getattr with a non-literal, operator.attrgetter, str.format fields).
"""

from __future__ import annotations

import ast
import codecs
import functools
import importlib
import re
import string
import types
from dataclasses import dataclass

from shared.sandbox.gate_rules import (
    ALLOWED_CLASS_DUNDERS,
    ALLOWED_DECORATORS,
    ALLOWED_DUNDER_ATTRIBUTES,
    ALLOWED_DUNDER_NAMES,
    ALLOWED_MODULES,
    ALLOWED_SPECIAL_METHODS,
    ALLOWED_SYS_ATTRIBUTES,
    ATTRIBUTE_BUILTINS,
    BANNED_ATTRIBUTES,
    CLASS_BODY_CALLS,
    CLASS_CREATION_HOOKS,
    ENUM_BASES,
    ENUM_CREATION_METHODS,
    FORBIDDEN_BUILTINS,
    REFUSED_MODULE_ATTRIBUTES,
)
from shared.states import HostedContract

__all__ = ["ALLOWED_MODULES", "CONTRACTS", "DEFAULT_MAX_CHARS", "Problem", "check_source"]

DEFAULT_MAX_CHARS = 100_000
CONTRACTS = tuple(HostedContract)
CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
"""PEP 263, the pattern Python's tokenizer applies to the first two lines."""
SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, column {self.col}: {self.message}"


def check_source(
    source: str | bytes, *, contract: str = HostedContract.DECIDE, max_chars: int = DEFAULT_MAX_CHARS
) -> list[Problem]:
    """Every problem found in `source`, sorted by position; an empty list means it passes."""
    if contract not in CONTRACTS:
        raise ValueError(f"unknown contract {contract!r}; expected one of {CONTRACTS}")
    if isinstance(source, bytes):
        raw = source
        try:
            source = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            return [
                Problem(line, 0, f"the source is not valid UTF-8 text ({exc.reason} at byte {exc.start})")
            ]
    if len(source) > max_chars:
        return [Problem(1, 0, f"the source is {len(source)} characters long; the limit is {max_chars}")]
    text_problems = _text_problems(source)
    if text_problems:
        return text_problems
    try:
        tree = ast.parse(source, filename="bot.py", type_comments=False)
        checker = _Checker(contract, tree)
        checker.visit(tree)
        checker.check_module_names_are_not_reused()
        if contract == HostedContract.DECIDE:
            _ImportTime(checker).check_module(tree)
    except SyntaxError as exc:
        return [Problem(exc.lineno or 1, exc.offset or 0, f"syntax error: {exc.msg}")]
    except ValueError as exc:  # e.g. null bytes
        return [Problem(1, 0, f"cannot parse: {exc}")]
    except (RecursionError, MemoryError):  # the parser's or the checker's stack, on deep nesting
        return [Problem(1, 0, "the source nests too deeply to check; split long expressions up")]
    return sorted(set(checker.problems), key=lambda p: (p.line, p.col, p.message))


def _text_problems(source: str) -> list[Problem]:
    """The source must be UTF-8 text read as UTF-8: the sandbox compiles exactly this text."""
    problems: list[Problem] = []
    surrogate = SURROGATE.search(source)
    if surrogate:
        line = source.count("\n", 0, surrogate.start()) + 1
        problems.append(
            Problem(line, 0, "the source is not valid UTF-8 text (it holds a lone surrogate character)")
        )
    if source.startswith("\ufeff"):
        problems.append(
            Problem(1, 0, "the source starts with a byte order mark; save it as UTF-8 without BOM")
        )
    text = source.removeprefix("\ufeff")
    for first_lines in (re.split(r"\r\n|\r|\n", text, maxsplit=2)[:2], text.splitlines()[:2]):
        problems.extend(_cookie_problems(first_lines))
    return sorted(set(problems), key=lambda p: p.line)


def _cookie_problems(first_lines: list[str]) -> list[Problem]:
    """Python honours a coding declaration on line 1 or 2 (PEP 263); only utf-8 reads the same."""
    problems = []
    for number, line in enumerate(first_lines, start=1):
        match = CODING_COOKIE.match(line)
        if match and not _is_utf8(match.group(1)):
            problems.append(
                Problem(
                    number,
                    0,
                    f"coding declaration '{match.group(1)}' is not allowed: bot source is always "
                    "read as UTF-8, and another declared encoding would make Python run different "
                    "code from what was checked; remove the line (or declare utf-8)",
                )
            )
    return problems


def _is_utf8(name: str) -> bool:
    try:
        return codecs.lookup(name).name == "utf-8"
    except LookupError:
        return False


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Module,
)
"""Nodes that open a scope of their own: a name inside one is not the class body's."""


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_refused_attribute(name: str) -> bool:
    """An attribute bots may not read by any spelling (obj.name, getattr, class patterns)."""
    return (_is_dunder(name) and name not in ALLOWED_DUNDER_ATTRIBUTES) or name in BANNED_ATTRIBUTES


def _is_str_constant(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def module_attribute_problem(module: str, attribute: str) -> str | None:
    """Why `module.attribute` is not available to bots, or None if it is."""
    if attribute.startswith("_"):
        return f"'{module}.{attribute}' is private to the module and not available to bots"
    if attribute in BANNED_ATTRIBUTES:
        return f"'{module}.{attribute}' is not available to bots: {_banned_reason(attribute)}"
    refused = REFUSED_MODULE_ATTRIBUTES.get(module.split(".")[0], {})
    if attribute in refused:
        return f"'{module}.{attribute}' is not available to bots: {refused[attribute]}"
    if module == "sys" and attribute not in ALLOWED_SYS_ATTRIBUTES:
        allowed = ", ".join(sorted(ALLOWED_SYS_ATTRIBUTES))
        return f"'sys.{attribute}' is not available to bots; from sys they may use: {allowed}"
    submodule = _submodule(module, attribute)
    if submodule is not None and not submodule.startswith(f"{module}."):
        return (
            f"'{module}.{attribute}' is the module '{submodule}'; a bot may only reach "
            "modules from the allow-list, by importing them under their own names"
        )
    return None


def _banned_reason(attribute: str) -> str:
    return BANNED_ATTRIBUTES[attribute].replace("{attr}", attribute)


@functools.cache
def _submodule(module: str, attribute: str) -> str | None:
    """The name of the module `module.attribute` is, if it is one (cached: asked per attribute)."""
    value = getattr(importlib.import_module(module), attribute, None)
    return value.__name__ if isinstance(value, types.ModuleType) else None


def format_field_problem(template: str) -> str | None:
    """A str.format template may not read attributes ("{0.__class__}"): that is getattr by string."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as exc:
        return f"invalid format string: {exc}"
    for _literal, field, spec, _conversion in fields:
        if field and "." in field:
            return (
                f"the format field '{{{field}}}' reads an attribute; format values you have "
                "already computed (or use an f-string)"
            )
        if spec:
            nested = format_field_problem(spec)
            if nested:
                return nested
    return None


def _bindings(tree: ast.Module) -> tuple[dict[str, list[ast.AST]], dict[str, str]]:
    """Every place a name is bound other than by an import, and `name -> module.name` for names
    bound once by `from module import name`."""
    rebound: dict[str, list[ast.AST]] = {}
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names = [node.name]
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names = [node.rest]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound = alias.asname or alias.name
                if bound in imported:
                    rebound.setdefault(bound, []).append(node)
                imported[bound] = f"{node.module}.{alias.name}"
        for name in names:
            rebound.setdefault(name, []).append(node)
    return rebound, imported


def submodule_problem(name: str) -> str | None:
    """Why the dotted module `name` (its first part allowed) may not be imported, or None; each
    part must be a public submodule of the one before, not a refused one."""
    parts = name.split(".")
    for index in range(1, len(parts)):
        parent, part = ".".join(parts[:index]), parts[index]
        if part.startswith("_"):
            return f"import of '{name}' is not allowed: '{part}' is private"
        problem = module_attribute_problem(parent, part)
        if problem:
            return problem
        if _submodule(parent, part) != f"{parent}.{part}":
            return f"import of '{name}' is not allowed: '{parent}.{part}' is not a module"
    return None


def _bound_modules(tree: ast.Module) -> tuple[dict[str, str], list[tuple[ast.AST, str]]]:
    """Names that imports bind to allowed modules (`np` for `import numpy as np`), and the imports
    that bind such a name to something else as well (refused: which one a use means would depend on
    the order the code runs in)."""
    modules: dict[str, str] = {}
    clashes: list[tuple[ast.AST, str]] = []
    others: list[tuple[ast.AST, str]] = []
    """From-imports of names that are not modules."""

    def bind(node: ast.AST, name: str, module: str) -> None:
        if modules.setdefault(name, module) != module:
            clashes.append((node, name))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top not in ALLOWED_MODULES or top == "__future__" or submodule_problem(alias.name):
                    continue
                bind(node, alias.asname or top, alias.name if alias.asname else top)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            top = node.module.split(".")[0]
            if top not in ALLOWED_MODULES or top == "__future__" or submodule_problem(node.module):
                continue
            for alias in node.names:
                if alias.name != "*" and module_attribute_problem(node.module, alias.name) is None:
                    submodule = _submodule(node.module, alias.name)
                    if submodule:
                        bind(node, alias.asname or alias.name, submodule)
                    else:
                        others.append((node, alias.asname or alias.name))
    clashes += [(node, name) for node, name in others if name in modules]
    return modules, clashes


class _Checker(ast.NodeVisitor):
    """Rules for both contracts, on every node."""

    def __init__(self, contract: str, tree: ast.Module) -> None:
        self.contract = contract
        self.problems: list[Problem] = []
        self.parents: dict[ast.AST, ast.AST] = {
            child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)
        }
        self.modules, self.clashes = _bound_modules(tree)
        """Local name -> the module an import binds it to, wherever the import is in the file."""
        self.rebound, self.imported = _bindings(tree)

    def check_module_names_are_not_reused(self) -> None:
        """A name bound to a module must stay the module, or `name.attr` would be checked wrongly."""
        for name, module in self.modules.items():
            for node in self.rebound.get(name, []):
                self.add(node, f"the name '{name}' is the imported module {module}; use another name here")
        for node, name in self.clashes:
            self.add(
                node,
                f"the name '{name}' is imported as a module and as something else; give each its own name",
            )

    def canonical(self, node: ast.AST) -> str | None:
        """`functools.lru_cache` for a decorator written `lru_cache` or `functools.lru_cache`, `property`
        for the builtin; None when the name may be the author's own (it is bound in the file)."""
        if isinstance(node, ast.Name):
            if node.id in self.rebound:
                return None
            origin = self.imported.get(node.id)
            return node.id if origin is None else origin
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = self.modules.get(node.value.id)
            if module and node.value.id not in self.rebound:
                return f"{module}.{node.attr}"
        return None

    def add(self, node: ast.AST, message: str) -> None:
        self.problems.append(Problem(getattr(node, "lineno", 1), getattr(node, "col_offset", 0), message))

    # -- imports ---------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.asname is not None:
                self._check_alias(node, alias.asname)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.add(node, "relative imports are not allowed: a bot is a single file")
            return
        if not node.module or not self._check_module(node, node.module):
            return
        for alias in node.names:
            if alias.name == "*":
                self.add(
                    node,
                    f"star imports ('from {node.module} import *') are not allowed; import the names you use",
                )
                continue
            if alias.asname is not None:
                self._check_alias(node, alias.asname)
            if node.module == "__future__":
                continue
            problem = module_attribute_problem(node.module, alias.name)
            if problem:
                self.add(node, problem)

    def _check_alias(self, node: ast.AST, asname: str) -> None:
        """An alias may not take a name the checker treats specially (dunders, refused builtins)."""
        if _is_dunder(asname) or asname in FORBIDDEN_BUILTINS or asname in ATTRIBUTE_BUILTINS:
            self.add(node, f"'{asname}' cannot be an import alias in bots; choose another name")

    def _check_module(self, node: ast.AST, name: str) -> bool:
        parts = name.split(".")
        if parts[0] not in ALLOWED_MODULES:
            allowed = ", ".join(sorted(ALLOWED_MODULES - {"__future__"}))
            self.add(node, f"import of '{name}' is not allowed; allowed modules: {allowed}")
            return False
        problem = submodule_problem(name)
        if problem:
            self.add(node, problem)
            return False
        return True

    # -- names and attributes --------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        parent = self.parents.get(node)
        if name in FORBIDDEN_BUILTINS:
            self.add(node, f"'{name}' is not allowed in bots: {FORBIDDEN_BUILTINS[name]}")
        elif name in ATTRIBUTE_BUILTINS and not (isinstance(parent, ast.Call) and parent.func is node):
            self.add(
                node,
                f"'{name}' may only be called directly, as {name}(obj, 'literal_name'); passing "
                "or storing it would hide which attribute it reaches",
            )
        elif name == "input" and self.contract == HostedContract.DECIDE:
            self.add(node, "'input' is for the codingame contract; a decide bot gets its observation")
        elif (
            _is_dunder(name)
            and (name not in ALLOWED_DUNDER_NAMES or not isinstance(node.ctx, ast.Load))
            and not (name in ALLOWED_CLASS_DUNDERS and self._in_class_scope(node))
        ):
            readable = ", ".join(sorted(ALLOWED_DUNDER_NAMES))
            self.add(
                node,
                f"the name '{name}' is not allowed in bots (bots may only read: {readable}; a class "
                "body may also set __slots__ and name its special methods, as in __radd__ = __add__)",
            )
        elif (
            name in self.modules
            and isinstance(node.ctx, ast.Load)
            and not (isinstance(parent, ast.Attribute) and parent.value is node)
        ):
            self.add(
                node,
                f"the module '{name}' may only be used as {name}.<name>; passing or storing a "
                "module would hide what is used from it",
            )

    def _in_class_scope(self, node: ast.AST) -> bool:
        """True when `node` is evaluated in a class body's own scope (not in a method or lambda)."""
        parent = self.parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.ClassDef):
                return True
            if isinstance(parent, _SCOPES):
                return False
            parent = self.parents.get(parent)
        return False

    def _module_of(self, node: ast.AST) -> str | None:
        """The module an expression names (`sys`, `collections.abc`), else None."""
        if isinstance(node, ast.Name):
            return self.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._module_of(node.value)
            if base and module_attribute_problem(base, node.attr) is None:
                return _submodule(base, node.attr)
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        module = self._module_of(node.value)
        if _is_dunder(attr) and attr not in ALLOWED_DUNDER_ATTRIBUTES:
            self.add(node, f"access to the attribute '{attr}' is not allowed in bots")
        elif module is not None:
            problem = module_attribute_problem(module, attr)
            if problem:
                self.add(node, problem)
            elif _submodule(module, attr) and not isinstance(self.parents.get(node), ast.Attribute):
                self.add(node, f"the module '{module}.{attr}' may only be used as {module}.{attr}.<name>")
        elif attr in BANNED_ATTRIBUTES:
            self.add(node, f"access to the attribute '{attr}' is not allowed in bots: {_banned_reason(attr)}")
        if attr in ("format", "format_map"):
            if _is_str_constant(node.value):
                problem = format_field_problem(node.value.value)  # type: ignore[attr-defined]
                if problem:
                    self.add(node, problem)
            else:
                self.add(
                    node,
                    f"'.{attr}' may only be called on a string literal (or use an f-string), so "
                    "its fields can be checked",
                )
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ATTRIBUTE_BUILTINS:
            self._check_attribute_builtin(node, func.id)
        if isinstance(func, ast.Name) and func.id == "type" and len(node.args) != 1:
            self.add(node, "type() with three arguments builds a class from strings; write a class statement")
        self.generic_visit(node)

    def _check_attribute_builtin(self, node: ast.Call, name: str) -> None:
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args) or len(node.args) < 2:
            self.add(node, f"{name}() needs its arguments written out, as {name}(obj, 'literal_name')")
            return
        attr = node.args[1]
        if not _is_str_constant(attr):
            self.add(node, f"{name}() needs a literal attribute name in bots")
            return
        value = attr.value  # type: ignore[attr-defined]
        if _is_refused_attribute(value):
            self.add(node, f"{name}() with '{value}' is not allowed in bots")
        elif value in ("format", "format_map"):
            self.add(node, f"{name}() with '{value}' is not allowed: call .{value} on a string literal")

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:
            if _is_refused_attribute(attr):
                self.add(node, f"a class pattern may not read the attribute '{attr}' in bots")
        self.generic_visit(node)

    # -- definitions -----------------------------------------------------------------------

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name in CLASS_CREATION_HOOKS:
            self.add(
                node, f"defining '{node.name}' is not allowed: Python calls it while classes are created"
            )
        elif _is_dunder(node.name) and node.name not in ALLOWED_SPECIAL_METHODS:
            self.add(
                node,
                f"defining '{node.name}' is not allowed in bots; special methods bots may define: "
                + ", ".join(sorted(ALLOWED_SPECIAL_METHODS)),
            )
        arguments = node.args
        for arg in [
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            arguments.vararg,
            arguments.kwarg,
        ]:
            if arg is not None and arg.annotation is not None:
                self._check_annotation(arg.annotation)
        if node.returns is not None:
            self._check_annotation(node.returns)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_annotation(node.annotation)
        self.generic_visit(node)

    def _check_annotation(self, annotation: ast.AST) -> None:
        problem = _type_expression_problem(annotation)
        if problem:
            self.add(annotation, problem)
            return
        for text in _string_annotations(annotation):
            expression = ast.parse(str(text.value), mode="eval")
            assert isinstance(expression, ast.Expression)
            parsed = expression.body
            for parent in ast.walk(parsed):
                ast.copy_location(parent, text)
                self.parents.update((child, parent) for child in ast.iter_child_nodes(parent))
            self.visit(parsed)


ANNOTATION_MESSAGE = (
    "annotations must be type expressions (names, X[...], X | Y, string forward references); "
    "this one would run code when it is evaluated"
)


def _type_expression_problem(node: ast.AST, *, literal: bool = False) -> str | None:
    if isinstance(node, ast.Constant):
        if literal or not isinstance(node.value, str):
            return None
        try:
            parsed = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return f"the string annotation {node.value!r} is not a type expression"
        return _type_expression_problem(parsed)
    if isinstance(node, ast.Name | ast.Attribute):
        return None if _dotted(node) else ANNOTATION_MESSAGE
    if isinstance(node, ast.Subscript):
        is_literal = (_dotted(node.value) or "").split(".")[-1] == "Literal"
        return _type_expression_problem(node.value) or _type_expression_problem(
            node.slice, literal=is_literal
        )
    if isinstance(node, ast.Tuple | ast.List):
        for element in node.elts:
            problem = _type_expression_problem(element, literal=literal)
            if problem:
                return problem
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _type_expression_problem(node.left) or _type_expression_problem(node.right)
    return ANNOTATION_MESSAGE


def _string_annotations(node: ast.AST) -> list[ast.Constant]:
    """The forward references in an annotation (strings outside Literal[...]), to check as code."""
    if _is_str_constant(node):
        return [node]  # type: ignore[list-item]
    if isinstance(node, ast.Subscript):
        if (_dotted(node.value) or "").split(".")[-1] == "Literal":
            return []
        return _string_annotations(node.value) + _string_annotations(node.slice)
    if isinstance(node, ast.Tuple | ast.List):
        return [text for element in node.elts for text in _string_annotations(element)]
    if isinstance(node, ast.BinOp):
        return _string_annotations(node.left) + _string_annotations(node.right)
    return []


class _ImportTime:
    """The decide contract: loading the module must run none of the author's code."""

    def __init__(self, checker: _Checker) -> None:
        self.checker = checker
        self.enums: set[str] = set()
        self.opaque: set[str] = set()
        """Top-level names bound to attributes of the author's classes (enum members, say)."""

    def add(self, node: ast.AST, message: str) -> None:
        self.checker.add(node, message)

    def check_module(self, tree: ast.Module) -> None:
        self._check_body(tree.body, in_class=False)
        if not any(isinstance(stmt, ast.FunctionDef) and stmt.name == "decide" for stmt in tree.body):
            self.add(tree, "the bot must define a top-level function decide(observation)")

    def _check_body(self, body: list[ast.stmt], *, in_class: bool) -> None:
        properties: set[str] = set()
        where = "a class body" if in_class else "a decide bot"
        place = "class-body" if in_class else "top-level"
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef):
                self._check_function(stmt, properties)
            elif isinstance(stmt, ast.AsyncFunctionDef):
                if in_class:
                    self._check_function(stmt, properties)
                else:
                    self.add(stmt, "async functions are not supported; decide() is called synchronously")
            elif isinstance(stmt, ast.ClassDef):
                self._check_class(stmt)
            elif isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass):
                pass
            elif isinstance(stmt, ast.Expr) and _is_str_constant(stmt.value):
                pass  # a docstring
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                self._check_assignment(stmt, in_class=in_class)
            elif not in_class and isinstance(stmt, ast.If) and _is_main_guard(stmt.test):
                if stmt.orelse:
                    self.add(
                        stmt.orelse[0], "the 'else' of the __main__ guard would run when the bot is loaded"
                    )
            else:
                kind = type(stmt).__name__
                advice = "" if in_class else ", or submit the script with the codingame contract"
                self.add(
                    stmt,
                    f"{place} statement '{kind}' is not allowed in {where}: it would run when the bot "
                    f"is loaded; put it inside a function{advice}",
                )

    def _check_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, properties: set[str]) -> None:
        names = []
        for decorator in node.decorator_list:
            name = self._decorator_name(decorator, properties)
            names.append(name)
            if name is None:
                self.add(
                    decorator,
                    "this decorator would run code when the bot is loaded; allowed decorators: "
                    + ", ".join(sorted(ALLOWED_DECORATORS)),
                )
        if "property" in names:
            properties.add(node.name)
        if "classmethod" in names and ("property" in names or "functools.cached_property" in names):
            self.add(
                node, "a class property (classmethod over property) would run code when read at load time"
            )
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None and not self._is_constant(default):
                self.add(
                    default, "default arguments are evaluated when the bot is loaded; they must be constants"
                )

    def _decorator_name(self, node: ast.expr, properties: set[str]) -> str | None:
        target = node.func if isinstance(node, ast.Call) else node
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id in properties
            and target.attr in ("setter", "getter", "deleter")
        ):
            return "property"
        canonical = self.checker.canonical(target)
        if canonical not in ALLOWED_DECORATORS:
            return None
        if isinstance(node, ast.Call) and not all(self._is_constant(v) for v in _call_values(node)):
            return None
        return canonical

    def _check_class(self, node: ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            if self._decorator_name(decorator, set()) is None:
                self.add(
                    decorator,
                    "this class decorator would run code when the bot is loaded; allowed decorators: "
                    + ", ".join(sorted(ALLOWED_DECORATORS)),
                )
        base_names = [_dotted(base.value if isinstance(base, ast.Subscript) else base) for base in node.bases]
        for base, name in zip(node.bases, base_names, strict=True):
            if name is None or (isinstance(base, ast.Subscript) and _type_expression_problem(base)):
                self.add(base, "base classes must be named classes (Name, module.Name or Generic[T])")
        canonical_bases = [self.checker.canonical(base) for base in node.bases]
        is_enum = any(c in ENUM_BASES for c in canonical_bases) or any(n in self.enums for n in base_names)
        if is_enum:
            self.enums.add(node.name)
            for base, name, canonical in zip(node.bases, base_names, canonical_bases, strict=True):
                if canonical not in ENUM_BASES | {"int", "str", "float"} and name not in self.enums:
                    self.add(
                        base,
                        "an enum may only mix in int, str, float or other enums: its members are "
                        "created when the bot is loaded",
                    )
            for stmt in node.body:
                names = [stmt.name] if isinstance(stmt, ast.FunctionDef) else _assigned_names(stmt)
                for name in names:
                    if name in ENUM_CREATION_METHODS or _is_dunder(name):
                        self.add(
                            stmt,
                            f"an enum may not define '{name}': its members exist while the bot is "
                            "loaded, so Python may call it then; write a plain method instead",
                        )
        for keyword in node.keywords:
            if keyword.arg == "metaclass" or keyword.arg is None:
                self.add(
                    keyword,
                    "metaclasses are not allowed in a decide bot: they run code when the class is created",
                )
            elif not self._is_constant(keyword.value):
                self.add(keyword, "class keywords must be constants")
        self._check_body(node.body, in_class=True)

    def _check_assignment(self, stmt: ast.Assign | ast.AnnAssign, *, in_class: bool) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if not all(isinstance(n, ast.Name | ast.Tuple | ast.List | ast.Store) for n in ast.walk(target)):
                self.add(stmt, "top-level assignments may only bind names")
        value = stmt.value
        if value is None:
            return
        if in_class and self._is_class_body_call(value):
            return
        if not self._is_constant(value):
            place = "class-body" if in_class else "top-level"
            self.add(
                stmt,
                f"{place} assignments must be constants (literals, names, arithmetic, module "
                "constants like math.pi): they run when the bot is loaded; compute anything else "
                "inside a function",
            )
        elif (isinstance(value, ast.Attribute) and self._is_author_attribute(value)) or (
            isinstance(value, ast.Name) and value.id in self.opaque
        ):
            for target in targets:
                self.opaque.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))

    def _is_class_body_call(self, value: ast.expr) -> bool:
        """dataclasses.field(...) and enum.auto() with constant arguments."""
        return (
            isinstance(value, ast.Call)
            and self.checker.canonical(value.func) in CLASS_BODY_CALLS
            and all(self._is_constant(v) for v in _call_values(value))
        )

    def _is_author_attribute(self, node: ast.Attribute) -> bool:
        """`Color.RED`: an attribute of the author's own object, whose operators the author wrote."""
        return self.checker._module_of(node.value) is None

    def _is_operand(self, node: ast.expr) -> bool:
        """Something an operator or a hash may be applied to at load time without the author's code."""
        if isinstance(node, ast.Attribute) and self._is_author_attribute(node):
            return False
        if isinstance(node, ast.Name) and node.id in self.opaque:
            return False
        return self._is_constant(node)

    def _is_constant(self, node: ast.AST) -> bool:
        """Literals and containers of them, names, module attributes (math.pi) and arithmetic."""
        if isinstance(node, ast.Constant | ast.Name):
            return True
        if isinstance(node, ast.Attribute):
            return _dotted(node) is not None
        if isinstance(node, ast.Tuple | ast.List):
            return all(self._is_constant(e) for e in node.elts)
        if isinstance(node, ast.Set):
            return all(self._is_operand(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(k is not None and self._is_operand(k) for k in node.keys) and all(
                self._is_constant(v) for v in node.values
            )
        if isinstance(node, ast.UnaryOp):
            return self._is_operand(node.operand)
        if isinstance(node, ast.BinOp):
            return self._is_operand(node.left) and self._is_operand(node.right)
        if isinstance(node, ast.Subscript):  # type aliases: Point = tuple[float, float]
            return self._is_operand(node.value) and self._is_operand(node.slice)
        return False


def _assigned_names(stmt: ast.stmt) -> list[str]:
    """The names a class-body assignment binds (`__lt__ = __le__`, `A, B = 1, 2`)."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign):
        targets = [stmt.target]
    else:
        return []
    return [n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)]


def _call_values(node: ast.Call) -> list[ast.expr]:
    return [*node.args, *(k.value for k in node.keywords)]


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
