"""Words for what the bot shows people, in Slack and in the terminal alike: readable labels for
result columns, the same in a table's header, a chart's axis and a one-row answer's lines
(`region_name` reads "Region name"); the CSV file keeps the names the warehouse gave.

A warehouse names a column it computed after the expression (DuckDB `count_star()`,
`sum(amount)`; Snowflake `COUNT(*)`), after the bare function (PostgreSQL `count`, `sum`) or
with a placeholder (PostgreSQL `?column?`, BigQuery `f0_`, Trino `_col0`). `label` turns the
common ones into words ("Count", "Sum of amount"); an expression it does not know stays as it is,
so nothing is renamed into something it is not.
"""

from __future__ import annotations

import re
from typing import Any

from agent.outcome import Answer

#: A one-row result of at most this many columns reads as sentences rather than as a table.
SENTENCE_COLUMNS = 4

#: Aggregates a column may be named after, and what they are called in words.
AGGREGATES = {
    "count": "Count",
    "count_star": "Count",
    "sum": "Sum",
    "avg": "Average",
    "mean": "Average",
    "min": "Minimum",
    "max": "Maximum",
    "median": "Median",
    "stddev": "Standard deviation",
    "stddev_samp": "Standard deviation",
    "stddev_pop": "Standard deviation",
    "variance": "Variance",
    "var_samp": "Variance",
    "var_pop": "Variance",
}
#: Names warehouses give a computed column that has no alias.
PLACEHOLDER = re.compile(r"\?column\?|f\d+_|_col\d+|EXPR\$\d+", re.IGNORECASE)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
#: `count(*)`, `COUNT(1)`, `count_star()`: every row counted.
_COUNT_ALL = re.compile(r"count_star\(\s*\)|count\(\s*(?:\*|1)\s*\)", re.IGNORECASE)
#: `sum(amount)`, `count(DISTINCT s.region)`, `MAX("Order Date")`: one aggregate of one column.
_AGGREGATE = re.compile(
    r'(?P<func>\w+)\(\s*(?P<distinct>distinct\s+)?(?P<arg>(?:[\w$]+\.)*(?:[\w$]+|"[^"]+"))\s*\)',
    re.IGNORECASE,
)
#: `round(avg(amount), 2)`: rounding does not change what the value is.
_ROUND = re.compile(r"round\((?P<inner>.+),\s*-?\d+\s*\)", re.IGNORECASE)


def _spaced(name: str) -> str:
    """An identifier with spaces for underscores, in lower case when it was all upper case (as
    Snowflake and Oracle return unquoted names)."""
    text = name.lower() if name.isupper() else name
    return text.replace("_", " ").strip() or name


def words(name: str) -> str:
    """An identifier as words: `total_revenue` and `TOTAL_REVENUE` read "Total revenue"."""
    text = _spaced(name)
    return text[:1].upper() + text[1:]


def label(column: str) -> str:
    """A result column's name as a person reads it: "Count" for `count_star()`, "Sum of
    amount" for `sum(amount)`, "Total revenue" for `total_revenue`, "Value" for a warehouse's
    placeholder (or no name); an expression it does not know as it is."""
    name = column.strip()
    if not name:
        return "Value"
    if _COUNT_ALL.fullmatch(name):
        return "Count"
    if PLACEHOLDER.fullmatch(name):
        return "Value"
    if (rounded := _ROUND.fullmatch(name)) and _balanced(rounded["inner"]):
        return label(rounded["inner"])
    if (found := _AGGREGATE.fullmatch(name)) and found["func"].lower() in AGGREGATES:
        what = AGGREGATES[found["func"].lower()]
        arg = _spaced(found["arg"].rsplit(".", 1)[-1].strip('"'))
        return f"{what} of {'distinct ' if found['distinct'] else ''}{arg}"
    if name.lower() in AGGREGATES:
        return AGGREGATES[name.lower()]
    if IDENTIFIER.fullmatch(name):
        return words(name)
    return column


def _balanced(text: str) -> bool:
    """Whether `text`'s brackets pair up (`round(a, 1) * round(b, 2)` is not one rounding)."""
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def only_row(answer: Answer, shown: int) -> list[Any] | None:
    """The answer's one row when it reads better as sentences ("Count: 5,000") than as a
    one-row table: the whole result is that row, of one to `SENTENCE_COLUMNS` columns, and the
    message shows rows (`shown` > 0)."""
    if answer.total_rows != 1 or answer.capped or len(answer.rows) != 1 or shown < 1:
        return None
    return answer.rows[0] if 1 <= len(answer.columns) <= SENTENCE_COLUMNS else None
