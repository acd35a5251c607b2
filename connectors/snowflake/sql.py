"""What a Snowflake statement may be, checked with sqlglot's `snowflake` dialect before it is sent.

Snowflake has no read-only session: a role with more grants than it should have could write, and
a query can reach past the tables (a stage with `@stage`, `COPY`/`PUT`/`GET`, a stored procedure
with `CALL`, `EXECUTE IMMEDIATE`, `SYSTEM$` functions, context functions that read the session or
the account, Cortex functions that call a model, table functions over query history or files,
user-defined and external functions that call any endpoint). So the connector refuses, before
anything reaches Snowflake, every statement that is not one query reading only tables of the
listed schemas through pure built-in functions. The agent's gate checks the same things first;
this is the connector's own last line, as `bigquery_sql` is BigQuery's.

Every function call is checked by the name Snowflake will run it under, whether sqlglot models
it (`exp.AIClassify`, `exp.CurrentRole`, `exp.If`) or leaves it anonymous: the name as written
(the parser keeps where each call's name was), else the name sqlglot writes for it in Snowflake.
A call is allowed only when that name is on the list of pure built-ins, or, standing where a table
does, on the short list of table functions. What sqlglot models as a function but Snowflake writes
as an operator (`CASE`, `x::INT`, `x:path`, `EXISTS (...)`, `[1, 2]`) has no name of its own and is
not a call.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.snowflake import Snowflake
from sqlglot.errors import ErrorLevel, SqlglotError
from sqlglot.tokens import TokenType

from connectors.base import PermissionDenied, QueryFailed
from connectors.read_only import Engine, one_read_only_query, shorten
from connectors.snowflake.functions import PURE, TABLE_FUNCTIONS

DIALECT = "snowflake"

#: Typed table functions that only turn a value into rows (FLATTEN is `Explode` in sqlglot).
_ROW_FUNCTIONS: tuple[type[exp.Expr], ...] = (exp.Explode, exp.Unnest, exp.SplitToTable)
#: Operators sqlglot models as functions, known without writing them out (a long `AND` chain
#: would be written once per link): `a AND b`, `CASE ...`, `EXISTS (subquery)` call nothing.
_OPERATORS: tuple[type[exp.Expr], ...] = (exp.Connector, exp.Case, exp.Exists)
#: Nodes whose name the parser places and which may stand before brackets without calling
#: anything: a plain name (`AS u(x)`, `WITH t(a) AS ...`) and the `TABLE(...)` around a table
#: function (the function inside is checked).
_NOT_CALLS: tuple[type[exp.Expr], ...] = (exp.Identifier, exp.TableFromRows)
#: Names sqlglot parses with a parser of their own, which keeps no position for the name (so the
#: call's node cannot say how it was written: `ARG_MAX(a, b)` and `STRING_AGG(x)` come out as
#: `MAX_BY` and `LISTAGG`): such a name followed by `(` is checked in the text itself.
_PARSED_APART = frozenset(Snowflake.Parser.FUNCTION_PARSERS) | {"IF"}
#: The name at the start of sqlglot's Snowflake text for a node: `NAME(...)` or a bare `NAME`.
_LEADING_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_$]*)\s*(?:\(|$)")
_HINT = (
    "Send one read-only SELECT over the listed schemas' tables, with Snowflake's pure built-in "
    "functions only: no stage (@...), no table function but FLATTEN or SPLIT_TO_TABLE, no "
    "SYSTEM$, context (CURRENT_ROLE(), CURRENT_USER()...), Cortex (AI_...) or user-defined "
    "function."
)


def parse(sql: str) -> exp.Query:
    """Exactly one Snowflake query that reads only; anything else fails closed."""
    tree = one_read_only_query(sql, SNOWFLAKE)
    check_calls(tree, sql)
    return tree


def outside_reach(node: exp.Expr) -> str:
    """What `node` reaches past plain tables, written out, else '' (function calls are checked
    by name in `check_calls`)."""
    if isinstance(node, exp.Var) and node.name.startswith("@"):
        return shorten(node.name)  # a stage: `FROM @stage`, `DIRECTORY(@stage)`
    if isinstance(node, exp.Table) and not isinstance(node.this, (exp.Identifier, *_ROW_FUNCTIONS)):
        return shorten(node.sql(DIALECT))  # IDENTIFIER('t'), DIRECTORY(...), a function
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
        return shorten(node.sql(DIALECT))  # db.schema.fn(x): a user-defined function
    return ""


def check_calls(tree: exp.Expr, source: str = "") -> None:
    """Refuse every function call in `tree` (parsed from `source`) whose Snowflake name is not
    on the list of pure built-ins, or, where a table stands, on the list of table functions."""
    for written in _parsed_apart(source):
        if written.lower() not in PURE:
            raise _unlisted(written)
    for node in tree.walk():
        if not isinstance(node, exp.Func) and _named_call(node, source) is None:
            continue  # not a call: `BIT_AND(x, y)` is, though sqlglot reads it as an operator
        name = call_name(node, source)
        if _in_from(node):
            if name is None or name.lower() not in TABLE_FUNCTIONS:
                allowed = ", ".join(sorted(n.upper() for n in TABLE_FUNCTIONS))
                raise PermissionDenied(
                    f"This query reads from {name or node.key.upper()}(), which is not a table "
                    f"function the bot may read from (only {allowed}, which turn a value into "
                    "rows; others read query history or stages, or make rows out of nothing).",
                    hint=_HINT,
                )
        elif name is not None and name.lower() not in PURE:
            raise _unlisted(name)


def call_name(node: exp.Expr, source: str = "") -> str | None:
    """The name Snowflake runs the call `node` under, None for an operator sqlglot models as a
    function (`CASE`, `x::INT`, `a AND b`, `EXISTS (...)`, an array literal).

    As written in `source` when the parser kept where the name was (every call it reads from its
    table of functions, typed or anonymous; a quoted name keeps its quotes, so it is never on a
    list), else as sqlglot writes the node in Snowflake (`CAST`, `DATE_PART` for `EXTRACT`,
    `CURRENT_USER` for a bare `CURRENT_USER`). A node that cannot be written is named by its
    key, which is on no list.
    """
    if (written := _named_call(node, source)) is not None:
        return written  # `XOR(a, b)` too, though sqlglot reads it as the operator
    if isinstance(node, _OPERATORS) or isinstance(node.parent, exp.Case):
        return None  # an operator, or a `WHEN ... THEN ...` of a CASE (an exp.If to sqlglot)
    if isinstance(node, exp.Anonymous):
        return node.name
    if not isinstance(node, exp.Func):
        return None
    try:
        text = _written(node)
        # `a AND b` (sqlglot's And is a function) starts with its operand's text, whose name
        # is not its own: only a name not written by an operand is the node's.
        operands = [_written(child) for child in node.iter_expressions()]
    except SqlglotError:
        return node.key
    match = _LEADING_NAME.match(text)
    if match is None or any(_leads(text, operand) for operand in operands if operand):
        return None
    return match.group(1)


def _named_call(node: exp.Expr, source: str) -> str | None:
    """The name `node` was called by in `source`: the parser places a call's name (`meta`:
    `start` and `end`), followed by its brackets."""
    meta = node._meta  # the `meta` property would give every node an empty dict
    if not source or not meta or isinstance(node, _NOT_CALLS):
        return None
    start, end = meta.get("start"), meta.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return None
    return source[start : end + 1] if source[end + 1 :].lstrip().startswith("(") else None


def _written(node: exp.Expr) -> str:
    return node.sql(DIALECT, unsupported_level=ErrorLevel.IGNORE).strip()


def _leads(text: str, operand: str) -> bool:
    """Whether `text` opens with all of `operand` that is not itself called (`x` in `x(...)`)."""
    return text.startswith(operand) and not text[len(operand) :].lstrip().startswith("(")


def _parsed_apart(source: str) -> Iterator[str]:
    """Names in `source` that sqlglot parses apart (`_PARSED_APART`) and that are called."""
    try:
        tokens = sqlglot.tokenize(source, read=DIALECT)
    except SqlglotError:
        return  # it parsed, so this does not happen; the tree is checked anyway
    for token, after in itertools.pairwise(tokens):
        if after.token_type == TokenType.L_PAREN and token.text.upper() in _PARSED_APART:
            quoted = token.token_type == TokenType.IDENTIFIER
            yield f'"{token.text}"' if quoted else token.text


def _unlisted(name: str) -> PermissionDenied:
    return PermissionDenied(
        f"This query calls {name}(), which is not one of Snowflake's pure built-in functions "
        "the bot may use (a function not on that list may read the session or the account, "
        "reach a stage or a model, or be a user-defined or external function).",
        hint=_HINT,
    )


def _in_from(node: exp.Expr) -> bool:
    """Whether `node` stands where a table does (FROM, JOIN, LATERAL, TABLE(...))."""
    parent = node.parent
    if isinstance(parent, exp.Table):
        return node.arg_key == "this"
    return node.arg_key == "this" and isinstance(
        parent, (exp.From, exp.Join, exp.Lateral, exp.TableFromRows)
    )


SNOWFLAKE = Engine(
    name="Snowflake",
    dialect=DIALECT,
    language="Snowflake SQL",
    outside=outside_reach,
    reaches="reaches past the listed tables (a stage, a table function, or a user-defined "
    "or external function)",
    hint=_HINT,
)


def ident(part: exp.Expr | None) -> str:
    """An identifier as Snowflake resolves it: unquoted upper-cased, quoted exactly."""
    if part is None:
        return ""
    if isinstance(part, exp.Identifier):
        return part.name if part.quoted else part.name.upper()
    return part.name.upper()


@dataclass(frozen=True)
class Scope:
    """The database and schemas the bot may read; the first schema is the session's own."""

    database: str
    schemas: tuple[str, ...]

    def resolve(self, table: exp.Table) -> tuple[str, str, str]:
        """`(database, schema, table)` for a reference, as the session resolves it."""
        database = ident(table.args.get("catalog")) or self.database
        schema = ident(table.args.get("db")) or self.schemas[0]
        return database, schema, ident(table.this)


def check_schemas(tree: exp.Expr, scope: Scope) -> None:
    """Refuse a statement that names a table outside the listed schemas of the database
    (INFORMATION_SCHEMA, the shared SNOWFLAKE database, another database or schema).
    A bare name is the session's schema (or a CTE), which is listed."""
    for table in tree.find_all(exp.Table):
        if not table.args.get("db"):
            continue
        database, schema, name = scope.resolve(table)
        if database != scope.database or schema not in scope.schemas:
            listed = ", ".join(f"{scope.database}.{s}" for s in scope.schemas)
            raise PermissionDenied(
                f"This query reads {database}.{schema}.{name}, outside the schemas this bot "
                f"may query ({listed}).",
                hint=f"Use only tables in {listed}.",
            )


def check_tables(tree: exp.Expr, scope: Scope, known: frozenset[tuple[str, str, str]]) -> None:
    """Refuse a statement that reads a table the catalog does not list (a CTE's name aside):
    the listed schemas' tables and views are all a run may name, so what the engine would
    resolve to anything else (fakesnow's `sqlite_master`, a table the role was granted since
    the catalog was read) is refused before it is sent."""
    ctes = {ident(cte.args["alias"].this) for cte in tree.find_all(exp.CTE) if cte.alias}
    for table in tree.find_all(exp.Table):
        if not table.args.get("db") and ident(table.this) in ctes:
            continue
        resolved = scope.resolve(table)
        if resolved not in known:
            raise QueryFailed(
                f"There is no table {'.'.join(resolved)} among the tables this bot may query.",
                hint="Use only the listed tables.",
            )
