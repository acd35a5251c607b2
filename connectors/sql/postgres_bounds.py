"""PostgreSQL values bounded in the server, before they cross the wire.

psycopg reads a row whole before querybot can measure it, and a row can hold a value of 1 GB
(`SELECT repeat('x', 900000000)` took the bot to 2.5 GB before the cell bound saw it). So the
statement that runs is not the approved one alone: the approved query, unchanged, becomes a
subquery whose every column is measured in the backend (`octet_length`, of its text form for
types other than text and bytea; fixed-size types need none), and a value over
`RunLimits.max_cell_bytes` makes the backend fail the statement (a cast of a marker text to int)
instead of sending it. The marker carries a secret made per connector, the column and the size,
so `cell_error` can tell the check's own failure from any other and name the column. Column
names, types and order are the approved query's: the wrapper selects each column by position
under the name PostgreSQL gave it (`DECLARE` describes the query without running it). An
`OFFSET 0` between the query and the checks keeps the planner from merging them into the
query's own WHERE, where they could run first on rows it filters out. The query
is the approved text itself (only a trailing `;` and comment cut off), so what PostgreSQL
describes, runs and shows in `pg_stat_activity` is what was approved; sqlglot writes the wrapper
around it.

Before that, `value_guard` refuses value builders whose sizes are not literals or too large
(they would be built in the backend, where no setting bounds memory). Every statement goes
through `DECLARE` and the wrapper, so PostgreSQL itself decides what the text is (sqlglot might
read it otherwise), except those sqlglot reads as one statement that is no query (a write, SET,
SHOW, EXPLAIN...), which the read-only transaction refuses or whose rows are short; EXECUTE and
FETCH, which would return the rows of a statement prepared earlier, go to `DECLARE`, which
refuses them.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from connectors import value_guard
from connectors.limits import ResourceLimitExceeded, RunLimits, cell_too_large

#: Types measured with `octet_length` as they are (text, varchar, char, bytea).
_OCTETS = frozenset({25, 1043, 1042, 17})
#: Variable-length types whose values stay small (numeric: at most about 150 kB of digits).
_SMALL = frozenset({1700})
#: Commands that return the rows of a statement prepared or declared before.
_ROW_COMMANDS = frozenset({"EXECUTE", "FETCH"})
#: The wrapper's names for the approved query (its columns are c1, c2...) and the fence over it.
_SUBQUERY, _FENCED = "querybot_bounded", "querybot_fenced"


class ServerBounds:
    """Rewrites each statement so that the backend bounds its values (see the module text)."""

    def __init__(self, limits: RunLimits) -> None:
        self.limits = limits
        self._marker = f"querybot-cell-{secrets.token_hex(8)}"
        self._failed = re.compile(re.escape(self._marker) + r":([0-9a-f]*):(\d+)")

    def statement(self, con: Any, sql: str) -> str:
        """The statement to send for `sql`, inside the run's transaction: the guard first, then
        the bounded wrapper, or `sql` itself for a statement sqlglot reads as no query (a write,
        SET, SHOW...: the read-only transaction and the Meter are enough for those)."""
        value_guard.check(sql, self.limits, value_guard.POSTGRES)
        if _not_a_query(sql):
            return sql
        inner = _without_end(sql)
        # What PostgreSQL makes of the text decides: a syntax error, several statements, or
        # EXECUTE/FETCH end here as its own errors.
        with con.cursor(name="querybot_bounds") as declared:
            declared.execute(inner)
            columns = list(declared.description or [])
        return self._wrap(inner, columns) if columns else inner

    def _wrap(self, inner: str, columns: list[Any]) -> str:
        bound = self.limits.max_cell_bytes
        names = [f"c{i}" for i in range(1, len(columns) + 1)]
        projections = []
        checks = []
        for name, column in zip(names, columns, strict=True):
            value = exp.column(name, table=_FENCED)
            projections.append(exp.alias_(value.copy(), column.name, quoted=True))
            measured = _measure(value, column)
            if measured is None:
                continue
            marker = exp.Literal.string(f"{self._marker}:{column.name.encode().hex()}:")
            failure = exp.cast(exp.DPipe(this=marker, expression=exp.cast(measured, "text")), "int")
            condition = exp.GT(this=measured.copy(), expression=exp.Literal.number(bound))
            checks.append(exp.If(this=condition, true=failure))
        alias = exp.TableAlias(
            this=exp.to_identifier(_SUBQUERY), columns=[exp.to_identifier(n) for n in names]
        )
        placeholder = exp.to_identifier(_SUBQUERY)  # stands for the approved text
        # OFFSET 0 keeps PostgreSQL from merging the checks into the query's own WHERE (or
        # pushing them into it), where they could be evaluated first, on rows the query
        # filters out, and would compute each column a second time.
        fenced = exp.select("*").from_(exp.Subquery(this=placeholder, alias=alias)).offset(0)
        query = exp.select(*projections).from_(fenced.subquery(_FENCED))
        if checks:
            query = query.where(exp.Is(this=exp.Case(ifs=checks), expression=exp.Null()))
        # The last one: column names (before it) may be any text; the checks after it are ours.
        head, _, tail = query.sql(dialect="postgres").rpartition(f"({_SUBQUERY})")
        # The line break ends a `--` comment the text may end in.
        return f"{head}(\n{inner}\n){tail}"

    def cell_error(self, text: str) -> ResourceLimitExceeded | None:
        """The cell-bound error when `text` (an engine message) is the check's own failure."""
        found = self._failed.search(text)
        if found is None:
            return None
        column = bytes.fromhex(found.group(1)).decode(errors="replace")
        measured = f"PostgreSQL measured a value of {int(found.group(2)):,} bytes in the server"
        return cell_too_large(self.limits, column, engine_message=measured)


def _not_a_query(sql: str) -> bool:
    """Whether sqlglot reads `sql` as one statement that returns no query's rows (EXECUTE and
    FETCH return those of a statement prepared or declared before: they count as queries)."""
    try:
        trees = [t for t in sqlglot.parse(sql, read="postgres") if t is not None]
    except sqlglot.errors.SqlglotError:
        return False
    if len(trees) != 1:
        return False
    tree = trees[0]
    if isinstance(tree, exp.Command):
        return str(tree.this).upper() not in _ROW_COMMANDS
    if isinstance(tree, exp.Query | exp.Values):
        # SELECT INTO, a write in a CTE: a query DECLARE refuses, the read-only transaction too
        return bool(tree.args.get("into") or any(tree.find_all(exp.Insert, exp.Update, exp.Delete)))
    return True


def _without_end(sql: str) -> str:
    """`sql` up to its last token that is not a `;` (what follows is semicolons and comments)."""
    try:
        tokens = Dialect.get_or_raise("postgres").tokenize(sql)
    except sqlglot.errors.SqlglotError:
        return sql
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    return sql[: tokens[-1].end + 1] if tokens else sql


def _measure(value: exp.Column, column: Any) -> exp.Expr | None:
    """The backend's size of `value` (a column described as `column`), or None for types whose
    values are short by nature."""
    if column.internal_size is not None or column.type_code in _SMALL:
        return None
    text = value if column.type_code in _OCTETS else exp.cast(value, "text")
    return exp.Anonymous(this="octet_length", expressions=[text])
