"""Where a node of a checked statement was written, so a refusal can quote its author's text.

sqlglot writes a node back in its own spelling (`SELEC * FRM orders`, read as an expression
with an alias, comes back as `SELEC * FRM AS orders`), so a message quoting `node.sql()` can
show text nobody typed. The parser does keep where the tokens of names, literals and function
calls were (`meta`: `start` and `end` offsets, `line` and `col`), and these helpers turn that
into spans of the checked text: the reasons carry them (`Reason.span`), and messages quote the
text they cover.
"""

from __future__ import annotations

import re

from sqlglot import exp

#: A character span `[start, end)` of the text a statement was parsed from.
Span = tuple[int, int]

_EMPTY_CALL = re.compile(r"\s*\(\s*\)")
_CLOSING = re.compile(r"\s*\)")


def node_span(node: exp.Expr, source: str = "") -> Span | None:
    """The span of the tokens under `node` that the parser placed, None when none were.

    A call's brackets carry no position, so with `source` a span that opens more brackets than
    it closes is extended over the brackets that follow it (`pg_sleep(1` becomes `pg_sleep(1)`),
    and a call without arguments over its empty brackets (`version` becomes `version()`).
    """
    starts: list[int] = []
    ends: list[int] = []
    for child in node.walk():
        meta = child._meta  # the `meta` property would give every node an empty dict
        if meta and isinstance(meta.get("start"), int) and isinstance(meta.get("end"), int):
            starts.append(meta["start"])
            ends.append(meta["end"] + 1)  # sqlglot's `end` is the token's last character
    if not starts:
        return None
    start, end = min(starts), max(ends)
    if not source:
        return start, end
    if isinstance(node, exp.Func) and "(" not in source[start:end]:
        empty = _EMPTY_CALL.match(source, end)  # `version()`: only the name was placed
        end = empty.end() if empty else end
    open_brackets = source.count("(", start, end) - source.count(")", start, end)
    while open_brackets > 0 and (closing := _CLOSING.match(source, end)):
        end, open_brackets = closing.end(), open_brackets - 1
    return start, end


def token_span(tree: exp.Expr, line: int, col: int) -> Span | None:
    """The span of the name sqlglot reported at `line`, `col` (where the name ends, as its
    optimizer errors say), None when no name of `tree` was read there."""
    for identifier in tree.find_all(exp.Identifier):
        meta = identifier._meta
        if meta and meta.get("line") == line and meta.get("col") == col:
            return node_span(identifier)
    return None


def offset(text: str, line: int, col: int) -> int:
    """The offset in `text` of 1-based `line` and `col` (clamped to the text)."""
    start = 0
    for _ in range(line - 1):
        found = text.find("\n", start)
        if found < 0:
            return len(text)
        start = found + 1
    return min(start + max(col, 1) - 1, len(text))


def position(text: str, at: int) -> tuple[int, int]:
    """The 1-based line and column of offset `at` in `text`."""
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def written(node: exp.Expr, source: str, dialect: str, width: int = 60) -> str:
    """`node` as its author wrote it in `source`, on one line and shortened to `width`; as
    sqlglot writes it only when the parser kept no position for it (or there is no source)."""
    span = node_span(node, source) if source else None
    text = source[span[0] : span[1]] if span else node.sql(dialect)
    return shorten(text, width)


def shorten(text: str, width: int = 60) -> str:
    """`text` on one line (whitespace runs as one space), cut to `width` with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
