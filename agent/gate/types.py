"""The type check: a date function applied to a number column fails in the warehouse, so say
which column and what it holds before anyone approves a statement that cannot run.

sqlglot annotates each column with its type from the schema. Only numbers passed where a date or
timestamp is read are reported, and only for dialects whose engines refuse them (MySQL and
SQLite read a number as a date, so there it is not an error).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types

from agent.gate.schema import GateSchema
from agent.gate.verdict import Reason

#: Engines that refuse a number where a date or timestamp is read (`year(BIGINT)`).
STRICT = frozenset({"duckdb", "postgres", "bigquery"})

#: Date functions and the arguments each reads as a date or timestamp.
_DATE_ARGS: dict[type[exp.Expr], tuple[str, ...]] = {
    exp.Year: ("this",),
    exp.Quarter: ("this",),
    exp.Month: ("this",),
    exp.Week: ("this",),
    exp.Day: ("this",),
    exp.DayOfWeek: ("this",),
    exp.DayOfMonth: ("this",),
    exp.DayOfYear: ("this",),
    exp.Extract: ("expression",),
    exp.DateTrunc: ("this",),
    exp.TimestampTrunc: ("this",),
    exp.DateAdd: ("this",),
    exp.DateSub: ("this",),
    exp.DateDiff: ("this", "expression"),
    exp.TimestampDiff: ("this", "expression"),
    exp.TimeToStr: ("this",),
}


def type_reasons(qualified: exp.Expr, schema: GateSchema) -> list[Reason]:
    """Numbers read as dates in `qualified` (a statement sqlglot's `qualify` resolved)."""
    if schema.dialect not in STRICT:
        return []
    try:
        annotated = annotate_types(qualified.copy(), schema=schema.mapping, dialect=schema.dialect)
    except Exception:  # a statement sqlglot cannot type: the engine is left to judge it
        return []
    reasons: list[Reason] = []
    for node in annotated.walk():
        for argument in _date_arguments(node, schema.dialect):
            if (
                isinstance(argument, exp.Column)
                and argument.type is not None
                and argument.type.is_type(*exp.DataType.NUMERIC_TYPES)
                and (reason := _number_as_date(node, argument, schema.dialect)) not in reasons
            ):
                reasons.append(reason)
    return reasons


def _date_arguments(node: exp.Expr, dialect: str) -> list[exp.Expr]:
    """The arguments of `node` read as a date or timestamp, the side of `+`/`-` an interval is
    added to included."""
    if isinstance(node, (exp.Add, exp.Sub)):
        left, right = node.this, node.expression
        if isinstance(right, exp.Interval):
            return [left]
        if isinstance(left, exp.Interval):
            return [right]
        return []
    if isinstance(node, exp.TimeToStr) and dialect == "postgres":
        return []  # PostgreSQL's TO_CHAR formats numbers too
    names = next((args for kind, args in _DATE_ARGS.items() if isinstance(node, kind)), ())
    return [arg for name in names if isinstance(arg := node.args.get(name), exp.Expr)]


def _number_as_date(node: exp.Expr, column: exp.Column, dialect: str) -> Reason:
    assert column.type is not None
    written = node.sql(dialect=dialect)
    written = written if len(written) <= 80 else f"{written[:77]}..."
    name = column.sql(dialect=dialect)
    message = (
        f"{written} reads a date or timestamp, but {name} is {column.type.sql()}, a number: "
        f"if it holds a year or another count, compare, group or subtract it as the number it "
        f"is (for example {column.name} = 2020); otherwise read a date column"
    )
    return Reason("number_as_date", message)
