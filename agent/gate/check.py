"""`check_sql`: the gate as one pure function from SQL text to a verdict."""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot.errors import UnsupportedError

from agent.gate import bounds
from agent.gate.characters import check_characters, tokenize
from agent.gate.columns import ColumnCheck, check_columns
from agent.gate.errors import Rejection
from agent.gate.fixes import keep_dual, quote_statement_words
from agent.gate.functions import snowflake_calls_reason
from agent.gate.limit import cap_rows
from agent.gate.looker import DIALECT as LOOKER
from agent.gate.looker import looker_reasons
from agent.gate.measures import add_ranking_measures
from agent.gate.parse import parse_all, parse_statement
from agent.gate.render import renderings
from agent.gate.rules import query_root, safety_reasons
from agent.gate.schema import GateSchema, check_tables
from agent.gate.types import type_reasons
from agent.gate.verdict import Reason, Verdict


def check_sql(sql: str, schema: GateSchema, *, row_limit: int | None = 1000) -> Verdict:
    """Accept one read-only query over the schema's tables, normalised and capped, or say why not.

    Never raises: an unexpected failure inside the gate is a rejection (`internal_error`).
    """
    try:
        return _check(sql, schema, row_limit)
    except Rejection as rejection:
        return Verdict(ok=False, sql=rejection.sql, reasons=rejection.reasons)
    except RecursionError:  # nesting the bounds let through, from a caller deep in its stack
        text = sql if isinstance(sql, str) else ""
        return Verdict(ok=False, sql=text, reasons=(bounds.too_deep_to_parse(),))
    except Exception as error:
        message = f"The gate failed on this statement ({type(error).__name__}), so it is rejected."
        text = sql if isinstance(sql, str) else ""
        return Verdict(ok=False, sql=text, reasons=(Reason("internal_error", message),))


def _check(sql: str, schema: GateSchema, row_limit: int | None) -> Verdict:
    if not isinstance(sql, str):
        raise Rejection(Reason("empty", f"Expected SQL text, got {type(sql).__name__}."))
    dialect = schema.dialect
    parsed = parse_statement(sql, dialect)
    reasons = safety_reasons(
        parsed.tree, dialect, schema.functions, source=parsed.text, types=schema.types
    )
    query = query_root(parsed.tree)
    if reasons or query is None:
        raise Rejection(*reasons, sql=parsed.text)
    if dialect == LOOKER and (rules := looker_reasons(query, schema)):
        raise Rejection(*rules, sql=parsed.text)
    keep_dual(query, dialect)
    requoted = quote_statement_words(query, dialect)
    tables = check_tables(query, schema)
    if tables.reasons:
        raise Rejection(*tables.reasons, sql=parsed.text)
    columns = ColumnCheck() if schema.empty else check_columns(query, schema, tables.entries)
    if columns.reasons:
        raise Rejection(*columns.reasons, sql=parsed.text)
    if columns.qualified is not None and (mistyped := type_reasons(columns.qualified, schema)):
        raise Rejection(*mistyped, sql=parsed.text)
    measures = add_ranking_measures(query, dialect, row_limit, columns.qualified)
    try:
        capped = row_limit is not None and cap_rows(query, row_limit)
    except Rejection as rejection:
        raise Rejection(*rejection.reasons, sql=parsed.text) from None
    try:
        written = renderings(query, dialect)
    except UnsupportedError as error:
        message = f"This statement cannot be written in {dialect}: {error}"
        raise Rejection(Reason("unsupported", message), sql=parsed.text) from None
    normalised = _stable(written, schema, row_limit, tables.tables)
    if dialect == "snowflake" and (call := snowflake_calls_reason(normalised)):
        raise Rejection(call, sql=parsed.text)
    warnings = ("schema unknown: table and column names were not checked",) if schema.empty else ()
    return Verdict(
        ok=True,
        sql=normalised,
        tables=tuple(tables.tables),
        columns=tuple(columns.columns),
        fixes=_unique(
            parsed.fixes,
            ["re-quoted identifiers"] * requoted,
            tables.fixes,
            columns.fixes,
            measures,
        ),
        row_cap_applied=capped,
        warnings=warnings,
    )


def _stable(
    written: tuple[str, ...], schema: GateSchema, row_limit: int | None, tables: list[str]
) -> str:
    """The first of `written` (pretty printed, then one line) that passes `_recheck`."""
    for text in written[:-1]:
        try:
            _recheck(text, schema, row_limit, tables)
        except Rejection:
            continue
        return text
    _recheck(written[-1], schema, row_limit, tables)
    return written[-1]


def _recheck(normalised: str, schema: GateSchema, row_limit: int | None, tables: list[str]) -> None:
    """The text that will run must read back as a statement the gate accepts unchanged.

    What runs is sqlglot's rendering of the checked tree (`renderings`), not the
    submitted text. Read back, it must pass the safety walk, name the same tables, need no
    re-quoting and no row cap, and render to itself. This catches renderings the parser (and
    so, likely, the engine) reads differently, such as `SELECT * FROM SELECT a LIMIT 10`, where
    the cap moves into an unparenthesised subquery. A construct rendered differently for the
    dialect (ILIKE as LOWER(...) LIKE LOWER(...) in SQLite) is fine: its rendering is stable.
    Its characters are checked again: what runs, not only what was sent, must be free of
    invisible ones.
    """
    dialect = schema.dialect
    tokens = tokenize(normalised, dialect)
    check_characters(normalised, tokens)
    if tokens is not None:  # `a::int::int` is written back as nested CAST(...)
        bounds.check_nesting(normalised, tokens, "The statement as it would run")
    try:
        trees = parse_all(normalised, dialect, tokens)
        query = query_root(trees[0]) if len(trees) == 1 else None
        stable = query is not None and not safety_reasons(
            trees[0], dialect, schema.functions, types=schema.types
        )
        if query is not None and stable and dialect == LOOKER:
            stable = not looker_reasons(query, schema)
        if query is not None and stable:
            keep_dual(query, dialect)
            stable = not quote_statement_words(query, dialect)
        if query is not None and stable:
            reread = check_tables(query, schema)
            capped = row_limit is not None and cap_rows(query, row_limit)
            stable = not reread.reasons and reread.tables == tables and not capped
            stable = stable and normalised in renderings(query, dialect, strict=False)
    except Rejection:
        stable = False
    if not stable:
        message = "The normalised statement does not read back as the same safe query."
        raise Rejection(Reason("unstable_normalisation", message), sql=normalised)


def _unique(*groups: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(fix for group in groups for fix in group))
