"""What a ratio in a proposal divides by, said by code for the person approving it.

A share written as a margin (`SUM(gross_profit) / SUM(net_revenue)` filtered to one category,
for "what fraction of revenue comes from Electronics"), or an "average per customer" written as
`AVG(net_revenue)` over sales lines, reads as plausible SQL and returns a plausible number. The
base is what tells them apart, so the card says it in words next to the model's explanation:
for each result column of the outermost SELECT that divides, the denominator, whether it counts
distinct entities, comes from a query of its own, or is taken over the rows the query reads (and
so after its filters, within each group); for each average, the rows it averages over.

Two ratios are wrong whatever the data, and go back to the model (`ratio_problems`): one that
divides an aggregate by itself (`SUM(x) * 100 / SUM(x)`, always 100), and a share whose part's
condition (a CASE WHEN or FILTER inside the numerator) the WHERE already keeps every row to
(`SUM(CASE WHEN fee = 0 ...) / COUNT(*) ... WHERE fee = 0`, always all of it). And a third goes
back when the question asks for no average or ratio (`unasked_average`): "revenue per product
category" divided by the number of distinct products is an average per product, where "per X"
asked for one row per X.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

#: Result columns described at most, and the characters of SQL quoted in each description.
_MAX_COLUMNS = 3
_SQL_CHARS = 80


def ratio_bases(sql: str, dialect: str) -> list[str]:
    """One sentence per ratio or average among the outermost SELECT's result columns (the
    first few), naming its base; empty when there is none, or the SQL does not parse."""
    select = _outer_select(sql, dialect)
    if select is None:
        return []
    said: list[str] = []
    for column in select.selects:
        sentence = _base(column, select, dialect)
        if sentence:
            said.append(sentence)
    return said[:_MAX_COLUMNS]


def ratio_problems(sql: str, dialect: str) -> list[str]:
    """Why a ratio among the outermost SELECT's result columns cannot be the one asked for
    (module docstring), one sentence each, for the repair step; empty when none."""
    select = _outer_select(sql, dialect)
    if select is None:
        return []
    where = select.args.get("where")
    kept = {_plain(c) for c in _conjuncts(where.this)} if where is not None else set()
    problems = []
    for column in select.selects:
        division = _outside_windows(column, exp.Div)
        if not isinstance(division, exp.Div):
            continue
        name = column.alias_or_name or _quoted(column, dialect)
        part, whole = _factor(division.this), _factor(division.expression)
        if part.find(exp.AggFunc) and _plain(part) == _plain(whole):
            problems.append(
                f"`{name}` divides {_quoted(part, dialect)} by itself, so it is always 1 (or "
                "100 %). Divide the part (a CASE WHEN inside the aggregate) by the whole."
            )
            continue
        shared = [c for c in _conditions(part) if _plain(c) in kept]
        if shared:
            problems.append(
                f"`{name}` counts the part where {_quoted(shared[0], dialect)}, but the WHERE "
                "keeps only such rows, so it is always all of them. Keep that condition in "
                "the CASE WHEN and take it out of the WHERE, so the whole stays whole."
            )
    return problems


#: Words by which a question asks for an average, a ratio or a rate.
_DIVIDING = re.compile(
    r"\b(average|avg|mean|median|typical|ratio|rates?|shares?|fraction|proportion|percent\w*"
    r"|margin|per\s+\w+\s+on\s+average)\b|%",
    re.IGNORECASE,
)


def unasked_average(question: str, sql: str, dialect: str) -> list[str]:
    """Why a result column of `sql` divides by a count of distinct entities when `question`
    asks for no average, ratio or rate, one sentence each; empty when it does not (or asks)."""
    if _DIVIDING.search(question):
        return []
    select = _outer_select(sql, dialect)
    if select is None:
        return []
    problems = []
    for column in select.selects:
        division = _outside_windows(column, exp.Div)
        if not isinstance(division, exp.Div):
            continue
        distinct = division.expression.find(exp.Distinct)
        if distinct is None or not division.expression.find(exp.Count):
            continue
        name = column.alias_or_name or _quoted(column, dialect)
        counted = ", ".join(_quoted(e, dialect) for e in distinct.expressions)
        problems.append(
            f"`{name}` divides by the number of distinct {counted}, an average per {counted}, "
            'but the question asks for no average or ratio: "per X" or "by X" means one row '
            "per X with the total (GROUP BY X). Return the total, undivided."
        )
    return problems


def _outer_select(sql: str, dialect: str) -> exp.Select | None:
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return None
    return tree if isinstance(tree, exp.Select) else tree.find(exp.Select)


def _factor(node: exp.Expr) -> exp.Expr:
    """`node` without what scales it: a cast, brackets, a constant factor (`* 100`, `* 1.0`)."""
    while True:
        scaled = isinstance(node, exp.Mul) and isinstance(node.expression, exp.Literal)
        if scaled or isinstance(node, exp.Cast | exp.TryCast | exp.Paren):
            node = node.this
        elif isinstance(node, exp.Mul) and isinstance(node.this, exp.Literal):
            node = node.expression
        else:
            return node


def _conditions(part: exp.Expr) -> list[exp.Expr]:
    """The conditions that pick a share's part: CASE WHEN branches and FILTER clauses inside
    its aggregates (each conjunct of them)."""
    found: list[exp.Expr] = []
    for aggregate in part.find_all(exp.AggFunc, exp.Filter):
        for node in aggregate.find_all(exp.If, exp.Where):
            found += _conjuncts(node.this)
    return found


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    return list(condition.flatten()) if isinstance(condition, exp.And) else [condition]


def _plain(node: exp.Expr) -> str:
    """`node` as SQL without table qualifiers, for comparing conditions and aggregates."""
    bare = node.copy().transform(
        lambda n: exp.column(n.name) if isinstance(n, exp.Column) and n.table else n
    )
    return bare.sql()


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
