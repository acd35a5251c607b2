"""What a ratio in a proposal divides by, said by code for the person approving it.

A share written as a margin (`SUM(gross_profit) / SUM(net_revenue)` filtered to one category,
for "what fraction of revenue comes from Electronics"), or an "average per customer" written as
`AVG(net_revenue)` over sales lines, reads as plausible SQL and returns a plausible number. The
base is what tells them apart, so the card says it in words next to the model's explanation:
for each result column of the outermost SELECT that divides, the denominator, whether it counts
distinct entities, comes from a query of its own, or is taken over the rows the query reads (and
so after its filters, within each group); for each average, the rows it averages over.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

#: Result columns described at most, and the characters of SQL quoted in each description.
_MAX_COLUMNS = 3
_SQL_CHARS = 80


def ratio_bases(sql: str, dialect: str) -> list[str]:
    """One sentence per ratio or average among the outermost SELECT's result columns (the
    first few), naming its base; empty when there is none, or the SQL does not parse."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return []
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None:
        return []
    said: list[str] = []
    for column in select.selects:
        sentence = _base(column, select, dialect)
        if sentence:
            said.append(sentence)
    return said[:_MAX_COLUMNS]


def _base(column: exp.Expr, select: exp.Select, dialect: str) -> str:
    name = column.alias_or_name or _quoted(column, dialect)
    division = _outside_windows(column, exp.Div)
    if isinstance(division, exp.Div):
        over = division.expression
        text = f"`{name}` divides by {_quoted(over, dialect)}"
        if over.find(exp.Subquery, exp.Select):
            return f"{text}, a total of a query of its own."
        distinct = over.find(exp.Distinct)
        if distinct is not None and over.find(exp.Count):
            counted = ", ".join(_quoted(e, dialect) for e in distinct.expressions)
            return f"{text}: per distinct {counted}{_within(select, dialect)}."
        if over.find(exp.AggFunc):
            return f"{text}, over the rows the query reads{_scope(select, dialect)}."
        return ""
    average = _outside_windows(column, exp.Avg)
    if average is not None:
        of, rows = _quoted(average.this, dialect), _rows_of(select)
        return f"`{name}` averages {of} over each {rows} the query reads{_scope(select, dialect)}."
    return ""


def _outside_windows(column: exp.Expr, kind: type[exp.Expr]) -> exp.Expr | None:
    """The outermost `kind` node of a result column, outside windows and subqueries."""
    inner = (exp.Window, exp.Subquery)
    return next(
        (n for n in column.bfs(prune=lambda n: isinstance(n, inner)) if isinstance(n, kind)), None
    )


def _rows_of(select: exp.Select) -> str:
    """What one row read by `select` is: "row of sales", "row of sales joined to products"."""
    sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
    names = [t.name for s in sources if s is not None and isinstance(t := s.this, exp.Table)]
    return f"row of {' joined to '.join(names)}" if names else "row"


def _scope(select: exp.Select, dialect: str) -> str:
    """Which rows an aggregate of `select` sees: after its filter, within each group."""
    where = select.args.get("where")
    filtered = f" after its filter ({_quoted(where.this, dialect)})" if where is not None else ""
    return filtered + _within(select, dialect)


def _within(select: exp.Select, dialect: str) -> str:
    group = select.args.get("group")
    if group is None or not group.expressions:
        return ""
    return ", within each " + ", ".join(_quoted(e, dialect) for e in group.expressions)


def _quoted(node: exp.Expr, dialect: str) -> str:
    text = node.sql(dialect=dialect)
    return text if len(text) <= _SQL_CHARS else text[: _SQL_CHARS - 1] + "…"
