"""A second opinion on accepted SQL, independent of the gate's own rules.

It reads the normalised statement token by token (strings and quoted identifiers are single
tokens, so their contents cannot trip it) and flags statement keywords that write or reach
outside, locking clauses, stacked statements, and calls to functions known to touch files, the
network, other databases, settings or time.
"""

from __future__ import annotations

import re

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

WRITE_TOKENS = frozenset(
    {
        TokenType.SEMICOLON,
        TokenType.ALTER,
        TokenType.ATTACH,
        TokenType.COMMAND,
        TokenType.COPY,
        TokenType.CREATE,
        TokenType.DELETE,
        TokenType.DETACH,
        TokenType.DROP,
        TokenType.EXECUTE,
        TokenType.GRANT,
        TokenType.INSERT,
        TokenType.INSTALL,
        TokenType.INTO,
        TokenType.LOAD,
        TokenType.LOCK,
        TokenType.MERGE,
        TokenType.PRAGMA,
        TokenType.REVOKE,
        TokenType.SET,
        TokenType.TRUNCATE,
        TokenType.UPDATE,
        TokenType.USE,
    }
)
DANGEROUS_CALL = re.compile(
    r"(sleep|pg_sleep\w*|benchmark|load_file|load_extension|readfile|writefile|read_\w+|\w+_scan"
    r"|query|query_table|dblink\w*|lo_\w+|pg_read\w*|pg_ls\w*|external_query|randomblob|zeroblob"
    r"|nextval|setval|getenv|current_setting|set_config|get_lock|sys_\w+|xp_\w+|\w*to_xml\w*"
    r"|postgres_\w+|mysql_\w+|sqlite_\w+|fsdir|zipfile|edit|sniff_csv|parquet_\w+)",
    re.IGNORECASE,
)


def harm(sql: str, dialect: str) -> str | None:
    """What looks harmful in `sql`, or None."""
    tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    for index, token in enumerate(tokens):
        if token.token_type in WRITE_TOKENS:
            return f"{token.text.upper()} keyword"
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        calls = following is not None and following.token_type == TokenType.L_PAREN
        if token.token_type == TokenType.FOR and following and following.text.upper() == "SHARE":
            return "FOR SHARE"
        if calls and token.token_type != TokenType.STRING:
            name = token.text
            if DANGEROUS_CALL.fullmatch(name) or (dialect == "duckdb" and name.lower() == "glob"):
                return f"call to {name}()"
    return None
