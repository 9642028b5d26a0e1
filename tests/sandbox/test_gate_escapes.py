"""The static gate against escape families, as tables of (source, expected message fragment).

Each known escape family, with the variants an attacker would try next. The gate is not the
boundary (the sandbox is, see test_attacks.py), but its messages are what authors and LLM-written
code learn from, so every variant must be refused with a message that names the problem and its
line. The second half shows that legitimate bots, including every hosted bot the demo and the
benchmarks upload, still pass.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from shared.sandbox.gate import check_source

ROOT = Path(__file__).resolve().parents[2]


def in_decide(body: str, imports: str = "") -> str:
    """Statements inside decide(observation), after the given imports."""
    return f"{imports}\ndef decide(observation):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def top(code: str) -> str:
    """A decide bot whose top level holds `code`."""
    return textwrap.dedent(code) + "\n\ndef decide(observation):\n    return {}\n"


GOOD = "def decide(observation):\n    return {}\n"

ENCODING = [
    ("utf-7 cookie", "# coding: utf-7\n" + GOOD, "coding declaration 'utf-7' is not allowed"),
    ("emacs style", "# -*- coding: unicode_escape -*-\n" + GOOD, "'unicode_escape' is not allowed"),
    ("vim style on line 2", "#!/usr/bin/env python3\n# vim: set fileencoding=utf-7 :\n" + GOOD, "'utf-7'"),
    ("blank line 1", "\n# coding: raw_unicode_escape\n" + GOOD, "'raw_unicode_escape'"),
    ("equals sign", "#coding=latin-1\n" + GOOD, "'latin-1' is not allowed"),
    ("utf-16", "# coding: utf_16\n" + GOOD, "'utf_16'"),
    ("unknown codec", "# coding: made-up\n" + GOOD, "'made-up'"),
    ("BOM plus cookie", "\ufeff# coding: utf-7\n" + GOOD, "byte order mark"),
    ("BOM plus cookie, the cookie", "\ufeff# coding: utf-7\n" + GOOD, "coding declaration 'utf-7'"),
    ("BOM alone", "\ufeff" + GOOD, "byte order mark"),
    ("CR line endings", "#!python\r# coding: utf-7\r" + GOOD, "'utf-7'"),
    ("lone surrogate", "X = '\ud800'\n" + GOOD, "not valid UTF-8 text"),
    ("deep expression", "X = " + "1+" * 40_000 + "1\n" + GOOD, "nests too deeply"),
    ("deep unary", "X = " + "-" * 90_000 + "1\n" + GOOD, "nests too deeply"),
    ("deep attribute chain", in_decide("return " + "o." * 40_000 + "b"), "nests too deeply"),
    ("deep but parseable", in_decide("return " + "-" * 900 + "1"), "nests too deeply"),
    ("bytes not UTF-8", b"X = '\xff'\n" + GOOD.encode(), "not valid UTF-8 text"),
]

ATTRIBUTE_BY_NAME = [
    (
        "attrgetter",
        in_decide("return operator.attrgetter('__class__')(observation)", "import operator"),
        "'operator.attrgetter' is not available",
    ),
    (
        "from-import attrgetter",
        in_decide("return 1", "from operator import attrgetter"),
        "'operator.attrgetter'",
    ),
    ("methodcaller", in_decide("return 1", "from operator import methodcaller"), "'operator.methodcaller'"),
    ("format field", in_decide("return '{0.__class__}'.format(observation)"), "reads an attribute"),
    ("format plain attr", in_decide("return '{0.real}'.format(1)"), "reads an attribute"),
    ("format nested spec", in_decide("return '{0:{1.__class__}}'.format(1, 2)"), "reads an attribute"),
    ("format_map", in_decide("return '{o.__class__}'.format_map(observation)"), "reads an attribute"),
    (
        "format on a variable",
        in_decide("t = '{0.x}'\nreturn t.format(observation)"),
        "'.format' may only be called on a string literal",
    ),
    (
        "unbound str.format",
        in_decide("return str.format('{0.x}', observation)"),
        "'.format' may only be called on a string literal",
    ),
    (
        "string.Formatter",
        in_decide("return string.Formatter().format('{0.x}', 1)", "import string"),
        "'string.Formatter'",
    ),
    (
        "from string import Formatter",
        in_decide("return 1", "from string import Formatter"),
        "'string.Formatter'",
    ),
    (
        "getattr computed name",
        in_decide("return getattr(observation, observation['k'])"),
        "needs a literal attribute name",
    ),
    (
        "getattr concatenated",
        in_decide("return getattr(observation, '__cl' + 'ass__')"),
        "needs a literal attribute name",
    ),
    ("getattr starred", in_decide("return getattr(*(observation, '__class__'))"), "arguments written out"),
    (
        "getattr alias",
        in_decide("g = getattr\nreturn g(observation, 'x')"),
        "'getattr' may only be called directly",
    ),
    (
        "getattr mapped",
        in_decide("return list(map(getattr, [observation], ['x']))"),
        "'getattr' may only be called directly",
    ),
    ("getattr dunder", in_decide("return getattr(observation, '__dict__')"), "getattr() with '__dict__'"),
    ("getattr format", in_decide("return getattr('{0.x}', 'format')"), "getattr() with 'format'"),
    ("hasattr frame", in_decide("return hasattr(observation, 'f_back')"), "hasattr() with 'f_back'"),
    ("setattr dunder", in_decide("setattr(observation, '__class__', int)"), "setattr() with '__class__'"),
    ("vars", in_decide("return vars(observation)"), "'vars' is not allowed"),
    ("globals", in_decide("return globals()"), "'globals' is not allowed"),
    ("locals", in_decide("return locals()"), "'locals' is not allowed"),
    (
        "match class pattern",
        in_decide("match observation:\n    case object(__class__=c):\n        return c"),
        "class pattern may not read the attribute '__class__'",
    ),
    ("type with three args", in_decide("return type('X', (), {})"), "type() with three arguments"),
    ("dunder attribute", in_decide("return observation.__class__"), "attribute '__class__'"),
    (
        "subclasses walk",
        in_decide("return ().__class__.__base__.__subclasses__()"),
        "attribute '__subclasses__'",
    ),
    ("__builtins__", in_decide("return __builtins__"), "the name '__builtins__' is not allowed"),
    ("breakpoint", in_decide("breakpoint()"), "'breakpoint' is not allowed"),
    ("exec via compile", in_decide("exec(compile('1', 'x', 'exec'))"), "'compile' is not allowed"),
    ("eval", in_decide("return eval('1')"), "'eval' is not allowed"),
    ("fullwidth eval", in_decide("return \uff45\uff56\uff41\uff4c('1')"), "'eval' is not allowed"),
    (
        "fullwidth dunder",
        in_decide("return observation.__\uff43\uff4c\uff41\uff53\uff53__"),
        "attribute '__class__'",
    ),
    (
        "getattr with default",
        in_decide("return getattr(observation, '__class__', None)"),
        "getattr() with '__class__'",
    ),
    (
        "setattr computed",
        in_decide("setattr(observation, observation['k'], 1)"),
        "needs a literal attribute name",
    ),
    ("format kept for later", in_decide("f = '{0.__class__}'.format\nreturn f(1)"), "reads an attribute"),
    ("__import__", in_decide("return __import__('os')"), "'__import__' is not allowed"),
    ("site license", in_decide("return license()"), "'license' is not allowed"),
    ("generator frame", in_decide("return (x for x in []).gi_frame.f_back"), "attribute 'gi_frame'"),
    ("generator code", in_decide("return (x for x in []).gi_code"), "attribute 'gi_code'"),
    (
        "traceback",
        in_decide("try:\n    1 / 0\nexcept Exception as e:\n    return e.__traceback__"),
        "'__traceback__'",
    ),
]

MODULES = [
    ("import os as o", in_decide("return 1", "import os as o"), "import of 'os' is not allowed"),
    (
        "alias of an allowed module",
        in_decide("return s.modules", "import sys as s"),
        "'sys.modules' is not available",
    ),
    (
        "alias of an allowed module, an attribute off its allow-list",
        in_decide("return s.getrefcount(1)", "import sys as s"),
        "'sys.getrefcount' is not available to bots",
    ),
    (
        "from-import alias",
        in_decide("return 1", "from sys import getrefcount as s"),
        "'sys.getrefcount' is not available to bots",
    ),
    ("alias of a refused module", in_decide("return math.getcwd()", "import os as math"), "import of 'os'"),
    (
        "alias of a submodule of a refused module",
        in_decide("return 1", "import os.path as math"),
        "import of 'os.path' is not allowed",
    ),
    (
        "alias passed around",
        in_decide("return f(s)", "import sys as s"),
        "the module 's' may only be used as s.<name>",
    ),
    (
        "one alias for two modules",
        in_decide("return m.modules", "import math as m\nimport sys as m"),
        "imported as a module and as something else",
    ),
    (
        "an alias for a module and for a function",
        in_decide("return m.x", "import random as m\nfrom math import sqrt as m"),
        "imported as a module and as something else",
    ),
    (
        "alias rebound",
        in_decide("m = 1\nreturn m", "import math as m"),
        "the name 'm' is the imported module math",
    ),
    (
        "alias named like a dunder",
        in_decide("return 1", "import math as __builtins__"),
        "cannot be an import alias",
    ),
    (
        "alias named like a refused builtin",
        in_decide("return 1", "import math as eval"),
        "cannot be an import alias",
    ),
    (
        "alias named getattr",
        in_decide("return 1", "from math import pi as getattr"),
        "cannot be an import alias",
    ),
    (
        "alias of a private submodule",
        in_decide("return 1", "import re._parser as p"),
        "'_parser' is private",
    ),
    (
        "numpy's ctypes helpers",
        in_decide("return np.ctypeslib.as_array(0)", "import numpy as np"),
        "'numpy.ctypeslib' is not available",
    ),
    (
        "numpy's ctypes helpers, imported",
        in_decide("return 1", "import numpy.ctypeslib as c"),
        "'numpy.ctypeslib' is not available",
    ),
    (
        "numpy's raw views",
        in_decide("return 1", "from numpy.lib.stride_tricks import as_strided"),
        "'numpy.lib' is not available",
    ),
    (
        "numpy's file readers",
        in_decide("return np.load('/etc/passwd')", "import numpy as np"),
        "'numpy.load' is not available to bots: bots have no files",
    ),
    (
        "numpy's file readers in a submodule",
        in_decide("return np.ma.load('x')", "import numpy as np"),
        "'numpy.ma.load' is not available",
    ),
    (
        "numpy's file readers, from-imported under another name",
        in_decide("return 1", "from numpy import fromfile as read"),
        "'numpy.fromfile' is not available",
    ),
    ("an array's raw memory", in_decide("return observation.ctypes.data"), "'ctypes'"),
    ("an array written to a file", in_decide("return observation.tofile('x')"), "'tofile'"),
    ("numpy's private core", in_decide("return np.core.multiarray", "import numpy as np"), "'numpy.core'"),
    ("slots at top level", top("__slots__ = ('x',)"), "the name '__slots__' is not allowed"),
    (
        "slots read in a method",
        top("class P:\n    __slots__ = ('x',)\n    def names(self):\n        return __slots__"),
        "the name '__slots__' is not allowed",
    ),
    (
        "slots through an attribute",
        in_decide("return observation.__slots__"),
        "access to the attribute '__slots__'",
    ),
    ("a class binding __dict__", top("class P:\n    __dict__ = {}"), "the name '__dict__' is not allowed"),
    (
        "a class binding a hook by name",
        top("class P:\n    __getattr__ = None"),
        "the name '__getattr__' is not allowed",
    ),
    (
        "from-import alias of attrgetter",
        in_decide("return 1", "from operator import attrgetter as a"),
        "'operator.attrgetter'",
    ),
    (
        "star import of sys",
        in_decide("return modules", "from sys import *"),
        "star imports ('from sys import *')",
    ),
    (
        "star import of math",
        in_decide("return pi", "from math import *"),
        "star imports ('from math import *')",
    ),
    ("sys.modules", in_decide("return sys.modules['os']", "import sys"), "'sys.modules' is not available"),
    ("from sys import modules", in_decide("return 1", "from sys import modules"), "'sys.modules'"),
    (
        "module in a variable",
        in_decide("m = sys\nreturn m.modules", "import sys"),
        "the module 'sys' may only be used as sys.<name>",
    ),
    (
        "module in a list",
        in_decide("return [sys][0]", "import sys"),
        "the module 'sys' may only be used as sys.<name>",
    ),
    (
        "module as default",
        in_decide("def f(m=sys):\n    return m\nreturn f()", "import sys"),
        "the module 'sys' may only be used",
    ),
    ("sys._getframe", in_decide("return sys._getframe()", "import sys"), "'sys._getframe' is private"),
    ("sys.exc_info", in_decide("return sys.exc_info()", "import sys"), "'sys.exc_info' is not available"),
    (
        "sys.exception",
        in_decide("return sys.exception()", "import sys"),
        "'sys.exception' is not available to bots; from sys they may use",
    ),
    ("sys.settrace", in_decide("sys.settrace(None)", "import sys"), "'sys.settrace' is not available"),
    (
        "module through a module",
        in_decide("return dataclasses.inspect.stack()", "import dataclasses"),
        "'dataclasses.inspect' is the module 'inspect'",
    ),
    (
        "from-import a module",
        in_decide("return 1", "from dataclasses import sys"),
        "'dataclasses.sys' is the module 'sys'",
    ),
    ("private module attribute", in_decide("return random._os", "import random"), "'random._os' is private"),
    ("re.copyreg", in_decide("return re.copyreg", "import re"), "'re.copyreg' is the module 'copyreg'"),
    ("enum.bltns", in_decide("return enum.bltns", "import enum"), "'enum.bltns' is the module 'builtins'"),
    ("json.codecs", in_decide("return json.codecs", "import json"), "'json.codecs' is the module 'codecs'"),
    (
        "get_type_hints",
        in_decide("return typing.get_type_hints(decide)", "import typing"),
        "'typing.get_type_hints' is not available",
    ),
    ("ForwardRef", in_decide("return 1", "from typing import ForwardRef"), "'typing.ForwardRef'"),
    (
        "submodule stored",
        in_decide("return collections.abc", "import collections.abc"),
        "may only be used as collections.abc.<name>",
    ),
    ("private submodule", in_decide("return 1", "import re._parser"), "'_parser' is private"),
    ("relative import", in_decide("return 1", "from . import helper"), "relative imports are not allowed"),
    *[
        (f"import {name}", in_decide("return 1", f"import {name}"), f"import of '{name}' is not allowed")
        for name in [
            "os",
            "os.path",
            "subprocess",
            "socket",
            "ctypes",
            "importlib",
            "builtins",
            "codecs",
            "pickle",
            "marshal",
            "gc",
            "inspect",
            "types",
            "io",
            "posix",
            "_io",
            "_thread",
            "threading",
            "multiprocessing",
            "signal",
            "resource",
            "mmap",
            "pathlib",
            "shutil",
            "tempfile",
            "code",
            "runpy",
            "zipimport",
            "weakref",
            "copyreg",
            "select",
            "asyncio",
        ]
    ],
    (
        "from os import system",
        in_decide("return 1", "from os import system"),
        "import of 'os' is not allowed",
    ),
]

ENUM_CLASS = "import enum\nclass Color(enum.Enum):\n    RED = 1\n"
IMPORT_TIME = [
    ("decorator call", top("@print\ndef helper():\n    pass"), "this decorator would run code"),
    (
        "decorator argument",
        top("import functools\n@functools.lru_cache(maxsize=print(1))\ndef helper():\n    pass"),
        "this decorator would run code",
    ),
    ("class decorator", top("@print\nclass A:\n    pass"), "this class decorator would run code"),
    (
        "default argument",
        top("def helper(x=print('loaded')):\n    pass"),
        "default arguments are evaluated when the bot is loaded",
    ),
    ("keyword-only default", top("def helper(*, x=len('a')):\n    pass"), "default arguments are evaluated"),
    (
        "method default",
        top("class A:\n    def m(self, x=print(1)):\n        pass"),
        "default arguments are evaluated",
    ),
    (
        "argument annotation",
        top("def helper(x: print('a')):\n    pass"),
        "annotations must be type expressions",
    ),
    (
        "return annotation",
        top("def helper() -> print('a'):\n    pass"),
        "annotations must be type expressions",
    ),
    (
        "string annotation with a call",
        top("def helper(x: \"__import__('os').system('id')\"):\n    pass"),
        "annotations must be type expressions",
    ),
    (
        "string annotation reaching sys",
        top("import sys\ndef helper(x: 'sys.modules'):\n    pass"),
        "'sys.modules' is not available",
    ),
    ("variable annotation", top("X: print('a') = 1"), "annotations must be type expressions"),
    ("class body call", top("class A:\n    x = print('hi')"), "class-body assignments must be constants"),
    ("class body loop", top("class A:\n    for i in range(3):\n        pass"), "class-body statement 'For'"),
    ("class body expression", top("class A:\n    print('hi')"), "class-body statement 'Expr'"),
    (
        "nested class body",
        top("class A:\n    class B:\n        x = len('a')"),
        "class-body assignments must be constants",
    ),
    ("base class call", top("class A(type('B', (), {})):\n    pass"), "base classes must be named classes"),
    (
        "generic base with call",
        top("import typing\nclass A(typing.Generic[print(1)]):\n    pass"),
        "base classes must be named classes",
    ),
    (
        "metaclass",
        top("class M(type):\n    pass\nclass A(metaclass=M):\n    pass"),
        "metaclasses are not allowed",
    ),
    ("class keyword call", top("class A(flag=print(1)):\n    pass"), "class keywords must be constants"),
    (
        "class keywords unpacked",
        top("class A(**{'metaclass': type}):\n    pass"),
        "metaclasses are not allowed",
    ),
    (
        "__init_subclass__",
        top("class A:\n    def __init_subclass__(cls):\n        pass"),
        "defining '__init_subclass__' is not allowed",
    ),
    (
        "__set_name__",
        top("class A:\n    def __set_name__(self, owner, name):\n        pass"),
        "defining '__set_name__'",
    ),
    (
        "__class_getitem__",
        top("class A:\n    def __class_getitem__(cls, item):\n        pass"),
        "defining '__class_getitem__'",
    ),
    (
        "enum __init__",
        top(ENUM_CLASS + "    def __init__(self, value):\n        pass"),
        "an enum may not define '__init__'",
    ),
    (
        "enum __new__",
        top(ENUM_CLASS + "    def __new__(cls, value):\n        pass"),
        "an enum may not define '__new__'",
    ),
    (
        "enum next value",
        top(ENUM_CLASS + "    def _generate_next_value_(name, start, count, last):\n        pass"),
        "'_generate_next_value_'",
    ),
    (
        "enum mixin",
        top("import enum\nclass Mixin:\n    pass\nclass E(Mixin, enum.Enum):\n    A = 1"),
        "an enum may only mix in",
    ),
    (
        "operator on a member",
        top(ENUM_CLASS + "X = Color.RED + 1"),
        "top-level assignments must be constants",
    ),
    (
        "operator on an alias",
        top(ENUM_CLASS + "D = Color.RED\nX = -D"),
        "top-level assignments must be constants",
    ),
    ("hash of a member", top(ENUM_CLASS + "X = {Color.RED: 1}"), "top-level assignments must be constants"),
    ("set of members", top(ENUM_CLASS + "X = {Color.RED}"), "top-level assignments must be constants"),
    (
        "f-string of a member",
        top(ENUM_CLASS + "X = f'{Color.RED}'"),
        "top-level assignments must be constants",
    ),
    (
        "class property",
        top("class A:\n    @classmethod\n    @property\n    def p(cls):\n        return 1"),
        "class property",
    ),
    (
        "setter of a non-property",
        top("class A:\n    x = 1\n    @x.setter\n    def y(self, v):\n        pass"),
        "this decorator would run code",
    ),
    (
        "author's own property",
        top("def property(f):\n    return f\nclass A:\n    @property\n    def x(self):\n        return 1"),
        "this decorator would run code",
    ),
    (
        "author's own dataclass",
        top("def dataclass(c):\n    return c\n@dataclass\nclass A:\n    pass"),
        "this class decorator would run code",
    ),
    (
        "imported decorator rebound",
        top("from functools import lru_cache\nlru_cache = print\n@lru_cache\ndef f():\n    pass"),
        "this decorator would run code",
    ),
    (
        "decorator from elsewhere",
        top("from functools import wraps\n@wraps(print)\ndef f():\n    pass"),
        "this decorator would run code",
    ),
    (
        "module shadowed by a class",
        top(
            "import functools\nclass functools:\n    lru_cache = print\n"
            "@functools.lru_cache\ndef f():\n    pass"
        ),
        "the name 'functools' is the imported module",
    ),
    (
        "module shadowed by a parameter",
        in_decide("def f(sys):\n    return sys.exception()\nreturn f(1)", "import sys"),
        "the name 'sys' is the imported module",
    ),
    (
        "typing hook method",
        top("class A:\n    def __typing_subst__(self, arg):\n        pass\nX = list[A]"),
        "defining '__typing_subst__' is not allowed",
    ),
    (
        "__getattr__",
        top("class A:\n    def __getattr__(self, name):\n        pass"),
        "defining '__getattr__'",
    ),
    ("__reduce__", top("class A:\n    def __reduce__(self):\n        pass"), "defining '__reduce__'"),
    (
        "module __getattr__",
        top("def __getattr__(name):\n    return 1"),
        "defining '__getattr__' is not allowed",
    ),
    (
        "enum operator",
        top(ENUM_CLASS + "    def __or__(self, other):\n        pass"),
        "an enum may not define '__or__'",
    ),
    (
        "enum repr",
        top(ENUM_CLASS + "    def __repr__(self):\n        return ''"),
        "an enum may not define '__repr__'",
    ),
    (
        "enum base under an alias",
        top("from enum import Enum as E\nclass C(E):\n    A = 1\n    def __or__(self, o):\n        return 1"),
        "an enum may not define '__or__'",
    ),
    (
        "enum special method by assignment",
        top("import enum\nclass C(enum.Enum):\n    A = 1\n    __hash__ = None"),
        "an enum may not define '__hash__'",
    ),
    ("lambda default", top("f = lambda x=print(1): x"), "top-level assignments must be constants"),
    ("comprehension", top("X = [i for i in range(3)]"), "top-level assignments must be constants"),
    ("call on the right-hand side", top("X = len([1])"), "top-level assignments must be constants"),
    ("subscript with a call", top("X = dict[print(1), int]"), "top-level assignments must be constants"),
    ("walrus", top("(X := print(1))"), "top-level statement 'Expr'"),
    ("attribute target", top("import math\nmath.tau = 1"), "may only bind names"),
    (
        "else of the main guard",
        top("if __name__ == '__main__':\n    pass\nelse:\n    print('loaded')"),
        "the 'else' of the __main__ guard",
    ),
    (
        "__name__ reassigned",
        top("__name__ = '__main__'\nif __name__ == '__main__':\n    print(1)"),
        "the name '__name__' is not allowed",
    ),
    ("reversed main guard", top("if '__main__' == __name__:\n    print(1)"), "top-level statement 'If'"),
    ("other name guard", top("if __name__ != 'bot':\n    print(1)"), "top-level statement 'If'"),
    ("try", top("try:\n    print(1)\nexcept Exception:\n    pass"), "top-level statement 'Try'"),
    ("with", top("with A():\n    pass"), "top-level statement 'With'"),
    ("augmented assignment", top("X = 1\nX += len('a')"), "top-level statement 'AugAssign'"),
    ("assert", top("assert print(1)"), "top-level statement 'Assert'"),
    ("delete", top("X = 1\ndel X"), "top-level statement 'Delete'"),
]

CODINGAME = [
    ("codingame cookie", "# coding: utf-7\nprint(1)\n", "coding declaration 'utf-7'"),
    ("codingame alias", "import sys as s\nprint(s.modules)\n", "'sys.modules' is not available"),
    ("codingame format field", "print('{0.__class__}'.format(1))\n", "reads an attribute"),
    ("codingame attrgetter", "import operator\nprint(operator.attrgetter('x'))\n", "'operator.attrgetter'"),
    ("codingame sys.modules", "import sys\nprint(sys.modules)\n", "'sys.modules'"),
    ("codingame module in a variable", "import sys\nm = sys\n", "the module 'sys' may only be used"),
]

REFUSED = [(*row, "decide") for row in ENCODING + ATTRIBUTE_BY_NAME + MODULES + IMPORT_TIME] + [
    (*row, "codingame") for row in CODINGAME
]


@pytest.mark.parametrize(("name", "source", "fragment", "contract"), REFUSED, ids=[row[0] for row in REFUSED])
def test_escape_variant_is_refused_with_a_clear_message(
    name: str, source: str | bytes, fragment: str, contract: str
) -> None:
    problems = check_source(source, contract=contract)
    assert any(fragment in p.message for p in problems), (name, [str(p) for p in problems])
    assert all(p.line >= 1 for p in problems)


def test_every_problem_is_listed_each_with_its_own_line() -> None:
    source = (
        "# coding: latin-1\n"
        "import os as s\n"
        "from math import *\n"
        "@print\n"
        "def helper(x=len('a')):\n"
        "    return '{0.x}'.format(x)\n"
        "def decide(observation):\n"
        "    return s.modules\n"
    )
    assert [p.line for p in check_source(source)] == [1]  # the text is refused before it is parsed
    problems = check_source(source.split("\n", 1)[1])
    lines = {p.line: p.message for p in problems}
    assert "import of 'os'" in lines[1]
    assert "star imports" in lines[2]
    assert "decorator" in lines[3]
    assert "default arguments" in lines[4]
    assert "reads an attribute" in lines[5]
    assert "'modules'" in lines[7], lines[7]


def test_the_table_covers_many_variants() -> None:
    assert len(REFUSED) >= 150


ALLOWED = [
    ("utf-8 cookie", "# -*- coding: utf-8 -*-\n" + GOOD, "decide"),
    ("utf8 cookie", "#!/usr/bin/env python3\n# coding: UTF8\n" + GOOD, "decide"),
    ("bytes in UTF-8", ("X = 'caf\u00e9'\n" + GOOD).encode(), "decide"),
    (
        "dataclass, enum, named tuple, property",
        top(
            """
            from __future__ import annotations
            import collections.abc
            import dataclasses
            import enum
            import functools
            import math
            from dataclasses import dataclass, field
            from enum import Enum, auto, unique
            from functools import lru_cache
            from typing import Literal, NamedTuple, Optional

            Point = tuple[float, float]
            Mode = Literal["race hard", "block"]
            TAU = math.pi * 2
            LIMITS = {"speed": 100, "turn": -18}

            class Color(enum.Enum):
                RED = enum.auto()
                BLUE = 2

                def label(self) -> str:
                    return self.name.lower()

            DEFAULT = Color.RED

            class Level(enum.IntEnum):
                LOW = 1

            @unique
            class Side(Enum):
                LEFT = auto()
                RIGHT = auto()

            @lru_cache(maxsize=None)
            def cached(n: int) -> int:
                return n

            class Vector:
                def __init__(self, x: float, y: float) -> None:
                    self.x, self.y = x, y

                def __add__(self, other: "Vector") -> "Vector":
                    return Vector(self.x + other.x, self.y + other.y)

                def __repr__(self) -> str:
                    return f"Vector({self.x}, {self.y})"

            class Pair(NamedTuple):
                x: float
                y: float = 0.0

            @dataclass(frozen=True)
            class Memory:
                \"\"\"What the bot remembers.\"\"\"
                seen: list[Point] = field(default_factory=list)
                mode: Optional[Mode] = None
                last: "Pair | None" = None
                lookup: collections.abc.Mapping[str, int] = dataclasses.field(default_factory=dict)

                @property
                def size(self) -> int:
                    return len(self.seen)

                @size.setter
                def size(self, value: int) -> None:
                    pass

                @staticmethod
                def fresh() -> "Memory":
                    return Memory()

                @functools.cached_property
                def total(self) -> float:
                    return 0.0

            @functools.lru_cache(maxsize=128)
            def angle(dx: float, dy: float = 0.0, *, unit: str = "deg") -> float:
                return math.degrees(math.atan2(dy, dx))

            def describe(observation: dict) -> str:
                match observation:
                    case {"x": x}:
                        return "{} at {:.1f}".format("pod", x) + "{0[x]}".format(observation)
                    case Pair(x=0):
                        return getattr(observation, "name", "") + f"{TAU:.2f}"
                return ""

            if __name__ == "__main__":
                print(describe({}))
            """
        ),
        "decide",
    ),
    (
        "slots, operators, aliases and numpy in a decide bot",
        top(
            """
            import math as m
            from collections import deque as dq
            from dataclasses import dataclass
            from functools import lru_cache as memo

            import numpy as np
            import numpy.linalg as la

            ORIGIN = (0.0, 0.0)
            TAU = m.tau

            class Vec:
                __slots__ = ("x", "y")

                def __init__(self, x: float, y: float) -> None:
                    self.x, self.y = x, y

                def __add__(self, other: "Vec") -> "Vec":
                    return Vec(self.x + other.x, self.y + other.y)

                __radd__ = __add__
                __hash__ = None

                def __mul__(self, k: float) -> "Vec":
                    return Vec(self.x * k, self.y * k)

                def __floordiv__(self, k: float) -> "Vec":
                    return Vec(self.x // k, self.y // k)

                def __lt__(self, other: "Vec") -> bool:
                    return m.hypot(self.x, self.y) < m.hypot(other.x, other.y)

            @dataclass(slots=True, order=True)
            class Pod:
                x: float
                y: float

            @memo(maxsize=None)
            def norm(x: float, y: float) -> float:
                return float(la.norm(np.array([x, y])))

            def history() -> dq:
                return dq(maxlen=3)
            """
        ),
        "decide",
    ),
    (
        "codingame script using sys",
        "import sys\nfrom sys import stdin\nfor line in stdin:\n"
        "    print(line.strip(), file=sys.stderr)\n    sys.stdout.flush()\n",
        "codingame",
    ),
]


@pytest.mark.parametrize(("name", "source", "contract"), ALLOWED, ids=[row[0] for row in ALLOWED])
def test_legitimate_bots_pass(name: str, source: str | bytes, contract: str) -> None:
    assert check_source(source, contract=contract) == [], name


def _hosted_sources() -> list[tuple[str, str, str]]:
    """Every hosted bot the demo and benchmarks upload, and the example bots written as modules."""
    from scripts.demo_fleet import CODINGAME_SCRIPT

    sources = [("demo codingame script", CODINGAME_SCRIPT, "codingame")]
    for game in ("podracing", "battle"):
        base = (ROOT / "shared" / "games" / game / "bots.py").read_text(encoding="utf-8")
        sources.append(
            (f"{game} built-in bots", f"{base}\n\ndef decide(observation):\n    return 1\n", "decide")
        )
    sources.append(
        (
            "follower example",
            (ROOT / "examples/bots/podracing_follower_bot.py").read_text(encoding="utf-8"),
            "decide",
        )
    )
    return sources


@pytest.mark.parametrize(("name", "source", "contract"), _hosted_sources(), ids=lambda v: str(v)[:30])
def test_the_demo_and_example_hosted_bots_pass(name: str, source: str, contract: str) -> None:
    assert check_source(source, contract=contract) == [], name


def test_the_cookie_is_reported_on_its_own_line() -> None:
    assert [p.line for p in check_source("# coding: utf-7\n" + GOOD)] == [1]
    assert [p.line for p in check_source("#!/bin/python\n# coding: utf-7\n" + GOOD)] == [2]
    assert [p.line for p in check_source("# coding: utf-7")] == [1]


def test_a_module_used_before_its_import_is_still_known_as_a_module() -> None:
    source = "def decide(observation):\n    m = sys\n    return sys.exception()\nimport sys\n"
    messages = [p.message for p in check_source(source)]
    assert any("may only be used as sys.<name>" in m for m in messages), messages
    assert any("'sys.exception' is not available" in m for m in messages), messages
