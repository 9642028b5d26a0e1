"""Training curves of an `arena train` run as a PNG: win rate against the built-in runner and
blocker, against environment steps and against wall time.

Run: `.venv/bin/python -m scripts.plot_training RUN/metrics.jsonl [MORE.jsonl ...] --out curves.png
[--evaluations EVALS.json|EVALS.csv] [--window 20] [--title TEXT]`.

`arena train --out DIR` appends one JSON line per iteration to DIR/metrics.jsonl (the trainer's
metrics plus `iteration_seconds`, the wall time of that iteration, and `device`); a resumed chunk
writes to its own --out folder, so a run is its files in order. Where chunks overlap (a chunk
resumed from a checkpoint older than the last logged iteration), the later file's iterations
replace the earlier ones. The left panel's x axis is `global_step`, the right one's the cumulative
sum of `iteration_seconds` in minutes. Each win rate is drawn raw (faint) and as a moving average
over the last `--window` iterations that raced that opponent (iterations with a null win rate, as
in the solo stage, are gaps); a vertical line marks each stage change, labelled with the stage the
run entered.

`--evaluations` adds reference-engine evaluations as markers with 95% error bars, placed on the
wall-time panel at the run's wall time when it reached that step. The file is JSON (a list of
{"steps" or "global_step", "opponent", "win_rate", "interval": [low, high] or "low" and "high"},
or a training run's API detail, whose `evaluations` are used) or CSV with the columns steps,
opponent, win_rate, low, high. Opponents may be written `runner` or `builtin:runner`.

Matplotlib draws with its Agg canvas: no display is needed.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

DEFAULT_WINDOW = 20
OPPONENT_COLORS = {"runner": "#2e7d32", "blocker": "#c2410c", "search": "#7b1fa2"}
"""The run page's colours (services/gateway/web/pages/training.py); search as the page's purple."""
OTHER_COLOR = "#1f5fbf"
WIN_RATES = (("runner", "win_rate_runner"), ("blocker", "win_rate_blocker"), ("search", "win_rate_search"))
"""Training win rates per opponent (search only where the run raced it: `search_opponent`)."""


class PlotError(ValueError):
    """An input file cannot be read as the script expects (the message says which and why)."""


@dataclass(frozen=True)
class Curves:
    """A run's iterations, in order: one value per iteration in every array."""

    iteration: np.ndarray
    steps: np.ndarray
    minutes: np.ndarray
    """Wall time at the end of each iteration, summed over the chunks."""
    stages: list[str]
    win_rates: dict[str, np.ndarray]
    """Per opponent; NaN where the iteration raced none."""


@dataclass(frozen=True)
class EvaluationPoint:
    steps: int
    opponent: str
    win_rate: float
    low: float
    high: float


def _number(value: Any) -> float:
    """A metric as a float; NaN for null, NaN or anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def read_records(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The iterations of the files in order; a later file's iteration replaces an earlier one's,
    and everything after it from the earlier file (the later chunk retrained from there)."""
    records: list[dict[str, Any]] = []
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise PlotError(f"cannot read {path}: {exc.strerror or exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PlotError(f"{path}:{number}: not JSON: {exc.msg}") from None
            if not isinstance(record, dict) or not isinstance(record.get("iteration"), int):
                raise PlotError(f"{path}:{number}: not an iteration's metrics (no whole `iteration`)")
            while records and records[-1]["iteration"] >= record["iteration"]:
                records.pop()
            records.append(record)
    if not records:
        raise PlotError("no iterations in " + ", ".join(str(p) for p in paths))
    return records


def curves(records: list[dict[str, Any]]) -> Curves:
    seconds = np.array([_number(r.get("iteration_seconds")) for r in records])
    return Curves(
        iteration=np.array([r["iteration"] for r in records]),
        steps=np.array([_number(r.get("global_step")) for r in records]),
        minutes=np.cumsum(np.nan_to_num(seconds, nan=0.0)) / 60.0,
        stages=[str(r.get("stage") or "") for r in records],
        win_rates={name: np.array([_number(r.get(key)) for r in records]) for name, key in WIN_RATES},
    )


def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """At every point with a value, the mean of the last `window` values (NaN skipped); NaN where
    the value itself is missing, so gaps stay gaps."""
    present = ~np.isnan(values)
    sums = np.concatenate(([0.0], np.cumsum(values[present])))
    seen = np.cumsum(present)  # values up to and including each point
    first = np.maximum(seen - window, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (sums[seen] - sums[first]) / (seen - first)
    return np.where(present, means, np.nan)


def stage_changes(stages: list[str]) -> list[tuple[int, str]]:
    """(index, stage) where the run entered a stage: the first iteration and every change."""
    return [(i, stage) for i, stage in enumerate(stages) if stage and (i == 0 or stage != stages[i - 1])]


def _opponent_name(value: Any) -> str:
    return str(value).removeprefix("builtin:")


def _point(data: dict[str, Any], where: str) -> EvaluationPoint:
    steps: Any = data.get("steps", data.get("global_step"))
    interval = data.get("interval")
    low: Any = interval[0] if isinstance(interval, list | tuple) and len(interval) == 2 else None
    high: Any = interval[1] if isinstance(interval, list | tuple) and len(interval) == 2 else None
    low, high = data.get("low", low), data.get("high", high)
    try:
        return EvaluationPoint(
            int(steps), _opponent_name(data["opponent"]), float(data["win_rate"]), float(low), float(high)
        )
    except (KeyError, TypeError, ValueError):
        raise PlotError(
            f"{where}: an evaluation needs steps, opponent, win_rate and an interval (low, high)"
        ) from None


def read_evaluations(path: Path) -> list[EvaluationPoint]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlotError(f"cannot read {path}: {exc.strerror or exc}") from None
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        return [_point(dict(row), f"{path}:{n}") for n, row in enumerate(rows, 2)]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlotError(f"{path}: not JSON: {exc.msg}") from None
    if isinstance(data, dict) and isinstance(data.get("evaluations"), list):  # a run's API detail
        data = [
            {**result, "steps": evaluation.get("global_step")}
            for evaluation in data["evaluations"]
            for result in evaluation.get("results", [])
        ]
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise PlotError(f"{path}: expected a list of evaluations or a training run's detail")
    return [_point(item, f"{path}[{n}]") for n, item in enumerate(data)]


def _color(opponent: str) -> str:
    return OPPONENT_COLORS.get(opponent, OTHER_COLOR)


def _starts(x: np.ndarray) -> np.ndarray:
    """Where each iteration began on this axis: where the previous one ended (the first one's
    start is extrapolated from the second's length, never below 0)."""
    first = x[0] - (x[1] - x[0]) if len(x) > 1 else x[0]
    return np.concatenate(([max(0.0, float(first))], x[:-1]))


def _panel(axes: Axes, x: np.ndarray, run: Curves, window: int, xlabel: str) -> None:
    for name, values in run.win_rates.items():
        present = ~np.isnan(values)
        if not present.any():
            continue
        # A missing value (an iteration that raced no such opponent) is skipped, not a break.
        axes.plot(x[present], values[present], color=_color(name), alpha=0.2, linewidth=0.8)
        smooth = moving_average(values, window)
        axes.plot(x[present], smooth[present], color=_color(name), linewidth=1.8, label=f"vs {name}")
    starts = _starts(x)
    for index, stage in stage_changes(run.stages):
        axes.axvline(starts[index], color="#888", linestyle="--", linewidth=0.8)
        axes.annotate(
            stage,
            (starts[index], 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -3),
            textcoords="offset points",
            rotation=90,
            va="top",
            fontsize=8,
            color="#555",
        )
    axes.set_xlabel(xlabel)
    axes.set_ylim(0.0, 1.0)
    axes.grid(True, alpha=0.3)


def _evaluations(axes: Axes, points: list[EvaluationPoint], x_of: Any) -> None:
    by_opponent: dict[str, list[EvaluationPoint]] = {}
    for point in points:
        by_opponent.setdefault(point.opponent, []).append(point)
    for opponent, group in by_opponent.items():
        x = np.array([x_of(p.steps) for p in group], dtype=float)
        y = np.array([p.win_rate for p in group])
        below = np.clip(y - np.array([p.low for p in group]), 0.0, None)
        above = np.clip(np.array([p.high for p in group]) - y, 0.0, None)
        axes.errorbar(
            x,
            y,
            yerr=[below, above],
            fmt="o",
            markersize=5,
            capsize=3,
            color=_color(opponent),
            markeredgecolor="black",
            markeredgewidth=0.6,
            label=f"evaluation vs {opponent}",
        )


def plot(
    run: Curves,
    out: Path,
    *,
    evaluations: list[EvaluationPoint] | None = None,
    window: int = DEFAULT_WINDOW,
    title: str | None = None,
) -> None:
    """Write the two panels to `out` (PNG)."""
    figure = Figure(figsize=(13, 5.5), layout="constrained")
    by_steps, by_time = figure.subplots(1, 2, sharey=True)
    _panel(by_steps, run.steps, run, window, "environment steps")
    _panel(by_time, run.minutes, run, window, "wall time (minutes, summed over chunks)")
    by_steps.set_ylabel(f"win rate (moving average over {window} iterations; raw faint)")
    if evaluations:
        known = ~np.isnan(run.steps)
        _evaluations(by_steps, evaluations, float)
        _evaluations(
            by_time, evaluations, lambda steps: float(np.interp(steps, run.steps[known], run.minutes[known]))
        )
    by_steps.xaxis.set_major_formatter(EngFormatter())
    handles, labels = by_steps.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=max(1, len(labels)), fontsize=9)
    figure.suptitle(
        title or f"Training: {len(run.iteration):,} iterations, {int(np.nanmax(run.steps)):,} steps"
    )
    try:
        figure.savefig(out, format="png", dpi=110)
    except OSError as exc:
        raise PlotError(f"cannot write {out}: {exc.strerror or exc}") from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("metrics", nargs="+", type=Path, help="metrics.jsonl files of one run, in order")
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    parser.add_argument("--evaluations", type=Path, help="reference-engine evaluations (JSON or CSV)")
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW, help="moving-average window")
    parser.add_argument("--title", help="the figure's title")
    options = parser.parse_args(argv)
    if options.window < 1:
        parser.error("--window must be at least 1")
    try:
        run = curves(read_records(options.metrics))
        points = read_evaluations(options.evaluations) if options.evaluations else None
        plot(run, options.out, evaluations=points, window=options.window, title=options.title)
    except PlotError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {options.out}: {len(run.iteration):,} iterations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
