"""A surrogate of fitness over a program's named constants, for screening the built-in operator's
steps before any match is played.

Each evaluated program is a noisy measurement (nine to forty matches) of how good its constants
are; one program says little, a hundred near each other say which way each constant should move.
The surrogate is a weighted ridge regression of fitness on the logarithms of the named constants
relative to the parent's (a slope and a curvature per constant, weighted by matches played), and the
built-in child draws several steps and keeps the one it predicts best. A model child gets the same
table in its prompt and can read it as it likes.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Scored",
    "Surrogate",
    "TableRow",
    "best_predicted",
    "named_constants",
    "parse_table",
    "render_table",
]

RIDGE = 0.02
"""The ridge penalty as a fraction of the total weight: enough to keep a constant that barely
varied from getting a wild slope, small against a constant the data really moves."""
ROWS_PER_TERM = 3
"""Rows needed per fitted term (slopes first, curvatures when there are rows enough for both)."""
MIN_ROWS = 8
SCREENED_STEPS = 4
"""Steps the built-in child draws when its prompt has a table; it keeps the best predicted."""
SCREEN_OPTIMISM = 1.0
"""Standard deviations of the prediction the built-in child adds when it screens its steps: a
direction the table has not explored is worth a try (docs/evolver.md, "Screening")."""


@dataclass(frozen=True, slots=True)
class Scored:
    """One evaluated program as the surrogate sees it."""

    constants: Mapping[str, float]
    fitness: float
    matches: int


def named_constants(source: str) -> dict[str, float]:
    """The program's top-level `NAME = number` assignments (a sign allowed), in order; {} when it
    does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, float] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        value = _number(node.value)
        if value is not None:
            out[targets[0].id] = value
    return out


def _number(node: ast.expr) -> float | None:
    sign = 1.0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
        node = node.operand
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return None
    if not isinstance(node.value, int | float) or not math.isfinite(node.value):
        return None
    return sign * float(node.value)


@dataclass(frozen=True, slots=True)
class Surrogate:
    """fitness ~ intercept + sum(slope * d + curvature * d**2), d = ln(value / the centre's value)."""

    centre: Mapping[str, float]
    names: tuple[str, ...]
    intercept: float
    slopes: tuple[float, ...]
    curvatures: tuple[float, ...]
    terms: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    """The indices of the names with a fitted slope and with a fitted curvature."""
    covariance: np.ndarray | None = field(default=None, compare=False)
    """The coefficients' posterior covariance (intercept, slopes, curvatures), when fitted with
    optimism."""

    @classmethod
    def fit(
        cls, centre: Mapping[str, float], rows: Sequence[Scored], *, optimism: float = 0.0
    ) -> Surrogate | None:
        """The regression around `centre` (a program's constants), or None when the rows cannot
        support even the slopes. A row whose constants differ in name or sign from the centre's
        is left out: the surrogate describes this program's neighbourhood only.

        With `optimism` > 0 the constants the rows never moved get slopes too (zero, held there by
        the ridge alone), so a step along one of them carries the full prior uncertainty, and
        `upper` can favour it: the table says nothing about a direction no program has tried."""
        names = [name for name, value in centre.items() if value != 0]
        points: list[tuple[list[float], float, float]] = []
        for row in rows:
            offsets = _offsets(centre, names, row.constants)
            if offsets is not None and row.matches > 0 and math.isfinite(row.fitness):
                points.append((offsets, row.fitness, float(row.matches)))
        moved = [i for i, _ in enumerate(names) if any(abs(p[0][i]) > 1e-9 for p in points)]
        if len(points) < max(MIN_ROWS, ROWS_PER_TERM * len(moved)) or not moved:
            return None
        quadratic = len(points) >= ROWS_PER_TERM * 2 * len(moved)
        linear = list(range(len(names))) if optimism > 0 else moved
        squared = moved if quadratic else []
        features = np.array(
            [[1.0] + [p[0][i] for i in linear] + [p[0][i] ** 2 for i in squared] for p in points]
        )
        target = np.array([p[1] for p in points])
        weight = np.array([p[2] for p in points])
        penalty = RIDGE * float(weight.sum()) * np.eye(features.shape[1])
        penalty[0, 0] = 0.0  # the intercept is not shrunk
        weighted = features * weight[:, None]
        try:
            precision = weighted.T @ features + penalty
            beta = np.linalg.solve(precision, weighted.T @ target)
            covariance = np.linalg.inv(precision) if optimism > 0 else None
        except np.linalg.LinAlgError:
            return None
        slopes = [0.0] * len(names)
        curvatures = [0.0] * len(names)
        for k, i in enumerate(linear):
            slopes[i] = float(beta[1 + k])
        for k, i in enumerate(squared):
            curvatures[i] = float(beta[1 + len(linear) + k])
        if covariance is not None:
            residual = target - features @ beta
            dof = max(1.0, len(points) - features.shape[1])
            noise = float((weight * residual**2).sum()) / dof  # per match: fitness ~ noise / matches
            covariance = noise * covariance
        return cls(
            dict(centre),
            tuple(names),
            float(beta[0]),
            tuple(slopes),
            tuple(curvatures),
            (tuple(linear), tuple(squared)),
            covariance,
        )

    def predict(self, constants: Mapping[str, float]) -> float | None:
        """The predicted fitness of a program with these constants (None outside the model's
        reach: a named constant missing or of the other sign)."""
        return self.upper(constants, 0.0)

    def upper(self, constants: Mapping[str, float], optimism: float) -> float | None:
        """The prediction plus `optimism` standard deviations of it; the prediction alone when
        the model was fitted without optimism (it has no covariance then)."""
        offsets = _offsets(self.centre, list(self.names), constants)
        if offsets is None:
            return None
        mean = self.intercept + sum(
            s * d + c * d * d for s, c, d in zip(self.slopes, self.curvatures, offsets, strict=True)
        )
        if self.covariance is None or optimism == 0:
            return mean
        linear, squared = self.terms
        x = np.array([1.0] + [offsets[i] for i in linear] + [offsets[i] ** 2 for i in squared])
        return mean + optimism * math.sqrt(max(0.0, float(x @ self.covariance @ x)))


def _offsets(
    centre: Mapping[str, float], names: Sequence[str], constants: Mapping[str, float]
) -> list[float] | None:
    out: list[float] = []
    for name in names:
        value = constants.get(name)
        base = centre[name]
        if value is None or value == 0 or (value > 0) != (base > 0):
            return None
        out.append(math.log(value / base))
    return out


def best_predicted(
    parent_source: str, candidates: Sequence[str], rows: Sequence[Scored], *, optimism: float = 0.0
) -> int:
    """The index of the candidate program the surrogate fitted around the parent predicts best
    (the first on a tie, and when no surrogate can be fitted); with `optimism`, the best upper
    bound (prediction + optimism standard deviations)."""
    if len(candidates) < 2:
        return 0
    model = Surrogate.fit(named_constants(parent_source), rows, optimism=optimism)
    if model is None:
        return 0
    predictions = [model.upper(named_constants(source), optimism) for source in candidates]
    scores = [model.intercept if value is None else value for value in predictions]
    return max(range(len(candidates)), key=lambda index: (scores[index], -index))


# ---------------------------------------------------------------- the table in a child's prompt
MAX_TABLE_CHARS = 24_000
"""A longer table is cut from its oldest rows."""
_ROW = re.compile(r"^(p\d+) (-?\d+(?:\.\d+)?) \((\d+) matches?\):((?: \S+)*)\s*$")


@dataclass(frozen=True, slots=True)
class TableRow:
    name: str
    fitness: float
    matches: int
    constants: Mapping[str, float]


def render_table(names: Sequence[str], rows: Sequence[TableRow]) -> str:
    """The rows as text, oldest first: a line naming the constants, then one line per program
    (`p12 0.612 (18 matches): 10 5 2.5 ...`, `-` for a constant the program lacks)."""
    lines = [f"constants: {' '.join(names)}"]
    body: list[str] = []
    for row in rows:
        values = " ".join(_value_text(row.constants.get(name)) for name in names)
        body.append(f"{row.name} {row.fitness:.3f} ({row.matches} matches): {values}".rstrip())
    while body and sum(len(line) + 1 for line in [*lines, *body]) > MAX_TABLE_CHARS:
        body.pop(0)
    return "\n".join([*lines, *body])


def parse_table(text: str) -> list[Scored]:
    """The rows of a table `render_table` wrote (lines that do not parse are skipped)."""
    names: list[str] = []
    out: list[Scored] = []
    for line in text.splitlines():
        if line.startswith("constants:"):
            names = line.split(":", 1)[1].split()
            continue
        match = _ROW.match(line.strip())
        if match is None or not names:
            continue
        values = match.group(4).split()
        if len(values) != len(names):
            continue
        constants: dict[str, float] = {}
        for name, value in zip(names, values, strict=True):
            if value == "-":
                continue
            try:
                number = float(value)
            except ValueError:
                break
            if math.isfinite(number):
                constants[name] = number
        else:
            out.append(Scored(constants, float(match.group(2)), int(match.group(3))))
    return out


def _value_text(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.6g}"
