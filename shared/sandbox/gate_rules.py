"""The static gate's tables: what bots may import and use, and why the rest is refused.

Kept apart from the checker (shared/sandbox/gate.py) so the policy reads as a list; each refused
name carries the reason the gate shows, since authors (and LLM-written code) learn from it.
"""

from __future__ import annotations

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
        "numpy",
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
"""Pure computation, plus sys (CodinGame scripts read sys.stdin) and time (budgeting a turn).
numpy is the one package from outside the standard library: the sandbox binds it read-only (see
shared/sandbox/runtime.py), since CodinGame's Python offers it and bots written there use it."""

_NO_FILES = "bots have no files; the observation carries everything"
_HOST = "it describes the host's installation, not the game"
_TOOLS = "it is tooling that compiles code or starts processes, not something a bot computes with"
REFUSED_MODULE_ATTRIBUTES: dict[str, dict[str, str]] = {
    "numpy": {
        "ctypeslib": "it hands out raw memory through ctypes",
        "lib": "it holds numpy's file readers and raw-memory views; what bots need of it is at numpy.<name>",
        "core": "numpy.core is numpy's private implementation; use numpy.<name>",
        **dict.fromkeys(["testing", "f2py", "distutils"], _TOOLS),
        **dict.fromkeys(
            [
                "load", "loads", "save", "savez", "savez_compressed", "loadtxt", "savetxt",
                "genfromtxt", "fromfile", "fromregex", "memmap", "DataSource", "dump", "dumps",
            ],
            _NO_FILES,
        ),
        **dict.fromkeys(["show_config", "show_runtime", "info", "lookfor", "get_include"], _HOST),
    },
}  # fmt: skip
"""Names refused in an allowed package and all of its submodules (`numpy.ma.load` too), with the
reason the gate shows."""

ALLOWED_SYS_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "argv",
        "byteorder",
        "exit",
        "float_info",
        "getrecursionlimit",
        "getsizeof",
        "hash_info",
        "int_info",
        "maxsize",
        "maxunicode",
        "platform",
        "setrecursionlimit",
        "stderr",
        "stdin",
        "stdout",
        "version",
        "version_info",
    }
)
"""sys reaches every loaded module and the interpreter's hooks, so it is an allow-list."""

_DYNAMIC = "it runs code built from strings"
_NAMESPACES = "it hands out a namespace, and through it anything the interpreter holds"
FORBIDDEN_BUILTINS: dict[str, str] = {
    "__import__": "imports are written as import statements",
    "breakpoint": "it starts a debugger",
    "compile": _DYNAMIC,
    "copyright": "a site helper that reads files",
    "credits": "a site helper that reads files",
    "delattr": "it removes attributes by name",
    "eval": _DYNAMIC,
    "exec": _DYNAMIC,
    "globals": _NAMESPACES,
    "help": "it starts the interactive help system",
    "license": "a site helper that reads files",
    "locals": _NAMESPACES,
    "memoryview": "it exposes raw memory",
    "open": "bots have no files; the observation carries everything",
    "vars": _NAMESPACES,
}
ATTRIBUTE_BUILTINS: frozenset[str] = frozenset({"getattr", "setattr", "hasattr"})
"""Allowed only as direct calls with a literal attribute name."""

ALLOWED_DUNDER_NAMES: frozenset[str] = frozenset({"__name__"})
ALLOWED_DUNDER_ATTRIBUTES: frozenset[str] = frozenset({"__init__", "__name__"})

_FRAMES = "it reaches the interpreter's frames and, through them, every namespace"
_CODE = "it reaches code objects, which can be rebuilt into arbitrary bytecode"
_BY_NAME = "it reads attributes by a name in a string; write obj.name instead"
_SYS = "sys.{attr} reaches the interpreter's modules or hooks"
_EVALUATES = "it evaluates strings as code"
BANNED_ATTRIBUTES: dict[str, str] = {
    **dict.fromkeys(
        [
            "f_back",
            "f_builtins",
            "f_code",
            "f_globals",
            "f_locals",
            "f_trace",
            "gi_frame",
            "gi_yieldfrom",
            "cr_frame",
            "cr_await",
            "ag_frame",
            "ag_await",
            "tb_frame",
            "tb_next",
        ],
        _FRAMES,
    ),
    **dict.fromkeys(["gi_code", "cr_code", "ag_code", "co_code", "co_consts", "co_names"], _CODE),
    "ctypes": "a numpy array's ctypes hands out its raw memory",
    "tofile": "bots have no files; the observation carries everything",
    "attrgetter": _BY_NAME,
    "methodcaller": _BY_NAME,
    "Formatter": "its fields read attributes by name ('{0.__class__}')",
    "get_type_hints": _EVALUATES,
    "ForwardRef": _EVALUATES,
    **dict.fromkeys(
        [
            "modules",
            "meta_path",
            "path_hooks",
            "path_importer_cache",
            "settrace",
            "setprofile",
            "gettrace",
            "getprofile",
            "addaudithook",
            "breakpointhook",
            "displayhook",
            "excepthook",
            "unraisablehook",
            "exc_info",
            "last_traceback",
            "last_value",
            "last_type",
            "call_tracing",
            "setdlopenflags",
        ],
        _SYS,
    ),
}
"""Refused on any object, not only the module that defines them: a module can travel under
another name, so these are refused by name wherever they appear."""

ALLOWED_DECORATORS: frozenset[str] = frozenset(
    {
        "staticmethod",
        "classmethod",
        "property",
        "dataclasses.dataclass",
        "functools.cache",
        "functools.lru_cache",
        "functools.cached_property",
        "functools.total_ordering",
        "enum.unique",
        "typing.final",
        "typing.overload",
    }
)
"""Standard-library decorators that run none of the author's code when the bot is loaded, by the
name they resolve to: `lru_cache` counts when it comes from `from functools import lru_cache`
and the file binds that name nowhere else (an author's own `def property(f)` is not property)."""

CLASS_BODY_CALLS: frozenset[str] = frozenset({"dataclasses.field", "enum.auto"})
ENUM_BASES: frozenset[str] = frozenset(
    {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"}
)
ENUM_CREATION_METHODS: frozenset[str] = frozenset({"_generate_next_value_"})
"""Enum members are created when the class is: these methods would run at load time."""
CLASS_CREATION_HOOKS: frozenset[str] = frozenset(
    {"__init_subclass__", "__set_name__", "__class_getitem__", "__mro_entries__", "__prepare__"}
)
ALLOWED_SPECIAL_METHODS: frozenset[str] = frozenset(
    {
        "__init__",
        "__post_init__",
        "__repr__",
        "__str__",
        "__format__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__bool__",
        "__len__",
        "__iter__",
        "__next__",
        "__reversed__",
        "__contains__",
        "__getitem__",
        "__setitem__",
        "__delitem__",
        "__call__",
        "__enter__",
        "__exit__",
        "__add__",
        "__radd__",
        "__sub__",
        "__rsub__",
        "__mul__",
        "__rmul__",
        "__truediv__",
        "__rtruediv__",
        "__floordiv__",
        "__mod__",
        "__pow__",
        "__neg__",
        "__pos__",
        "__abs__",
        "__rfloordiv__",
        "__rmod__",
        "__divmod__",
        "__rdivmod__",
        "__rpow__",
        "__matmul__",
        "__rmatmul__",
        "__and__",
        "__rand__",
        "__or__",
        "__ror__",
        "__xor__",
        "__rxor__",
        "__lshift__",
        "__rlshift__",
        "__rshift__",
        "__rrshift__",
        "__invert__",
        "__iadd__",
        "__isub__",
        "__imul__",
        "__itruediv__",
        "__ifloordiv__",
        "__imod__",
        "__ipow__",
        "__imatmul__",
        "__iand__",
        "__ior__",
        "__ixor__",
        "__ilshift__",
        "__irshift__",
        "__float__",
        "__int__",
        "__complex__",
        "__index__",
        "__round__",
        "__trunc__",
        "__floor__",
        "__ceil__",
        "__missing__",
        "__length_hint__",
        "__copy__",
        "__deepcopy__",
    }
)
"""The protocols a bot's classes need. Others (`__getattr__`, `__reduce__`, `__typing_subst__`,
`__del__`...) are hooks the interpreter or the standard library call behind the code's back."""

ALLOWED_CLASS_DUNDERS: frozenset[str] = ALLOWED_SPECIAL_METHODS | {"__slots__"}
"""Dunder names a class body may bind and read in its own scope: `__slots__ = ("x", "y")`, and its
special methods by name (`__radd__ = __add__`, `__hash__ = None`)."""
