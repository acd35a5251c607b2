"""Comparing SQL where its layout is not the point.

The gate writes accepted SQL with sqlglot's pretty printer (one clause a line). Tests that check
*what* a statement says compare its tokens in the dialect, so `SELECT a FROM t LIMIT 10` and
`SELECT\\n  a\\nFROM t\\nLIMIT 10` are the same, while any change of a word, a name, a quote or
a literal is not. Written with sqlglot's tokenizer directly (not the gate's own comparison).
"""

from __future__ import annotations

import sqlglot

import agent.gate  # noqa: F401  (registers the gate's dialects: looker, mariadb)


def tokens(sql: str, dialect: str) -> list[tuple[str, str]]:
    """(token type, text) of each token of `sql` as `dialect` reads it."""
    return [(t.token_type.name, t.text) for t in sqlglot.tokenize(sql, read=dialect)]


def same_sql(actual: str, expected: str, dialect: str) -> bool:
    """Whether two statements are the same tokens in `dialect` (they differ in whitespace only)."""
    return tokens(actual, dialect) == tokens(expected, dialect)


def one_line(sql: str) -> str:
    """`sql` with each run of whitespace outside quotes as one space and none inside brackets:
    the gate's pretty text as the one-line form tests and fixtures write (for messages and
    `startswith` checks; compare with `same_sql` where a quoted text may hold whitespace)."""
    out: list[str] = []
    quote = ""
    pending_space = False
    for ch in sql:
        if quote:
            out.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch.isspace():
            pending_space = bool(out)
            continue
        if pending_space and out[-1] != "(" and ch != ")":
            out.append(" ")
        pending_space = False
        out.append(ch)
        if ch in "'\"`":
            quote = ch
    return "".join(out)
