"""The reference day: the day questions are asked on, the real date or a pinned one.

A deployment or a golden set may pin "today" (QUERYBOT_TODAY, a golden set's `today:`), so that
"last month" means the same period on every run. Then the model is told that day, and SQL that
reads the engine's clock (`current_date`, `now()`...) is rewritten, on its sqlglot tree, to
read the pinned day instead: the engine's own clock would still say the real date.
"""

from __future__ import annotations

import datetime as dt

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

#: Functions sqlglot leaves anonymous that read the engine's clock (DuckDB, MySQL, Snowflake...).
_CLOCK_CALLS = frozenset(
    {"now", "get_current_timestamp", "current_localtimestamp", "transaction_timestamp", "getdate"}
)


def today(pinned: dt.date | None) -> dt.date:
    """`pinned`, else the real date."""
    return pinned or dt.date.today()


def _literal(node: exp.Expr, day: dt.date) -> exp.Expr:
    if isinstance(node, exp.CurrentDate):
        return exp.cast(exp.Literal.string(day.isoformat()), exp.DataType.Type.DATE)
    reads_time = isinstance(
        node, exp.CurrentTimestamp | exp.CurrentDatetime | exp.Localtimestamp
    ) or (isinstance(node, exp.Anonymous) and str(node.this).lower() in _CLOCK_CALLS)
    if reads_time:  # midnight of the pinned day: a fixed moment, as the pin is a fixed day
        return exp.cast(
            exp.Literal.string(f"{day.isoformat()} 00:00:00"), exp.DataType.Type.TIMESTAMP
        )
    return node


def pin_clock(tree: exp.Expr, day: dt.date) -> exp.Expr:
    """`tree` (a copy) with every read of the engine's clock replaced by `day` as a literal."""
    return tree.transform(lambda node: _literal(node, day))


def pin_sql(sql: str, day: dt.date, dialect: str) -> str:
    """`sql` with the engine's clock replaced by `day`, written back in `dialect` (pretty when it
    was on several lines); `sql` itself when it reads no clock or cannot be parsed."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return sql
    pinned = pin_clock(tree, day)
    if pinned == tree:
        return sql
    return pinned.sql(dialect=dialect, pretty="\n" in sql.strip())
