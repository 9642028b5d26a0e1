"""The tree is the architecture: no service imports another service, shared/ imports none, and no
service's modules import each other in a circle. Read from the source with `ast`, so an import inside
a function or under TYPE_CHECKING counts as much as one at the top of a module.

The command line is a front end: it may drive the services whose work it runs on a laptop
(`arena train`, `arena export`, `arena eval` run the trainer's code, `arena evolve` the evolver's,
`arena view` serves the gateway's replay viewer), and nothing may import it."""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICES = sorted(path.name for path in (ROOT / "services").iterdir() if (path / "__init__.py").is_file())
FRONT_END = "cli"
DRIVEN_BY_FRONT_END = ("services.trainer.", "services.evolver.", "services.gateway.web.standalone.")
"""What of the services the command line runs itself: the trainer, the evolver, and the gateway's
standalone replay viewer (not the rest of the gateway)."""
# On one pytest-xdist worker, so that each file is parsed once (`parsed`) for all the checks.
pytestmark = pytest.mark.xdist_group("import-graph")

KNOWN_CIRCLES: dict[str, str] = {}
"""Circles tolerated for now, by service, with the reason (none today)."""


@dataclass(frozen=True)
class Import:
    path: Path
    line: int
    module: str
    """The imported module as written (`from a.b import c`: a.b.c when a.b.c is a module of the tree)."""

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}: imports {self.module}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off meanwhile: a syntax tree is many thousands of objects made at
    once, and in a test process with a large heap, collections among them as they are made cost
    several times the parsing itself."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
"""The fields that hold statements (an except clause's or a match case's own `body` included): an
import is a statement, so the search for imports need not walk into any expression."""


@functools.cache
def import_statements(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """A file's import statements, wherever they stand (in functions, classes, if TYPE_CHECKING: ...),
    in the order of their lines, parsed once for all the checks here. Only these are kept, not the
    whole syntax trees, which would make every later collection in this process (pytest runs
    several at its end) walk millions of objects."""
    with collector_paused():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found: list[ast.Import | ast.ImportFrom] = []
        todo: list[ast.AST] = list(tree.body)
        while todo:
            node = todo.pop()
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append(node)
            for field in STATEMENT_LISTS:
                todo.extend(getattr(node, field, ()))
        return tuple(sorted(found, key=lambda node: (node.lineno, node.col_offset)))


def imports(path: Path, *, package: str | None = None) -> Iterator[Import]:
    """Every absolute import in the file, wherever it stands; given the file's `package`, relative
    ones too, made absolute (`from . import x` in package tests.a: tests.a.x)."""
    for node in import_statements(path):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                yield Import(path, node.lineno, f"{node.module}.{alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level > 0 and package is not None:
            parts = package.split(".")
            base = parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else [])
            for alias in node.names:
                yield Import(path, node.lineno, ".".join([*base, alias.name]))


def service_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "services" else None


def cross_service_imports(root: Path) -> list[Import]:
    """Imports of a service by shared/ or by another service, except the front end's allowed ones."""
    found = []
    for path in sorted(root.glob("services/*/**/*.py")) + sorted(root.glob("shared/**/*.py")):
        parts = path.relative_to(root).parts
        importer = parts[1] if parts[0] == "services" else None
        for found_import in imports(path):
            imported = service_of(found_import.module)
            if imported is None or imported == importer:
                continue
            if importer == FRONT_END and f"{found_import.module}.".startswith(DRIVEN_BY_FRONT_END):
                continue
            found.append(found_import)
    return found


def cycles(service: str, root: Path = ROOT) -> list[list[str]]:
    """Circles of imports among one service's modules (`a -> b -> a`), one per back edge found."""
    paths = sorted((root / "services" / service).rglob("*.py"))
    modules = {module_name(path): path for path in paths}

    def target(imported: str) -> str | None:
        name = imported
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges = {
        name: sorted({t for i in imports(path) if (t := target(i.module)) and t != name})
        for name, path in modules.items()
    }
    found: list[list[str]] = []
    state: dict[str, str] = {}

    def visit(name: str, stack: list[str]) -> None:
        state[name] = "open"
        stack.append(name)
        for successor in edges[name]:
            if state.get(successor) == "open":
                found.append([*stack[stack.index(successor) :], successor])
            elif successor not in state:
                visit(successor, stack)
        stack.pop()
        state[name] = "done"

    for name in sorted(modules):
        if name not in state:
            visit(name, [])
    return found


def test_no_service_imports_another_service() -> None:
    offending = cross_service_imports(ROOT)
    assert not offending, "imports across services (move the shared part to shared/):\n" + "\n".join(
        map(str, offending)
    )


@pytest.mark.parametrize(
    "service",
    [
        pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_CIRCLES[name], strict=False))
        if name in KNOWN_CIRCLES
        else name
        for name in SERVICES
    ],
)
def test_no_import_circle_inside_a_service(service: str) -> None:
    found = cycles(service)
    assert not found, f"import circles in services/{service}:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_test_module_imports_a_conftest() -> None:
    """Conftests hold fixtures, which pytest finds by itself; helpers live in tests/support/, so a
    test's imports say where a helper is, and a conftest can change without breaking its readers."""
    found = [
        str(found)
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for found in imports(path)
        if "conftest" in found.module.split(".")
    ]
    assert found == []


def imports_of_other_test_modules(root: Path) -> list[Import]:
    """Imports, in the files under tests/, of any module of tests/ outside tests/support/."""
    return [
        found
        for path in sorted((root / "tests").rglob("*.py"))
        for found in imports(path, package=".".join(path.relative_to(root).parent.parts))
        if found.module.split(".")[0] == "tests" and found.module.split(".")[:2] != ["tests", "support"]
    ]


def test_test_modules_import_helpers_from_tests_support_only() -> None:
    """What several test modules share lives in tests/support/, by domain, and fixtures in conftest.py
    files: a test module imports no other test module (nor a helper module beside the tests), so a
    test module can change, move or go without breaking another, and a shared helper is found in
    one place."""
    found = imports_of_other_test_modules(ROOT)
    assert not found, "move what is shared to tests/support/ (fixtures to a conftest.py):\n" + "\n".join(
        map(str, found)
    )
