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
    r"sleep|pg_sleep\w*|benchmark|randomblob|zeroblob|get_lock|load_file|load_extension|readfile"
    r"|writefile|read_\w+|\w+_scan|sniff_csv|parquet_\w+|fsdir|zipfile|pg_read\w*|pg_ls\w*"
    r"|lo_import|lo_export|query|query_table|query_to_xml\w*|xp_\w+|sys_exec|sys_eval|dblink\w*"
    r"|external_query|postgres_\w+|mysql_\w+|set_config|getenv|current_setting|nextval|setval",
    re.IGNORECASE,
)


def harm(sql: str, dialect: str) -> str | None:
    """What looks harmful in `sql`, or None."""
    tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    for index, token in enumerate(tokens):
        if token.token_type in WRITE_TOKENS:
            return f"{token.text.upper()} keyword"
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token.token_type == TokenType.FOR and following and following.text.upper() == "SHARE":
            return "FOR SHARE"
        previous = tokens[index - 1] if index else None
        if following is None or following.token_type != TokenType.L_PAREN:
            continue
        if previous is not None and previous.token_type in AFTER_A_VALUE:
            continue  # `AS t(a, b)` names columns; `x GLOB (...)` is an operator
        if DANGEROUS_CALL.fullmatch(token.text) and token.token_type != TokenType.STRING:
            return f"call to {token.text}()"
        if dialect == "duckdb" and token.text.lower() == "glob":
            return "call to glob()"
    return None


#: Tokens after which a name followed by `(` is not a function call.
AFTER_A_VALUE = frozenset(
    {
        TokenType.ALIAS,
        TokenType.VAR,
        TokenType.IDENTIFIER,
        TokenType.STRING,
        TokenType.NUMBER,
        TokenType.R_PAREN,
        TokenType.R_BRACKET,
    }
)
