"""Refuse DuckDB statements that build huge values from a few characters of SQL.

DuckDB's `memory_limit` bounds its buffer manager (hash tables, sorts, `string_agg`, `list`,
recursive CTEs), but some scalar functions allocate their result outside it, a whole vector of
2,048 rows at a time, and cannot be interrupted while they do: `repeat('x', 2000000000)` took 4
GB and 18 s here whatever `memory_limit` said, `len(range(1000000000))` asked for 8 GB at once.
Only their size arguments decide how much they allocate, so before a statement runs this module
finds every such call and lets it through only when those arguments are whole-number literals
(a literal string for `repeat`) that keep the value within `Limits.built_value_bytes`.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from connectors.limits import SETTINGS, Limits, ResourceLimitExceeded, size

#: Anonymous functions (sqlglot has no class for them) -> index of their size argument.
_SIZED = {"bar": 3, "list_resize": 1, "array_resize": 1, "bitstring": 1, "to_base": 2}
#: Format functions whose format string may carry a width or precision.
_FORMATS = frozenset({"printf", "format", "sprintf"})
#: Runs of digits in a format string (widths, precisions), and `*` (width from an argument).
_DIGITS = re.compile(r"\d+")


def check(sql: str, limits: Limits) -> None:
    """Raise ResourceLimitExceeded when `sql` calls a value-building function with sizes that
    are not small literals; a statement sqlglot cannot parse is left to DuckDB's parser."""
    try:
        trees = sqlglot.parse(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return
    bound = limits.built_value_bytes
    for tree in trees:
        for node in tree.find_all(exp.Func) if tree else ():
            problem = _problem(node, bound)
            if problem:
                raise ResourceLimitExceeded(
                    f"{problem}; DuckDB builds such values outside its memory limit, so "
                    f"querybot allows them only from literals and up to {size(bound)}",
                    SETTINGS["max_cell_bytes"],
                )


def _problem(node: exp.Func, bound: int) -> str:
    """Why `node` could build a value over `bound` bytes, or ''."""
    if isinstance(node, exp.Repeat):
        count, text = _int(node.args.get("times")), node.this
        if count is None or not (isinstance(text, exp.Literal) and text.is_string):
            return "repeat() is called with a count or a text that is not a literal"
        return _over(count * max(1, len(text.name)), bound, "repeat()")
    if isinstance(node, exp.Pad):
        length = _int(node.expression)
        name = "lpad()" if node.args.get("is_left") else "rpad()"
        return (
            f"{name} is called with a length that is not a literal"
            if length is None
            else (_over(length, bound, name))
        )
    if isinstance(node, exp.GenerateSeries):
        if isinstance(node.parent, exp.Table | exp.From | exp.Join | exp.Lateral):
            return ""  # a table function streams its rows
        start, end = _int(node.args.get("start")), _int(node.args.get("end"))
        step = _int(node.args.get("step")) if node.args.get("step") else 1
        if start is None or end is None or not step:
            return "range()/generate_series() builds a list from bounds that are not literals"
        return _over(8 * (abs(end - start) // abs(step) + 1), bound, "range()")
    name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
    if name in _SIZED:
        args = node.expressions if isinstance(node, exp.Anonymous) else list(node.args.values())
        index = _SIZED[name]
        sized = _int(args[index]) if index < len(args) else 0
        if sized is None:
            return f"{name}() is called with a size that is not a literal"
        return _over(sized, bound, f"{name}()")
    if isinstance(node, exp.Format) or name in _FORMATS:
        first = node.this if isinstance(node, exp.Format) else (node.expressions or [None])[0]
        if not (isinstance(first, exp.Literal) and first.is_string):
            return f"{name}() is called with a format that is not a literal"
        if "*" in first.name:
            return f"{name}() takes a width or precision from an argument"
        widest = max((int(d) for d in _DIGITS.findall(first.name)), default=0)
        return _over(widest, bound, f"{name}()")
    return ""


def _over(n: int, bound: int, name: str) -> str:
    return f"{name} would build a value of {size(n)}" if n > bound else ""


def _int(node: exp.Expression | None) -> int | None:
    """The value of a whole-number literal (negated too), else None."""
    if isinstance(node, exp.Neg):
        inner = _int(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Paren):
        return _int(node.this)
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        return int(node.name)
    return None
