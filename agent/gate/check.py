"""`check_sql`: the gate as one pure function from SQL text to a verdict."""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp
from sqlglot.errors import ErrorLevel, UnsupportedError

from agent.gate.errors import Rejection
from agent.gate.fixes import keep_dual, quote_statement_words
from agent.gate.limit import cap_rows
from agent.gate.parse import parse_all, parse_statement
from agent.gate.rules import query_root, safety_reasons
from agent.gate.schema import ColumnCheck, GateSchema, check_columns, check_tables
from agent.gate.verdict import Reason, Verdict


def check_sql(sql: str, schema: GateSchema, *, row_limit: int | None = 1000) -> Verdict:
    """Accept one read-only query over the schema's tables, normalised and capped, or say why not.

    Never raises: an unexpected failure inside the gate is a rejection (`internal_error`).
    """
    try:
        return _check(sql, schema, row_limit)
    except Rejection as rejection:
        return Verdict(ok=False, sql=rejection.sql, reasons=rejection.reasons)
    except Exception as error:
        message = f"The gate failed on this statement ({type(error).__name__}), so it is rejected."
        text = sql if isinstance(sql, str) else ""
        return Verdict(ok=False, sql=text, reasons=(Reason("internal_error", message),))


def _check(sql: str, schema: GateSchema, row_limit: int | None) -> Verdict:
    if not isinstance(sql, str):
        raise Rejection(Reason("empty", f"Expected SQL text, got {type(sql).__name__}."))
    dialect = schema.dialect
    parsed = parse_statement(sql, dialect)
    reasons = safety_reasons(parsed.tree, dialect)
    query = query_root(parsed.tree)
    if reasons or query is None:
        raise Rejection(*reasons, sql=parsed.text)
    keep_dual(query, dialect)
    requoted = quote_statement_words(query, dialect)
    tables = check_tables(query, schema)
    if tables.reasons:
        raise Rejection(*tables.reasons, sql=parsed.text)
    columns = ColumnCheck() if schema.empty else check_columns(query, schema, tables.entries)
    if columns.reasons:
        raise Rejection(*columns.reasons, sql=parsed.text)
    try:
        capped = row_limit is not None and cap_rows(query, row_limit)
    except Rejection as rejection:
        raise Rejection(*rejection.reasons, sql=parsed.text) from None
    try:
        normalised = query.sql(dialect=dialect, comments=False, unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as error:
        message = f"This statement cannot be written in {dialect}: {error}"
        raise Rejection(Reason("unsupported", message), sql=parsed.text) from None
    _recheck(normalised, query, dialect)
    warnings = ("schema unknown: table and column names were not checked",) if schema.empty else ()
    return Verdict(
        ok=True,
        sql=normalised,
        tables=tuple(tables.tables),
        columns=tuple(columns.columns),
        fixes=_unique(
            parsed.fixes, ["re-quoted identifiers"] * requoted, tables.fixes, columns.fixes
        ),
        row_cap_applied=capped,
        warnings=warnings,
    )


def _recheck(normalised: str, checked: exp.Expr, dialect: str) -> None:
    """The text that will run must read back as the very tree that was checked.

    What runs is sqlglot's rendering of the checked tree, not the submitted text; this guards
    against a rendering that the parser (and so, likely, the engine) reads differently, such as
    `SELECT * FROM SELECT a LIMIT 10`, where the cap moves into an unparenthesised subquery.
    """
    try:
        trees = parse_all(normalised, dialect)
    except Rejection:
        trees = []
    stable = len(trees) == 1 and not safety_reasons(trees[0], dialect)
    if stable:
        keep_dual(trees[0], dialect)
        stable = trees[0] == checked
    if not stable:
        message = "The normalised statement does not read back as the same safe query."
        raise Rejection(Reason("unstable_normalisation", message), sql=normalised)


def _unique(*groups: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(fix for group in groups for fix in group))
