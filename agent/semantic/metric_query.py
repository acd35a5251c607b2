"""The metric query the model fills in, and its check against the semantic layer.

A metric query names metrics the team defined, what to group them by (a dimension, an entity or
`metric_time`, a time one at a grain), filters on dimensions (structured: a name, an operator and
literal values, never SQL text), an order and a limit. `check` says, for each name the layer does
not know, which names it does know that are close ("did you mean"), as the gate does for columns;
a filter value on a column with a documented value list (a dbt `accepted_values` test) is checked
against it the same way. Only a query with no problems is compiled (`MetricCompiler`).
"""

from __future__ import annotations

import datetime
import difflib
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from agent.catalog.documentation import Documentation
from agent.catalog.grounding import closest
from agent.semantic.semantic_manifest import GRAINS, METRIC_TIME, Dimension, SemanticLayer

Grain = Literal["day", "week", "month", "quarter", "year"]
Operator = Literal["=", "!=", ">", ">=", "<", "<=", "in", "not in"]
Value = str | int | float

#: Text a filter value may not hold: MetricFlow renders filters as Jinja templates.
_TEMPLATE = ("{{", "}}", "{%", "%}", "{#", "#}")


class MetricQueryError(ValueError):
    """The query cannot be compiled; `problems` says why, one sentence each (for the repair)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(" ".join(problems))
        self.problems = problems


class GroupBy(BaseModel):
    name: str = Field(
        description="A dimension (`customer__region`), an entity (`customer`) or `metric_time`."
    )
    grain: Grain | None = Field(
        default=None, description="For a time dimension: day, week, month, quarter or year."
    )

    @property
    def qualified(self) -> str:
        """As MetricFlow names it: `metric_time__month`."""
        return f"{self.name}__{self.grain}" if self.grain else self.name


class MetricFilter(BaseModel):
    name: str = Field(description="The dimension or entity filtered on, as in group_by.")
    grain: Grain | None = Field(default=None, description="For a time dimension, its grain.")
    operator: Operator
    values: list[Value] = Field(
        min_length=1, description="Literal values; one unless the operator is in / not in."
    )


class OrderBy(BaseModel):
    name: str = Field(description="One of the query's metrics or group_by names.")
    descending: bool = False


class MetricQuery(BaseModel):
    """A question answered from the team's metric definitions."""

    metrics: list[str] = Field(min_length=1, description="Names of defined metrics.")
    group_by: list[GroupBy] = Field(default_factory=list)
    where: list[MetricFilter] = Field(default_factory=list)
    order_by: list[OrderBy] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1, le=100_000)

    @field_validator("group_by", mode="before")
    @classmethod
    def _group_names(cls, value: Any) -> Any:
        """A name alone is a group-by too, its grain written MetricFlow's way
        (`metric_time__month`): small models often answer so."""
        return [_grouping(v) if isinstance(v, str) else v for v in value or ()]

    @field_validator("order_by", mode="before")
    @classmethod
    def _order_names(cls, value: Any) -> Any:
        """`revenue` or `-revenue` (descending) alone is an order too."""
        return [
            {"name": v.lstrip("-"), "descending": v.startswith("-")} if isinstance(v, str) else v
            for v in value or ()
        ]

    @field_validator("metrics", mode="before")
    @classmethod
    def _metric_names(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def label(self) -> str:
        """`metric revenue, by customer region, month`: what a person is told it computes."""
        words = ("metrics " if len(self.metrics) > 1 else "metric ") + ", ".join(self.metrics)
        parts = [_spoken(g) for g in self.group_by]
        if parts:
            words += ", by " + ", ".join(parts)
        for f in self.where:
            shown = ", ".join(str(v) for v in f.values)
            words += f", where {_spoken_name(f.name)} {f.operator} {shown}"
        return words


def _grouping(text: str) -> dict[str, str]:
    name, _, grain = text.strip().rpartition("__")
    if name and grain in GRAINS:
        return {"name": name, "grain": grain}
    return {"name": text.strip()}


def _spoken_name(name: str) -> str:
    """`customer__region` -> `customer region`; `metric_time` -> `time`."""
    return "time" if name == METRIC_TIME else name.replace("__", " ").replace("_", " ")


def _spoken(group: GroupBy) -> str:
    if group.name == METRIC_TIME and group.grain:
        return group.grain
    name = _spoken_name(group.name)
    return f"{name} ({group.grain})" if group.grain else name


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    known = list(known)
    # `region` means `customer__region`: a name without its entity first, then lookalikes
    close = [k for k in known if k.rsplit("__", 1)[-1] == name.rsplit("__", 1)[-1]][:3]
    close = close or difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _unknown(kind: str, name: str, known: list[str]) -> str:
    hint = _did_you_mean(name, known)
    return f"Unknown {kind} {name!r}" + (hint or f"; known: {', '.join(known[:20])}.")


def _check_name(
    layer: SemanticLayer, name: str, grain: str | None, what: str
) -> tuple[str | None, Dimension | None]:
    """A problem with a group-by or filter name (and its grain), and its dimension."""
    dimension = layer.dimensions.get(name)
    if dimension is None and name not in layer.entities:
        return _unknown(what, name, layer.group_by_names()), None
    if grain and (dimension is None or not dimension.is_time):
        return f"{name!r} is not a time dimension: leave its grain out.", dimension
    finest = dimension.grain if dimension is not None else ""
    if grain and finest in GRAINS and GRAINS.index(grain) < GRAINS.index(finest):
        return f"{name!r} is kept by {finest}, so no finer grain than that.", dimension
    return None, dimension


def _check_values(
    f: MetricFilter, dimension: Dimension | None, layer: SemanticLayer, docs: Documentation | None
) -> list[str]:
    problems = []
    if f.operator not in ("in", "not in") and len(f.values) != 1:
        problems.append(f"The filter on {f.name!r} with {f.operator!r} takes one value.")
    for value in f.values:
        if isinstance(value, str) and any(t in value for t in _TEMPLATE):
            problems.append(f"The value {value!r} of {f.name!r} holds template braces.")
    if dimension is not None and dimension.is_time:
        for value in f.values:
            try:
                datetime.date.fromisoformat(str(value)[:10])
            except ValueError:
                problems.append(f"{f.name!r} is a time: compare it with a date (2024-01-31).")
    elif dimension is not None and docs:
        model = next((m for m in layer.models if m.name == dimension.model), None)
        known = docs.values(model.relation, dimension.expr) if model else ()
        for value in f.values:
            if known and str(value) not in known:
                near = closest(str(value), list(known))
                hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
                problems.append(f"{value!r} is not a value of {f.name}{hint or '.'}")
    return problems


def check(
    query: MetricQuery, layer: SemanticLayer, documentation: Documentation | None = None
) -> list[str]:
    """What is wrong with `query` for `layer`, one sentence each; empty when nothing is."""
    problems = []
    for name in query.metrics:
        if name not in layer.metrics:
            problems.append(_unknown("metric", name, list(layer.metrics)))
    for group in query.group_by:
        problem, _ = _check_name(layer, group.name, group.grain, "dimension")
        if problem:
            problems.append(problem)
    for f in query.where:
        problem, dimension = _check_name(layer, f.name, f.grain, "dimension")
        if problem:
            problems.append(problem)
        else:
            problems += _check_values(f, dimension, layer, documentation)
    orderable = [*query.metrics, *(g.name for g in query.group_by)]
    for order in query.order_by:
        if order.name not in orderable and order.name not in {g.qualified for g in query.group_by}:
            hint = _did_you_mean(order.name, orderable)
            problems.append(
                f"Cannot order by {order.name!r}: order by one of the query's metrics or "
                f"group_by names ({', '.join(orderable)}){hint}"
            )
    return problems
