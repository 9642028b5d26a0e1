"""A rating history drawn as an inline SVG line chart, computed on the server.

The page needs no script to show it, and the SVG uses presentation attributes only (no inline
style), which the pages' Content-Security-Policy allows. Coordinates are in a fixed viewBox; CSS
scales the picture to the width of the screen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from shared.ratings import ordinal

WIDTH = 720
HEIGHT = 260
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 30
"""Margins inside the viewBox: room for the y-axis labels on the left and the x-axis note below."""
MARKED_POINTS = 80
"""Up to this many points each get a dot with a tooltip; denser charts show the lines only."""


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """The bot's rating after one rated match (or, first, before its oldest charted match)."""

    mu: float
    sigma: float
    finished_at: datetime | None
    match_id: str | None

    @property
    def ordinal(self) -> float:
        return ordinal(self.mu, self.sigma)


@dataclass(frozen=True, slots=True)
class Dot:
    x: float
    y: float
    label: str


@dataclass(frozen=True, slots=True)
class Tick:
    y: float
    label: str


@dataclass(frozen=True, slots=True)
class RatingChart:
    width: int
    height: int
    left: int
    right_edge: int
    top: int
    bottom_edge: int
    mu_line: str
    """`points` attribute of the mu polyline."""
    ordinal_line: str
    ticks: list[Tick]
    mu_dots: list[Dot]
    ordinal_dots: list[Dot]
    matches: int
    """Rated matches charted (points minus the starting one)."""
    description: str
    """A text summary for screen readers (the SVG's <desc>)."""


def _nice_step(span: float, count: int) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about `count` ticks over `span`."""
    raw = span / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0):
        if raw <= factor * power:
            return factor * power
    return 10.0 * power


def _label(value: float) -> str:
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:.1f}"


def rating_chart(points: list[RatingPoint]) -> RatingChart | None:
    """The chart of mu and the ordinal (mu - 3 sigma) over `points`, oldest first; None for fewer
    than two points (nothing to draw a line between)."""
    if len(points) < 2:
        return None
    values = [p.mu for p in points] + [p.ordinal for p in points]
    low, high = min(values), max(values)
    if high - low < 1.0:
        low, high = low - 0.5, high + 0.5
    step = _nice_step(high - low, 4)
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    right_edge, bottom_edge = WIDTH - RIGHT, HEIGHT - BOTTOM
    plot_w, plot_h = right_edge - LEFT, bottom_edge - TOP

    def x_of(index: int) -> float:
        return round(LEFT + plot_w * index / (len(points) - 1), 2)

    def y_of(value: float) -> float:
        return round(bottom_edge - plot_h * (value - low) / (high - low), 2)

    def line(values: list[float]) -> str:
        return " ".join(f"{x_of(i)},{y_of(v)}" for i, v in enumerate(values))

    def dots(values: list[float], name: str) -> list[Dot]:
        if len(points) > MARKED_POINTS:
            return []
        return [
            Dot(x_of(i), y_of(v), f"{'start' if i == 0 else f'match {i}'}: {name} {v:.2f}")
            for i, v in enumerate(values)
        ]

    mus, ordinals = [p.mu for p in points], [p.ordinal for p in points]
    tick_count = round((high - low) / step)
    ticks = [Tick(y_of(low + k * step), _label(low + k * step)) for k in range(tick_count + 1)]
    first, last = points[0], points[-1]
    description = (
        f"{len(points) - 1} rated matches: mu from {first.mu:.2f} to {last.mu:.2f}, "
        f"mu - 3 sigma from {first.ordinal:.2f} to {last.ordinal:.2f}"
    )
    return RatingChart(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right_edge=right_edge,
        top=TOP,
        bottom_edge=bottom_edge,
        mu_line=line(mus),
        ordinal_line=line(ordinals),
        ticks=ticks,
        mu_dots=dots(mus, "mu"),
        ordinal_dots=dots(ordinals, "mu - 3 sigma"),
        matches=len(points) - 1,
        description=description,
    )
