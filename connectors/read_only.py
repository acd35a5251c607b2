"""One read-only query, checked with sqlglot before it is sent, for the connectors that must
refuse writes themselves (BigQuery, Snowflake: neither has a read-only session).

Each engine says what else reaches past its tables (`Engine.outside`: a table function, a stage,
a model or a user-defined function); the parsing, the one-statement rule and the walk over the
whole tree are the same for both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from connectors.base import PermissionDenied, QueryFailed

#: sqlglot keeps statements that write or change state (DML, DDL, SET, scripting, opaque
#: commands such as CALL and EXECUTE IMMEDIATE) in these modules; none may appear anywhere
#: inside a query.
_STATEMENT_MODULES = ("sqlglot.expressions.dml", "sqlglot.expressions.ddl")
#: Query clauses that write (`SELECT ... INTO`), lock, or change access.
_WRITING_CLAUSES: tuple[type[exp.Expr], ...] = (exp.Into, exp.Lock, exp.Grant, exp.Revoke)


def writes(node: exp.Expr) -> bool:
    """Whether `node` (one node of a statement's tree, not its children) writes or changes state."""
    return type(node).__module__ in _STATEMENT_MODULES or isinstance(node, _WRITING_CLAUSES)


@dataclass(frozen=True)
class Engine:
    """What one engine's read-only check needs to know and to say."""

    name: str  # "BigQuery"
    dialect: str  # sqlglot's dialect
    language: str  # what a person should write: "GoogleSQL (the BigQuery dialect)"
    #: What a node reaches past plain tables and built-in functions, written out, else "".
    outside: Callable[[exp.Expr], str]
    #: Why such a node is refused, after "This query uses X, which ...".
    reaches: str
    hint: str  # what may be sent instead


def one_read_only_query(sql: str, engine: Engine) -> exp.Query:
    """Exactly one query in `engine`'s dialect that neither writes nor reaches past the tables
    anywhere in its tree; anything else fails closed, before it is sent.

    A query root is not enough: `SELECT * INTO t FROM ...` writes a table, and a query can call
    out through a function in its FROM clause.
    """
    try:
        statements = [s for s in sqlglot.parse(sql, read=engine.dialect) if s is not None]
    except SqlglotError as exc:
        raise QueryFailed(
            f"The SQL does not parse as {engine.name} SQL: {str(exc).splitlines()[0]}",
            hint=f"Write {engine.language}.",
            engine_message=str(exc),
        ) from exc
    if len(statements) != 1:
        raise QueryFailed(
            f"Expected one statement, got {len(statements)}.", hint="Send exactly one SELECT."
        )
    statement = statements[0]
    if not isinstance(statement, exp.Query):
        raise PermissionDenied(
            f"Only a query may run on {engine.name}, not {statement.key.upper()}.",
            hint="Send one read-only SELECT.",
        )
    for node in statement.walk():
        if writes(node):
            raise PermissionDenied(
                f"This query contains {node.key.upper()}, which writes or changes the "
                f"warehouse; only reads may run on {engine.name}.",
                hint=engine.hint,
            )
        if reached := engine.outside(node):
            raise PermissionDenied(
                f"This query uses {reached}, which {engine.reaches}.", hint=engine.hint
            )
    return statement


def shorten(text: str, width: int = 60) -> str:
    """`text` on one line, cut to `width` characters for a message."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
