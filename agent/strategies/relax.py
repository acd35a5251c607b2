"""Loosen a query whose result was empty: a deterministic rewrite with sqlglot, no model call.

Why not ask the model? The empty result's usual causes are few and mechanical: a text filter
spelled in another case than the data (`region = 'north'` against 'North'), or a date window in
which nothing happened. Both have a rewrite that code can make exactly and describe exactly
("matched region case-insensitively", "dropped the filter on order_date"), so the person approving
sees one precise change, the cost is no model call, and the same empty result always gets the same
proposal. A model asked to "loosen" is free to rewrite anything. When neither rewrite applies, the
empty result stands and the bot says so; the person can rephrase.

One step at a time, least change of meaning first:

1. case-insensitive matching: `col = 'x'` becomes `LOWER(col) = LOWER('x')`, `col IN ('x', ...)`
   the same with each value, `col LIKE 'x%'` becomes ILIKE (which sqlglot writes per dialect:
   `LOWER(col) LIKE LOWER('x%')` where there is no ILIKE). A literal known to occur exactly (the
   column's complete value profile has it) is left alone: case is not why nothing matched.
2. otherwise, the most selective date filter is dropped: of the columns of a date or time type
   that the WHERE clauses' top-level AND terms constrain, the one with the narrowest window (an
   equality first, then the shortest literal range, then the first unknown one) loses all its
   terms. That filter is the question's period, so the loosened query answers another question:
   `Relaxed.period` names what was dropped, and the bot says so, with the dates the data covers
   (agent.nodes.relax), never silently.

Only WHERE clauses are touched: the outer query's, CTEs', derived tables' and UNION branches'
(not a subquery under IN, EXISTS, EXCEPT or a comparison, where more rows can mean fewer). A
match is made case-insensitive only where AND, OR and parentheses alone lie between it and its
WHERE (not under NOT or CASE), and only top-level AND terms are dropped, so each WHERE lets more
rows through.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from agent.catalog.snapshot import CatalogSnapshot, is_text, table_key
from connectors.base import ColumnInfo

_DATE_WORDS = ("DATE", "TIME")
_COMPARISONS = (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)


@dataclass(frozen=True)
class Period:
    """A date filter of a query: the column (and the table it belongs to, when known) and its
    terms as written."""

    column: str
    table: str | None
    terms: str


@dataclass(frozen=True)
class Relaxed:
    """The loosened statement and what was changed, in words; `period` when the change dropped
    the filter that defines the question's period."""

    sql: str
    changes: tuple[str, ...]
    period: Period | None = None

    def describe(self) -> str:
        return "; ".join(self.changes)


def is_empty(columns: list[str], rows: list[list[object]], total_rows: int) -> bool:
    """No rows, or every value of every row NULL (all rows known: none left out)."""
    if total_rows == 0:
        return True
    if not columns or len(rows) < total_rows:
        return False
    return all(value is None for row in rows for value in row)


def relax(sql: str, snapshot: CatalogSnapshot, tables: list[str]) -> Relaxed | None:
    """A loosened version of `sql` (which reads `tables`), or None when nothing can be loosened."""
    try:
        tree = sqlglot.parse_one(sql, read=snapshot.dialect)
    except SqlglotError:
        return None
    columns = _Columns(snapshot, tables)
    candidate = tree.copy()
    changes = _case_insensitive(candidate, columns)
    if changes:  # the period, if any, is kept
        return Relaxed(candidate.sql(dialect=snapshot.dialect), tuple(changes))
    candidate = tree.copy()
    period = _drop_date_filter(candidate, columns)
    if period is None:
        return None
    change = f"dropped the date filter on {period.column} ({period.terms})"
    return Relaxed(candidate.sql(dialect=snapshot.dialect), (change,), period)


def periods(sql: str, snapshot: CatalogSnapshot, tables: list[str]) -> list[Period]:
    """The date filters of `sql`'s WHERE clauses (those loosening can only widen), one per
    date column, narrowest window first; none when it cannot be parsed."""
    try:
        tree = sqlglot.parse_one(sql, read=snapshot.dialect)
    except SqlglotError:
        return []
    columns = _Columns(snapshot, tables)
    found = _date_filters(tree, columns)
    keys = sorted(found, key=lambda k: _window([term for _, term in found[k]]))
    return [_period(found[key], tree, columns) for key in keys]


class _Columns:
    """Types and known values of the columns of the tables a query reads, by column name."""

    def __init__(self, snapshot: CatalogSnapshot, tables: list[str]) -> None:
        self.dialect = snapshot.dialect
        self.found: dict[str, list[ColumnInfo]] = {}
        #: The tables (qualified names) that have a column of this name.
        self.owners: dict[str, list[str]] = {}
        self.exact: dict[str, set[str]] = {}
        for name in tables:
            table = snapshot.by_key.get(table_key(name))
            if table is None:
                continue
            for column in table.columns:
                key = column.name.lower()
                self.found.setdefault(key, []).append(column)
                self.owners.setdefault(key, []).append(table.name)
                profile = snapshot.column_profile(table.name, column.name)
                if is_text(column) and profile is not None and profile.complete:
                    self.exact.setdefault(key, set()).update(profile.values)

    def is_date(self, column: exp.Column) -> bool:
        found = self.found.get(column.name.lower(), [])
        return bool(found) and all(any(w in c.type.upper() for w in _DATE_WORDS) for c in found)

    def is_text(self, column: exp.Column) -> bool:
        """Text in every table read that has a column of this name (unknown: not text, so an
        integer compared with '5' never meets LOWER)."""
        found = self.found.get(column.name.lower(), [])
        return bool(found) and all(is_text(c) for c in found)

    def occurs(self, column: exp.Column, value: str) -> bool:
        return value in self.exact.get(column.name.lower(), set())


#: Nodes between a WHERE and the statement's root through which more rows stay more rows: the
#: outer query, CTEs, derived tables, joins and UNION (not EXCEPT, IN, EXISTS or a comparison).
_PASS_THROUGH = (exp.Select, exp.From, exp.Join, exp.Subquery, exp.CTE, exp.With, exp.Union)


def _wheres(tree: exp.Expr) -> Iterator[exp.Where]:
    """The WHERE clauses whose loosening can only add rows to the result."""
    for where in tree.find_all(exp.Where):
        node = where.parent
        while node is not None and type(node) in _PASS_THROUGH:
            node = node.parent
        if node is None:
            yield where


def _string(node: exp.Expr) -> str | None:
    return node.this if isinstance(node, exp.Literal) and node.is_string else None


def _lower(node: exp.Expr) -> exp.Lower:
    return exp.Lower(this=node.copy())


def _case_insensitive(tree: exp.Expr, columns: _Columns) -> list[str]:
    """Rewrite text matches on bare columns to ignore case; the names of the columns changed."""
    changed: list[str] = []
    for where in list(_wheres(tree)):
        for node in list(where.find_all(exp.EQ, exp.In, exp.Like)):
            if not _widens(node, where):
                continue
            if isinstance(node, exp.EQ):
                column = _fold_equal(node, columns)
            elif isinstance(node, exp.In):
                column = _fold_in(node, columns)
            else:
                column = _fold_like(node, columns)
            if column is not None:
                changed.append(column.name)
    names = list(dict.fromkeys(changed))
    return [f"matched {', '.join(names)} case-insensitively"] if names else []


def _text_column(node: exp.Expr, columns: _Columns) -> exp.Column | None:
    if isinstance(node, exp.Column) and columns.is_text(node):
        return node
    return None


def _fold_equal(node: exp.EQ, columns: _Columns) -> exp.Column | None:
    """`col = 'Text'` (either way round) as `LOWER(col) = LOWER('Text')`, unless the value
    occurs as written; the column, if rewritten."""
    column, literal = _text_column(node.left, columns), _string(node.right)
    if column is None or literal is None:
        column, literal = _text_column(node.right, columns), _string(node.left)
    if column is None or literal is None or columns.occurs(column, literal):
        return None
    node.replace(exp.EQ(this=_lower(column), expression=_lower(exp.Literal.string(literal))))
    return column


def _fold_in(node: exp.In, columns: _Columns) -> exp.Column | None:
    """`col IN ('A', 'B')` with lowered sides, unless every value occurs as written; the
    column, if rewritten."""
    column = _text_column(node.this, columns)
    values = [_string(e) for e in node.expressions]
    if column is None or not values or None in values:
        return None
    if all(columns.occurs(column, v) for v in values if v is not None):
        return None
    node.set("this", _lower(column))
    node.set("expressions", [_lower(e) for e in node.expressions])
    return column


def _fold_like(node: exp.Predicate, columns: _Columns) -> exp.Column | None:
    """`col LIKE 'pattern'` as ILIKE; the column, if rewritten."""
    column, pattern = _text_column(node.this, columns), _string(node.expression)
    if column is None or pattern is None:
        return None
    node.replace(exp.ILike(this=column.copy(), expression=node.expression.copy()))
    return column


def _widens(node: exp.Expr, where: exp.Where) -> bool:
    """Whether matching more at `node` lets more rows through `where`: only AND, OR and
    parentheses lie between them (not NOT, CASE, a function or a subquery)."""
    parent = node.parent
    while parent is not None and parent is not where:
        if not isinstance(parent, exp.And | exp.Or | exp.Paren):
            return False
        parent = parent.parent
    return parent is where


def _conjuncts(condition: exp.Expr) -> Iterator[exp.Expr]:
    if isinstance(condition, exp.And):
        yield from _conjuncts(condition.left)
        yield from _conjuncts(condition.right)
    elif isinstance(condition, exp.Paren) and isinstance(condition.this, exp.And):
        yield from _conjuncts(condition.this)
    else:
        yield condition


def _date_of(node: exp.Expr) -> dt.date | None:
    """The date a literal bound spells (`'2026-10-01'`, `DATE '2026-10-01'`, a cast), if any."""
    if isinstance(node, exp.Cast):
        node = node.this
    text = _string(node)
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _window(terms: list[exp.Expr]) -> tuple[int, float]:
    """Sort key of one date column's terms: equality first, then the narrowest literal range
    (in days), then unknown ranges."""
    low: dt.date | None = None
    high: dt.date | None = None
    for term in terms:
        if isinstance(term, exp.EQ):
            return (0, 0.0)
        if isinstance(term, exp.Between):
            low, high = _date_of(term.args["low"]) or low, _date_of(term.args["high"]) or high
            continue
        bound = _date_of(term.expression) or _date_of(term.this)
        column_left = isinstance(term.this, exp.Column) or bool(term.this.find(exp.Column))
        lower = isinstance(term, exp.GT | exp.GTE) == column_left
        if lower:
            low = bound or low
        else:
            high = bound or high
    if low and high:
        return (1, float((high - low).days))
    return (2, 0.0)


_Filters = dict[str, list[tuple[exp.Where, exp.Expr]]]


def _date_filters(tree: exp.Expr, columns: _Columns) -> _Filters:
    """The top-level AND terms of the widening WHEREs that compare date columns only, by the
    first column each reads."""
    found: _Filters = {}
    for where in _wheres(tree):
        for term in _conjuncts(where.this):
            if not isinstance(term, _COMPARISONS):
                continue
            read = list(term.find_all(exp.Column))
            if not read or not all(columns.is_date(c) for c in read):
                continue
            found.setdefault(read[0].sql().lower(), []).append((where, term))
    return found


def _period(terms: list[tuple[exp.Where, exp.Expr]], tree: exp.Expr, columns: _Columns) -> Period:
    column = next(iter(terms[0][1].find_all(exp.Column)))
    shown = " AND ".join(term.sql(dialect=columns.dialect) for _, term in terms)
    return Period(column.name, _owner(column, tree, columns), shown)


def _owner(column: exp.Column, tree: exp.Expr, columns: _Columns) -> str | None:
    """The table (qualified name) `column` belongs to: the one its qualifier names (a table or
    its alias), else the only table read that has a column of that name; None when unsure."""
    owners = columns.owners.get(column.name.lower(), [])
    if column.table:
        qualifier = column.table.lower()
        for table in tree.find_all(exp.Table):
            if qualifier in (table.alias_or_name.lower(), table.name.lower()):
                wanted = table.name.lower()
                return next((o for o in owners if o.rsplit(".", 1)[-1].lower() == wanted), None)
        return None
    return owners[0] if len(owners) == 1 else None


def _drop_date_filter(tree: exp.Expr, columns: _Columns) -> Period | None:
    """Drop every top-level AND term on the date column with the narrowest window; the period
    dropped, or None when there is none."""
    found = _date_filters(tree, columns)
    if not found:
        return None
    key = min(found, key=lambda k: _window([term for _, term in found[k]]))
    period = _period(found[key], tree, columns)
    dropped = [term for _, term in found[key]]
    for where in {id(where): where for where, _ in found[key]}.values():
        rest = [t for t in _conjuncts(where.this) if not any(t is d for d in dropped)]
        if rest:
            where.set("this", exp.and_(*[t.copy() for t in rest]))
        else:
            where.pop()
    return period
