"""Suggested follow-up questions for an answer, made from its SQL, its result and the schema of
the tables it read: no model call, so they cost nothing and are the same every time.

At most three, in this order:

1. "Break this down by <column>": a text column of the tables read with few distinct values
   (from the catalog's profile when known; columns named like ids, names, emails or free text are
   left out) that the query neither groups by, selects, nor pins to one value.
2. "Compare with the previous period" when a WHERE clause constrains a date column; otherwise
   "Show this by month" when a table read has a date column the query does not group by.
3. "Drill into “<value>” (<column>)": the top row of a grouped result whose first column is text.

A question is asked in the thread as a follow-up, so the model reads it with the answer before it.
"""

from __future__ import annotations

import re
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.catalog.snapshot import CatalogSnapshot, is_text, table_key

#: Follow-ups offered with one answer.
MAX_FOLLOW_UPS = 3
#: Distinct values of a column worth breaking a result down by.
MAX_DIMENSION_VALUES = 30
#: Characters of a top-row value named in "Drill into".
MAX_VALUE_CHARS = 80

_NOT_A_DIMENSION = re.compile(
    r"(^id$|_id$|^id_|name$|email|mail$|phone|address|street|description|comment|note|url|"
    r"uuid|hash|token|password|title$|text$|sku$|code$)",
    re.IGNORECASE,
)
_DATE_WORDS = ("DATE", "TIME")


def _is_date(type_: str) -> bool:
    return any(word in type_.upper() for word in _DATE_WORDS)


def suggest(answer: dict[str, Any], snapshot: CatalogSnapshot) -> list[str]:
    """Up to three follow-up questions for `answer` (the Answer fields as a dict)."""
    try:
        tree = sqlglot.parse_one(answer["sql"], read=snapshot.dialect)
    except SqlglotError:
        return []
    grouped = _grouped(tree)
    used = {c.name.lower() for c in tree.find_all(exp.Column)} | {
        name.lower() for name in answer["columns"]
    }
    filtered_dates = {
        c.name.lower() for where in tree.find_all(exp.Where) for c in where.find_all(exp.Column)
    }
    dimensions, dates = _candidate_columns(answer["tables"], snapshot, used | _pinned(tree))
    questions: list[str] = []
    if dimensions:
        questions.append(f"Break this down by {min(dimensions)[2]}")
    if any(d in filtered_dates for d in dates):
        questions.append("Compare with the previous period")
    elif dates and not any(d in grouped for d in dates) and not _time_series(answer):
        questions.append("Show this by month")
    drill = _top_value(answer, grouped, tree)
    if drill:
        questions.append(drill)
    return questions[:MAX_FOLLOW_UPS]


def _candidate_columns(
    tables: list[str], snapshot: CatalogSnapshot, skip: set[str]
) -> tuple[list[tuple[int, int, str]], list[str]]:
    """The text columns of `tables` worth a breakdown, as (0 if profiled else 1, distinct values
    or schema order, name) so that the least is the best; and the date columns' lowercase names.
    Columns named in `skip` (used by the query, or pinned to one value) are not suggested."""
    dimensions: list[tuple[int, int, str]] = []
    dates: list[str] = []
    order = 0
    for name in tables:
        table = snapshot.by_key.get(table_key(name))
        if table is None:
            continue
        for column in table.columns:
            order += 1
            key = column.name.lower()
            if _is_date(column.type):
                dates.append(key)
                continue
            if not is_text(column) or key in skip or _NOT_A_DIMENSION.search(column.name):
                continue
            profile = snapshot.column_profile(table.name, column.name)
            distinct = profile.distinct if profile else None
            if distinct is not None and not 2 <= distinct <= MAX_DIMENSION_VALUES:
                continue
            # profiled columns first (fewest values first), then the rest in schema order
            dimensions.append((0 if distinct else 1, distinct or order, column.name))
    return dimensions, dates


def _grouped(tree: exp.Expr) -> set[str]:
    """Names of the columns (and output aliases) the outermost query groups by."""
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    group = select.args.get("group") if select is not None else None
    if select is None or group is None:
        return set()
    names: set[str] = set()
    projections = select.expressions
    for item in group.expressions:
        if isinstance(item, exp.Literal) and item.is_int and 0 < int(item.this) <= len(projections):
            item = projections[int(item.this) - 1]
        names |= {c.name.lower() for c in item.find_all(exp.Column)}
        if isinstance(item, exp.Alias):
            names.add(item.alias.lower())
        elif isinstance(item, exp.Column):
            names.add(item.name.lower())
    return names


def _pinned(tree: exp.Expr) -> set[str]:
    """Columns a WHERE clause sets equal to one literal (a breakdown by them has one row)."""
    pinned: set[str] = set()
    for where in tree.find_all(exp.Where):
        for eq in where.find_all(exp.EQ):
            for side, other in ((eq.left, eq.right), (eq.right, eq.left)):
                if isinstance(side, exp.Column) and isinstance(other, exp.Literal):
                    pinned.add(side.name.lower())
    return pinned


def _time_series(answer: dict[str, Any]) -> bool:
    """The first result column already holds dates or months."""
    rows = answer["rows"]
    if not rows or not answer["columns"]:
        return False
    value = rows[0][0]
    return isinstance(value, str) and bool(re.fullmatch(r"\d{4}-\d{2}(-\d{2}.*)?", value))


def _top_value(answer: dict[str, Any], grouped: set[str], tree: exp.Expr) -> str | None:
    """A "Drill into" question on the first row's first value, for a grouped result of rows."""
    rows, columns = answer["rows"], answer["columns"]
    if answer["total_rows"] < 2 or not rows or not columns or not grouped:
        return None
    value = rows[0][0]
    if not isinstance(value, str) or not value.strip() or _time_series(answer):
        return None
    if not tree.find(exp.Group):
        return None
    shown = value.strip()
    if len(shown) > MAX_VALUE_CHARS:
        shown = shown[: MAX_VALUE_CHARS - 1] + "…"
    return f"Drill into “{shown}” ({columns[0]})"
