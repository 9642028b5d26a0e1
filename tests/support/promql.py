"""Just enough PromQL to find the metric names an expression reads, and enough of the Prometheus text
format to know which names a scrape exports (tests/ops/test_dashboards.py).

A name in an expression is a metric unless it is a function, an aggregation or a keyword, a label
name (inside `{...}`, or in the list after by / without / on / ignoring / group_left /
group_right), inside a range or subquery (`[...]`), a string, a number or duration, or a Grafana
variable (`$__rate_interval`). A name followed by `(` must be a PromQL function: anything else is
an error, so a typo in a function cannot pass as a metric.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

FUNCTIONS = frozenset(
    {
        "abs",
        "absent",
        "absent_over_time",
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atan",
        "atanh",
        "avg_over_time",
        "ceil",
        "changes",
        "clamp",
        "clamp_max",
        "clamp_min",
        "cos",
        "cosh",
        "count_over_time",
        "day_of_month",
        "day_of_week",
        "day_of_year",
        "days_in_month",
        "deg",
        "delta",
        "deriv",
        "double_exponential_smoothing",
        "exp",
        "floor",
        "histogram_avg",
        "histogram_count",
        "histogram_fraction",
        "histogram_quantile",
        "histogram_stddev",
        "histogram_stdvar",
        "histogram_sum",
        "holt_winters",
        "hour",
        "idelta",
        "increase",
        "info",
        "irate",
        "label_join",
        "label_replace",
        "last_over_time",
        "ln",
        "log10",
        "log2",
        "mad_over_time",
        "max_over_time",
        "min_over_time",
        "minute",
        "month",
        "pi",
        "predict_linear",
        "present_over_time",
        "quantile_over_time",
        "rad",
        "rate",
        "resets",
        "round",
        "scalar",
        "sgn",
        "sin",
        "sinh",
        "sort",
        "sort_by_label",
        "sort_by_label_desc",
        "sort_desc",
        "sqrt",
        "stddev_over_time",
        "stdvar_over_time",
        "sum_over_time",
        "tan",
        "tanh",
        "time",
        "timestamp",
        "vector",
        "year",
    }
)
AGGREGATIONS = frozenset(
    {
        "avg",
        "bottomk",
        "count",
        "count_values",
        "group",
        "limit_ratio",
        "limitk",
        "max",
        "min",
        "quantile",
        "stddev",
        "stdvar",
        "sum",
        "topk",
    }
)
KEYWORDS = frozenset(
    {
        "and",
        "or",
        "unless",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "offset",
        "bool",
        "atan2",
        "inf",
        "nan",
    }
)
LABEL_LISTS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
START_END = frozenset({"start", "end"})
"""`@ start()` and `@ end()`."""

_TOKEN = re.compile(
    r"""
      (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
    | (?P<variable>\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)
    | (?P<number>(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?:[a-zA-Z]+\d*)*)
    | (?P<name>[A-Za-z_:][A-Za-z0-9_:]*)
    | (?P<open>[({\[])
    | (?P<close>[)}\]])
    | (?P<space>\s+)
    | (?P<other>.)
    """,
    re.VERBOSE,
)
_CLOSING = {"(": ")", "{": "}", "[": "]"}


class PromQLError(ValueError):
    pass


def _tokens(expr: str) -> list[tuple[str, str]]:
    found = []
    for match in _TOKEN.finditer(expr):
        kind = match.lastgroup
        assert kind is not None
        if kind != "space":
            found.append((kind, match.group()))
    return found


def metric_names(expr: str) -> set[str]:
    """The metric (sample) names `expr` reads, e.g. `arena_http_requests_total`."""
    tokens = _tokens(expr)
    names: set[str] = set()
    stack: list[str] = []
    label_list_depth: int | None = None
    """Depth of the `(` that opened a label list (by (...), on (...)), while inside one."""
    for index, (kind, text) in enumerate(tokens):
        if kind == "open":
            if label_list_depth is None and text == "(" and index > 0 and tokens[index - 1][1] in LABEL_LISTS:
                label_list_depth = len(stack)
            stack.append(text)
            continue
        if kind == "close":
            if not stack or _CLOSING[stack.pop()] != text:
                raise PromQLError(f"unbalanced {text!r} in {expr!r}")
            if label_list_depth is not None and len(stack) == label_list_depth:
                label_list_depth = None
            continue
        if kind != "name" or label_list_depth is not None or (stack and stack[-1] in "{["):
            continue
        following = tokens[index + 1][1] if index + 1 < len(tokens) else ""
        if text in AGGREGATIONS or text in KEYWORDS:
            continue
        if text in FUNCTIONS or (text in START_END and index > 0 and tokens[index - 1][1] == "@"):
            if following != "(":
                raise PromQLError(f"function {text} without arguments in {expr!r}")
            continue
        if following == "(":
            raise PromQLError(f"{text}(...) is not a PromQL function (in {expr!r})")
        names.add(text)
    if stack:
        raise PromQLError(f"unclosed {stack[-1]!r} in {expr!r}")
    return names


SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "gaugehistogram": ("_bucket", "_gcount", "_gsum"),
    "summary": ("", "_count", "_sum", "_created"),
    "info": ("_info",),
    "stateset": ("",),
    "gauge": ("",),
    "unknown": ("",),
}


def exported_names(exposition: str) -> dict[str, set[str]]:
    """Every sample name a scrape declares, by family name: what its `# TYPE` lines promise (a
    counter `x` gives `x_total`, a histogram `x_bucket`, `x_count` and `x_sum`), whether or not a
    series of it has a sample yet, plus the names of the samples present."""
    families: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(exposition):
        names = {family.name + suffix for suffix in SUFFIXES.get(family.type, ("",))}
        names.update(sample.name for sample in family.samples)
        families.setdefault(family.name, set()).update(names)
    return families


def sampled_names(exposition: str) -> set[str]:
    """The sample names that have at least one series in the scrape."""
    return {sample.name for family in text_string_to_metric_families(exposition) for sample in family.samples}


def walk_panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every panel of a dashboard (JSON), rows' nested panels included."""
    for panel in panels:
        yield panel
        nested = panel.get("panels")
        if isinstance(nested, list):
            yield from walk_panels(nested)
