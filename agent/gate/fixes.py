"""Cheap deterministic fixes: text steps applied before parsing, and two tree steps.

Transpiling from a neighbouring dialect lives in `parse.py` (it needs the parser); re-quoting
identifiers whose case does not match the schema lives in `schema.py` (it needs the schema).
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

#: A fence, its info string (one word ending the line) dropped; an unclosed one runs to the end.
_FENCE = re.compile(r"```(?:[\w+-]*[^\S\n]*\n)?(.*?)(?:```|\Z)", re.DOTALL)
#: A language word that opens a fence written on one line (```sql SELECT 1```).
_INLINE_TAG = re.compile(r"^(?:sql|duckdb|postgres(?:ql)?|mysql|mariadb|sqlite|bigquery)\s+", re.I)


def strip_fences(text: str) -> tuple[str, str | None]:
    """Keep only what markdown code fences enclose (models wrap SQL in ```sql ... ```).

    Several fenced blocks are joined as several statements, which the gate then rejects rather
    than guess which one was meant. An unclosed fence runs to the end of the text.
    """
    if "```" not in text:
        return text, None
    blocks = [_INLINE_TAG.sub("", m.group(1).strip()) for m in _FENCE.finditer(text)]
    return ";\n".join(b for b in blocks if b), "stripped markdown fence"


def strip_trailing_semicolons(text: str) -> tuple[str, str | None]:
    """Drop trailing semicolons: one statement needs no terminator, and drivers reject some."""
    stripped = text.rstrip()
    if not stripped.endswith(";"):
        return text, None
    while stripped.endswith(";"):
        stripped = stripped[:-1].rstrip()
    return stripped, "removed trailing semicolon"


def clean(text: str) -> tuple[str, tuple[str, ...]]:
    """Apply every text fix in order; return the text and what was done."""
    fixes: list[str] = []
    for step in (strip_fences, strip_trailing_semicolons):
        text, fix = step(text)
        if fix:
            fixes.append(fix)
    return text.strip(), tuple(fixes)


def keep_dual(query: exp.Expr, dialect: str) -> None:
    """Keep MySQL's `FROM dual` placeholder unquoted (changed in place).

    sqlglot writes it as `` `dual` ``, which MySQL reads as a table that does not exist. As a
    keyword it is also no table reference for the schema check.
    """
    if dialect != "mysql":
        return
    for table in query.find_all(exp.Table):
        ident = table.this
        plain = isinstance(ident, exp.Identifier) and not ident.quoted and not table.db
        if plain and ident.name.lower() == "dual":
            table.set("this", exp.Var(this=ident.name))


#: Token types of statement keywords: an identifier the dialect's tokenizer would read as one is
#: quoted, so that what runs cannot be misread as a statement, by the engine or by a person
#: approving it (`SELECT update FROM t`).
STATEMENT_TOKENS = frozenset(
    {
        TokenType.ALTER,
        TokenType.ATTACH,
        TokenType.COMMAND,
        TokenType.COPY,
        TokenType.CREATE,
        TokenType.DELETE,
        TokenType.DETACH,
        TokenType.DROP,
        TokenType.EXECUTE,
        TokenType.FROM,
        TokenType.GRANT,
        TokenType.INSERT,
        TokenType.INSTALL,
        TokenType.INTO,
        TokenType.LOAD,
        TokenType.LOCK,
        TokenType.MERGE,
        TokenType.PRAGMA,
        TokenType.REVOKE,
        TokenType.SELECT,
        TokenType.SET,
        TokenType.TRUNCATE,
        TokenType.UPDATE,
        TokenType.USE,
        TokenType.WHERE,
        TokenType.WITH,
    }
)


def quote_statement_words(query: exp.Expr, dialect: str) -> bool:
    """Quote identifiers spelled like statement words (changed in place); True when any was.

    The name is first normalised as the engine would read it unquoted, so quoting keeps its
    meaning (Postgres reads `UPDATE` as `update`, and so as `"update"`).
    """
    normaliser = Dialect.get_or_raise(dialect)
    keywords = normaliser.tokenizer_class.KEYWORDS
    changed = False
    for ident in list(query.find_all(exp.Identifier)):
        if ident.quoted or keywords.get(ident.name.upper()) not in STATEMENT_TOKENS:
            continue
        if isinstance(ident.parent, exp.Func):
            continue  # a function's own name (`REPLACE(...)`)
        normaliser.normalize_identifier(ident)
        ident.set("quoted", True)
        changed = True
    return changed
