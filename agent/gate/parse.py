"""Text to exactly one sqlglot tree, failing closed.

A parse error is a rejection carrying the parser's message and position. When the text does not
parse in the target dialect but does in a neighbouring one (a model writing `::int` for MySQL,
backticks for DuckDB), it is transpiled and parsed again in the target: every later check sees a
target-dialect tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token

from agent.gate import bounds
from agent.gate.characters import check_characters, tokenize
from agent.gate.errors import Rejection
from agent.gate.fixes import clean
from agent.gate.source import offset
from agent.gate.verdict import Reason

#: Where a statement that fails to parse is tried next, in order.
NEIGHBOURS: dict[str, tuple[str, ...]] = {
    "duckdb": ("postgres", "mysql"),
    "postgres": ("duckdb", "mysql"),
    "mysql": ("postgres", "sqlite"),
    "sqlite": ("mysql", "postgres"),
    "bigquery": ("duckdb", "postgres"),
    "snowflake": ("duckdb", "postgres"),
}

#: MySQL runs the body of `/*! ... */` (MariaDB also `/*M! ... */`); sqlglot drops it as a comment.
EXECUTABLE_COMMENT = re.compile(r"/\*M?!")

_TOKEN_REPR = re.compile(r"<Token token_type: [^,]*, text: (.*?), line: \d+, col: \d+.*?>", re.S)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Parsed:
    """One statement's tree, the text it was parsed from, and the fixes that text needed."""

    tree: exp.Expr
    text: str
    fixes: tuple[str, ...]


def parse_statement(sql: str, dialect: str) -> Parsed:
    """Clean `sql` and parse it as exactly one statement of `dialect`; raise `Rejection`.

    Before parsing: the size bound, characters engines read differently, the nesting bound.
    After: the tree's bounds (`bounds.py`), so no later check works on an unbounded tree.
    """
    text, fixes = clean(sql)
    if not text:
        raise Rejection(Reason("empty", "There is no SQL statement to check."), sql=sql)
    bounds.check_size(text)
    tokens = tokenize(text, dialect)
    check_characters(text, tokens)
    if tokens is not None:
        bounds.check_nesting(text, tokens)
    if dialect == "mysql" and EXECUTABLE_COMMENT.search(text):
        message = "MySQL executes the body of /*! ... */ comments; remove them."
        raise Rejection(Reason("executable_comment", message), sql=text)
    try:
        statements = parse_all(text, dialect, tokens)
    except Rejection as failure:
        transpiled = _from_neighbour(text, dialect)
        if transpiled is None:
            raise Rejection(*failure.reasons, sql=text) from None
        text, statements, neighbour = transpiled
        fixes = (*fixes, f"transpiled from {neighbour}")
    if not statements:
        raise Rejection(Reason("empty", "There is no SQL statement to check."), sql=text)
    if len(statements) > 1:
        message = f"Send exactly one statement; this text holds {len(statements)}."
        raise Rejection(Reason("multiple_statements", message), sql=text)
    bounds.check_tree(statements[0], text)
    return Parsed(statements[0], text, fixes)


def parse_all(text: str, dialect: str, tokens: list[Token] | None = None) -> list[exp.Expr]:
    """Every non-empty statement in `text` (from its `tokens` in `dialect` when given); any
    parser failure becomes a `parse_error` rejection."""
    try:
        if tokens is None:
            return [s for s in sqlglot.parse(text, read=dialect) if s is not None]
        parser = Dialect.get_or_raise(dialect).parser()
        return [s for s in parser.parse(tokens, text) if s is not None]
    except ParseError as error:
        raise Rejection(_parse_reason(error, text)) from None
    except TokenError as error:
        message = f"Syntax error: {ANSI.sub('', str(error))} (unterminated string or comment?)"
        raise Rejection(Reason("parse_error", message)) from None
    except RecursionError:
        raise Rejection(bounds.too_deep_to_parse()) from None
    except Exception as error:  # a parser bug on odd input is still a failure to parse
        message = f"The parser failed on this text ({type(error).__name__})."
        raise Rejection(Reason("parse_error", message)) from None


def _parse_reason(error: ParseError, text: str) -> Reason:
    """sqlglot's first complaint, placed in `text` (where the token it stopped at starts)."""
    if not error.errors:
        return Reason("parse_error", f"Syntax error: {ANSI.sub('', str(error)).splitlines()[0]}")
    first = error.errors[0]
    description = _TOKEN_REPR.sub(r"'\1'", str(first.get("description") or "invalid syntax"))
    near = ANSI.sub("", str(first.get("highlight") or "")).strip()
    line, col = first.get("line"), first.get("col")
    if isinstance(col, int) and near and "\n" not in near:
        col = max(1, col - len(near) + 1)  # sqlglot reports where the token ends
    where = f" at line {line}, column {col}" if line else ""
    message = f"Syntax error{where}: {description}" + (f" (near '{near[:40]}')" if near else "")
    span = None
    if isinstance(line, int) and isinstance(col, int):
        start = offset(text, line, col)
        span = (start, start + len(near) if near and "\n" not in near else start + 1)
    return Reason("parse_error", message, span=span)


def _from_neighbour(text: str, dialect: str) -> tuple[str, list[exp.Expr], str] | None:
    """Text, statements and source dialect when `text` parses in a neighbour and transpiles."""
    for neighbour in NEIGHBOURS.get(dialect, ()):
        try:
            trees = parse_all(text, neighbour)
            if len(trees) != 1:
                continue
            transpiled = trees[0].sql(
                dialect=dialect, unsupported_level=ErrorLevel.RAISE, comments=False
            )
            return transpiled, parse_all(transpiled, dialect), neighbour
        except Exception:  # an unsupported construct or a failed re-parse: try the next one
            continue
    return None
