"""The row cap: add or tighten the outermost LIMIT, unless the query returns one aggregate row."""

from __future__ import annotations

from sqlglot import exp

from agent.gate.errors import Rejection
from agent.gate.verdict import Reason

#: Functions that return several rows per input row when used in a select list.
_SET_RETURNING = (exp.UDTF, exp.Explode, exp.GenerateSeries, exp.ExplodingGenerateSeries)


def cap_rows(query: exp.Query, row_limit: int) -> bool:
    """Make `query` (changed in place) return at most `row_limit` rows; True when it changed.

    `LIMIT ALL` is replaced by the cap. A limit the gate cannot compare with the cap (a
    parameter, an expression, a percentage, `WITH TIES`) is rejected: replacing it could return
    more rows than the author asked for.
    """
    if returns_one_row(query):
        return False
    current = query.args.get("limit")
    if current is not None and not _is_all(current):
        count = literal_count(current)
        if count is None:
            written = current.sql().strip()
            message = f"The gate cannot apply its row cap to '{written}'; write LIMIT n"
            raise Rejection(Reason("row_cap", message, f"LIMIT {row_limit}"))
        if count <= row_limit:
            return False
    query.limit(row_limit, copy=False)
    return True


def returns_one_row(query: exp.Query) -> bool:
    """Whether `query` is a single aggregate row: `SELECT COUNT(*), MAX(x) FROM t WHERE ...`.

    Conservative: any doubt (GROUP BY, window functions, set-returning or unknown functions in
    the select list) answers False, and the cap is added; a needless LIMIT is harmless.
    """
    if not isinstance(query, exp.Select) or query.args.get("group"):
        return False
    projections = query.expressions
    if not projections or any(isinstance(p.unalias(), exp.Star) for p in projections):
        return False
    aggregated = False
    for projection in projections:
        for node in projection.walk(prune=lambda n: isinstance(n, (exp.AggFunc, exp.Query))):
            if isinstance(node, (exp.Window, exp.Anonymous, exp.Query, *_SET_RETURNING)):
                return False
            if isinstance(node, exp.AggFunc) and not isinstance(node.parent, exp.Window):
                aggregated = True
            elif isinstance(node, exp.Column):
                return False
    return aggregated


def _is_all(limit: exp.Expr) -> bool:
    value = limit.expression if isinstance(limit, exp.Limit) else None
    return isinstance(value, exp.Var) and value.name.upper() == "ALL"


def literal_count(limit: exp.Expr) -> int | None:
    """The row count of a plain `LIMIT n` / `FETCH FIRST n ROWS ONLY`, else None."""
    options = limit.args.get("limit_options")
    if options is not None and (options.args.get("percent") or options.args.get("with_ties")):
        return None
    if isinstance(limit, exp.Limit):
        value = limit.expression
    elif isinstance(limit, exp.Fetch):
        value = limit.args.get("count")
        if value is None:
            return 1
    else:
        return None
    if isinstance(value, exp.Literal) and value.is_int:
        return int(value.this)
    return None
