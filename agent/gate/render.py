"""How the gate writes an accepted statement: the text that is shown, hashed for approval and run.

One text serves all three, so what a person approves is byte for byte what runs. It is sqlglot's
pretty printer in the target dialect (one clause a line, nested parts indented), so a WITH query
reads as its parts rather than as one long line. Pretty printing changes only whitespace between
tokens (sqlglot keeps line breaks inside string literals as written); that is checked here on
every statement: when the pretty text does not tokenize exactly like the one-line rendering,
only the one-line rendering is offered. The gate also falls back to one line when the pretty
text does not read back as itself (`check._recheck`).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ErrorLevel

from agent.gate.characters import tokenize
from agent.gate.mariadb import writer


def renderings(query: exp.Expr, dialect: str, *, strict: bool = True) -> tuple[str, ...]:
    """The texts `query` may be written as in `dialect` (read as `dialect`, written with its
    `writer`), preferred first: pretty printed, then on one line (only one when they are equal
    or differ in more than whitespace).

    `strict` raises sqlglot's `UnsupportedError` for a construct the dialect cannot express.
    """
    level = ErrorLevel.RAISE if strict else ErrorLevel.WARN
    written = writer(dialect)
    one_line = query.sql(dialect=written, comments=False, unsupported_level=level)
    pretty = query.sql(dialect=written, comments=False, pretty=True, unsupported_level=level)
    if pretty == one_line or not same_tokens(pretty, one_line, dialect):
        return (one_line,)
    return (pretty, one_line)


def same_tokens(first: str, second: str, dialect: str) -> bool:
    """Whether two texts are the same tokens in `dialect` (so differ at most in whitespace)."""
    if first == second:
        return True
    one, two = tokenize(first, dialect), tokenize(second, dialect)
    if one is None or two is None or len(one) != len(two):
        return False
    pairs = zip(one, two, strict=True)
    return all(a.token_type == b.token_type and a.text == b.text for a, b in pairs)
