"""Show what a ranking ranks by: an ORDER BY expression the SELECT does not return is added to
it (`... GROUP BY region ORDER BY COUNT(*) DESC LIMIT 1` also returns `COUNT(*) AS count`).

"Which region has the most customers?" answered with the region alone asks the reader to take
the ranking on trust; with the count beside it the answer carries its evidence. A ranking is an
ORDER BY on an aggregate (groups ranked by a measure, with or without a LIMIT) or any ORDER BY
of a top-N query: one whose own LIMIT keeps fewer rows than the gate's row cap. A plain list
ordered by a column it does not show is left as it is: it is ordered for reading (by id, by
date), the column would be noise, and the bot charts a number column beside a label (the
regions charted by their region_id). A LIMIT at the cap or above is no top-N, since the gate
writes its cap as one: the statement reads the same on a second pass.

Only the outermost SELECT is changed, and only where one more column changes nothing else: not
a set operation (each SELECT of a UNION is out of scope), not SELECT DISTINCT (the column would
change which rows are distinct), not a star, not GROUPING SETS, ROLLUP or CUBE. An ORDER BY
term already returned (by position, by output name, or as the same expression) is left alone,
as is one that orders by chance (`random()`), by a window or subquery, by a constant, or by an
output alias inside an expression (that alias means something else in the select list). What is
added is a measure: an expression with an aggregate, a column, or arithmetic over columns
(`price * quantity`). A function of a row's values (`LENGTH(name)`, `TO_DATE(month, 'Month')`,
the CASE that puts nulls last) is a way of sorting what is shown, not a value to show, and may
compute values a driver cannot read (PostgreSQL's `TO_DATE('January', 'Month')` is a date
before year 1, which psycopg refuses). In a grouped query only aggregates and grouped
expressions are added: any other column would be invalid there.

The new column's name is made from the expression's functions and columns (`count`,
`sum_net_revenue`), never one the statement already uses, so no reference changes what it
names. A second pass finds every term returned and adds nothing (scheduled runs refuse SQL the
gate would change)."""

from __future__ import annotations

import re

from sqlglot import exp

from agent.gate.limit import literal_count

#: Functions whose value differs on every call: ordering by them is no measure.
_CHANCE = (exp.Rand, exp.Randn, exp.Randstr, exp.Uuid)
#: What an ORDER BY term added to the select list may not contain.
_NOT_ADDED = (exp.Window, exp.Query, exp.Placeholder, exp.Parameter, *_CHANCE)
#: What arithmetic over a row's columns is made of (besides numbers).
_ARITHMETIC = (
    exp.Column,
    exp.Identifier,
    exp.Paren,
    exp.Neg,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.IntDiv,
    exp.Mod,
)
#: At most this many words from the expression make its column's name.
_WORDS = 4


def add_ranking_measures(
    query: exp.Query, dialect: str, row_limit: int | None, qualified: exp.Expr | None = None
) -> list[str]:
    """Add each ORDER BY expression a ranking in the outermost SELECT of `query` does not
    return to its select list (changed in place); the fixes made, one per expression added.

    `row_limit` is the gate's row cap (None: none), below which a LIMIT makes a top-N query.

    `qualified` is the statement as the column check resolved it (`check_columns`), when it
    did: there qualify has rewritten ORDER BY terms that repeat a projection as its output name
    and GROUP BY positions as their expressions, so differences of spelling (`c.region` for
    `region`) are not taken for different expressions.
    """
    order = query.args.get("order")
    if not isinstance(query, exp.Select) or order is None or not _may_widen(query):
        return []
    view = qualified if isinstance(qualified, exp.Select) and _aligned(qualified, query) else query
    grouped = _is_grouped(query)
    grouping, written = _grouping(view), _grouping(query)
    top = _top_n(query, row_limit)
    fixes = []
    for term, seen in zip(order.expressions, view.args["order"].expressions, strict=True):
        key, resolved = term.this, seen.this
        if _returned(resolved, view) or _returned(key, query) or not _addable(key, query):
            continue
        if grouped and not (_grouped(resolved, grouping) or _grouped(key, written)):
            continue  # a column the query does not group by (as resolved or as written)
        aggregated = _has_aggregate(key)
        if not grouped and aggregated:
            continue  # an aggregate in a query that groups nothing: left as written
        if not (aggregated or top):
            continue  # a list ordered for reading
        projection = _projection(key, query)
        query.select(projection, copy=False)
        fixes.append(f"added the ranking measure {projection.sql(dialect)} to the result")
    return fixes


def _top_n(select: exp.Select, row_limit: int | None) -> bool:
    """Whether `select` keeps its first rows by its own LIMIT, one under the row cap."""
    limit = select.args.get("limit")
    count = literal_count(limit) if limit is not None else None
    return count is not None and (row_limit is None or count < row_limit)


def _may_widen(select: exp.Select) -> bool:
    """Whether one more column would leave the rows as they are."""
    if select.args.get("distinct") or not select.expressions:
        return False
    if any(_is_star(p) for p in select.expressions):
        return False
    group = select.args.get("group")
    return group is None or not any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup"))


def _is_star(projection: exp.Expr) -> bool:
    node = projection.unalias()
    return isinstance(node, exp.Star) or (
        isinstance(node, exp.Column) and isinstance(node.this, exp.Star)
    )


def _aligned(qualified: exp.Select, query: exp.Select) -> bool:
    """Whether `qualified` is `query` resolved, term for term (its projections and ORDER BY)."""
    if qualified.args.get("order") is None:
        return False
    same_order = len(qualified.args["order"].expressions) == len(query.args["order"].expressions)
    return same_order and len(qualified.expressions) == len(query.expressions)


def _output_names(select: exp.Select) -> set[str]:
    return {p.alias_or_name.casefold() for p in select.expressions if p.alias_or_name}


def _returned(key: exp.Expr, select: exp.Select) -> bool:
    """Whether ORDER BY `key` is already in `select`'s result: a position, an output name, or a
    projection's own expression."""
    if isinstance(key, exp.Literal) and key.is_int:
        return True  # ORDER BY 2
    if (
        isinstance(key, exp.Column)
        and not key.table
        and key.name.casefold() in _output_names(select)
    ):
        return True
    return any(key == p.unalias() for p in select.expressions)


def _addable(key: exp.Expr, select: exp.Select) -> bool:
    """Whether `key` is a value worth showing (an aggregate, a column, or arithmetic over
    columns) and means in the select list what it means in ORDER BY."""
    if _orders_all(key) or key.find(*_NOT_ADDED) is not None:
        return False  # ORDER BY ALL, chance, a window, a subquery, a parameter
    if key.find(exp.Column, exp.AggFunc) is None:
        return False  # a constant
    if not _has_aggregate(key) and not all(_row_value(n) for n in key.walk()):
        return False  # a way of sorting (LENGTH(name), a CASE), not a value to show
    aliases = {
        p.alias.casefold()
        for p in select.expressions
        if isinstance(p, exp.Alias)
        and not (isinstance(p.this, exp.Column) and p.this.name.casefold() == p.alias.casefold())
    }
    return not any(
        not column.table and column.name.casefold() in aliases
        for column in key.find_all(exp.Column)
    )


def _row_value(node: exp.Expr) -> bool:
    """A part of arithmetic over a row's columns (`price * quantity`)."""
    if isinstance(node, exp.Literal):
        return not node.is_string
    return isinstance(node, _ARITHMETIC)


def _orders_all(key: exp.Expr) -> bool:
    """`ORDER BY ALL` (DuckDB, Snowflake): every column of the result, in order."""
    if isinstance(key, exp.Column) and not key.table and isinstance(key.this, exp.Identifier):
        return not key.this.quoted and key.name.upper() == "ALL"
    return isinstance(key, exp.Var)


def _is_aggregate(node: exp.Expr) -> bool:
    """An aggregate call (not a window's): SQL's, or Looker's AGGREGATE(measure)."""
    if isinstance(node.parent, exp.Window):
        return False
    if isinstance(node, exp.Anonymous):
        return node.name.upper() == "AGGREGATE"
    return isinstance(node, exp.AggFunc)


def _has_aggregate(node: exp.Expr) -> bool:
    return any(_is_aggregate(n) for n in node.walk(prune=lambda n: isinstance(n, exp.Query)))


def _is_grouped(select: exp.Select) -> bool:
    """Whether `select` groups its rows: GROUP BY, or an aggregate in its list or HAVING."""
    if select.args.get("group") is not None or select.args.get("having") is not None:
        return True
    return any(_has_aggregate(p) for p in select.expressions)


def _grouping(select: exp.Select) -> list[exp.Expr]:
    """The GROUP BY expressions, positions and output names read as what they stand for."""
    group = select.args.get("group")
    if group is None:
        return []
    named = {p.alias.casefold(): p.this for p in select.expressions if isinstance(p, exp.Alias)}
    result = []
    for item in group.expressions:
        if isinstance(item, exp.Literal) and item.is_int:
            index = int(item.this) - 1
            if 0 <= index < len(select.expressions):
                result.append(select.expressions[index].unalias())
        elif isinstance(item, exp.Column) and not item.table and item.name.casefold() in named:
            result.append(named[item.name.casefold()])
        result.append(item)
    return result


def _grouped(key: exp.Expr, grouping: list[exp.Expr]) -> bool:
    """Whether every column of `key` is aggregated or inside a grouped expression."""

    def settled(node: exp.Expr) -> bool:
        return _is_aggregate(node) or any(node == g for g in grouping)

    return not any(
        isinstance(node, exp.Column) and not settled(node) for node in key.walk(prune=settled)
    )


def _projection(key: exp.Expr, select: exp.Select) -> exp.Expr:
    """`key` as a new column of `select`, under a name nothing in the statement uses."""
    outputs = _output_names(select)
    if isinstance(key, exp.Column) and key.name.casefold() not in outputs:
        return key.copy()  # under its own name
    taken = outputs | {i.name.casefold() for i in select.find_all(exp.Identifier)}
    base = key.name if isinstance(key, exp.Column) else _name(key)
    name, n = base, 1
    while name.casefold() in taken:
        n += 1
        name = f"{base}_{n}"
    return exp.alias_(key.copy(), name)


def _name(key: exp.Expr) -> str:
    """A column name from the functions and columns of `key`, in reading order:
    `COUNT(*)` -> count, `SUM(net_revenue)` -> sum_net_revenue."""
    words: list[str] = []
    for node in key.walk(bfs=False):
        if isinstance(node, exp.Anonymous):
            word = "" if node.name.upper() == "AGGREGATE" else node.name
        elif isinstance(node, exp.Func):
            word = node.sql_name()
        elif isinstance(node, exp.Distinct):
            word = "distinct"
        elif isinstance(node, exp.Column):
            word = node.name
        else:
            continue
        word = re.sub(r"[^0-9a-z]+", "_", word.lower()).strip("_")
        if word and (not words or words[-1] != word):
            words.append(word)
    name = "_".join(words[:_WORDS]) or "measure"
    return f"m_{name}" if name[0].isdigit() else name
