"""Direct chipmunk calls for the battle's per-tick physics work, where pymunk's Python wrappers cost
more than the work itself (stepping, body position reads and writes, wall-only segment queries).

This is the only module that touches pymunk internals (its cffi module `pymunk._chipmunk`,
`Space._space`, `Body._body`). They are used only with the pymunk release this was written for
(`WRITTEN_FOR`); with any other version, or if those names are missing, every function here returns
the public-API equivalent, which gives the same results bit for bit (tests/games/battle/
test_fast_paths.py). End to end they buy about 14% more 3v3 matches per minute of the built-in
bots (docs/games/battle.md, Performance; `python -m scripts.bench_internals --only battle`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

import pymunk

WRITTEN_FOR = "7.3."
"""pymunk version prefix whose internals this module was written against."""

Point = tuple[float, float]


def chipmunk_for(version: str) -> tuple[Any, Any] | None:
    """pymunk's cffi `(ffi, lib)` when `version` is the one this was written for and its internals
    are where expected; None means the public API."""
    if not version.startswith(WRITTEN_FOR):
        return None
    try:
        from pymunk._chipmunk import ffi, lib  # type: ignore[import-not-found]
    except ImportError:
        return None
    needed = ("cpSpaceStep", "cpBodyGetPosition", "cpBodySetPosition", "cpSpaceSegmentQueryFirst")
    if not all(hasattr(lib, name) for name in needed):
        return None
    if not hasattr(pymunk.Space(), "_space") or not hasattr(pymunk.Body(), "_body"):
        return None
    return ffi, lib


_cp = chipmunk_for(pymunk.version)


def active() -> bool:
    """Whether the direct chipmunk calls are in use."""
    return _cp is not None


@contextlib.contextmanager
def public_api_only() -> Iterator[None]:
    """Worlds created inside use pymunk's public API only (for tests and benchmarks)."""
    global _cp
    saved, _cp = _cp, None
    try:
        yield
    finally:
        _cp = saved


def unchecked_step(space: pymunk.Space) -> Callable[[float], None]:
    """A step for ticks where nothing was added to or removed from `space` since its last
    `Space.step` and no collision callback changes it: pymunk's Python bookkeeping around the step
    then has nothing to do, so chipmunk's step is called directly. `space.step` on the public path."""
    if _cp is None:
        return space.step
    return functools.partial(_cp[1].cpSpaceStep, space._space)


def position_reader() -> Callable[[pymunk.Body], Point]:
    """`read(body) -> (x, y)`: a body's position as plain floats, without building a Vec2d."""
    if _cp is None:

        def read_public(body: pymunk.Body) -> Point:
            x, y = body.position
            return x, y

        return read_public
    get = _cp[1].cpBodyGetPosition

    def read(body: pymunk.Body) -> Point:
        v = get(body._body)
        return v.x, v.y

    return read


def position_writer() -> Callable[[pymunk.Body, Point], None]:
    """`write(body, (x, y))`: set a body's position without pymunk's property machinery."""
    if _cp is None:

        def write_public(body: pymunk.Body, xy: Point) -> None:
            body.position = xy

        return write_public
    set_position = _cp[1].cpBodySetPosition

    def write(body: pymunk.Body, xy: Point) -> None:
        set_position(body._body, xy)

    return write


def segment_blocked(space: pymunk.Space, shape_filter: pymunk.ShapeFilter) -> Callable[[Point, Point], bool]:
    """`blocked(a, b)`: whether a shape that `shape_filter` lets through touches the segment a-b
    (a zero-radius `segment_query_first` that only says whether it hit)."""
    if _cp is None:
        query = space.segment_query_first
        return lambda a, b: query(a, b, 0.0, shape_filter) is not None
    ffi, lib = _cp
    first, cp_space, null = lib.cpSpaceSegmentQueryFirst, space._space, ffi.NULL
    return lambda a, b: bool(first(cp_space, a, b, 0.0, shape_filter, null))
