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
#: Any of them by name, for SQL sqlglot cannot parse.
_NAMES = re.compile(
    r"\b(repeat|lpad|rpad|range|generate_series|printf|format|sprintf|"
    + "|".join(_SIZED)
    + r")\s*\(",
    re.IGNORECASE,
)


def check(sql: str, limits: Limits) -> None:
    """Raise ResourceLimitExceeded when `sql` calls a value-building function with sizes that
    are not literals, or whose values together (one row's worth) would pass the bound. A
    statement sqlglot cannot parse is refused if its text names any such function."""
    bound = limits.built_value_bytes
    try:
        trees = sqlglot.parse(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        named = _NAMES.search(sql)
        if named:
            _refuse(f"{named.group(1).lower()}() is called in SQL querybot cannot check", bound)
        return
    total = 0
    for tree in trees:
        # sqlglot keeps statements it does not know (CALL, PRAGMA...) as raw text.
        if isinstance(tree, exp.Command) and (named := _NAMES.search(tree.sql(dialect="duckdb"))):
            _refuse(f"{named.group(1).lower()}() is called in SQL querybot cannot check", bound)
        for node in tree.find_all(exp.Func) if tree else ():
            problem, built = _built(node)
            if problem:
                _refuse(problem, bound)
            total += built
            if built > bound:
                _refuse(f"{_name(node)}() would build a value of {size(built)}", bound)
            if total > bound:
                _refuse(f"the values it builds add up to {size(total)} a row", bound)


def _refuse(problem: str, bound: int) -> None:
    raise ResourceLimitExceeded(
        f"{problem}; DuckDB builds such values outside its memory limit, so querybot allows "
        f"them only from literals and up to {size(bound)} a row",
        SETTINGS["max_cell_bytes"],
    )


def _name(node: exp.Func) -> str:
    if isinstance(node, exp.Pad):
        return "lpad" if node.args.get("is_left") else "rpad"
    if isinstance(node, exp.GenerateSeries):
        return "range"
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def _built(node: exp.Func) -> tuple[str, int]:
    """(why `node`'s size cannot be known, or ''; the bytes of the value it builds, 0 for a
    function that builds nothing large)."""
    name = _name(node)
    if isinstance(node, exp.Repeat):
        count, text = _int(node.args.get("times")), node.this
        if count is None or not (isinstance(text, exp.Literal) and text.is_string):
            return "repeat() is called with a count or a text that is not a literal", 0
        return "", count * max(1, len(text.name))
    if isinstance(node, exp.Pad):
        length = _int(node.expression)
        return (
            (f"{name}() is called with a length that is not a literal", 0)
            if length is None
            else ("", length)
        )
    if isinstance(node, exp.GenerateSeries):
        if isinstance(node.parent, exp.Table | exp.From | exp.Join | exp.Lateral):
            return "", 0  # a table function streams its rows
        start, end = _int(node.args.get("start")), _int(node.args.get("end"))
        step = _int(node.args.get("step")) if node.args.get("step") else 1
        if start is None or end is None or not step:
            return "range()/generate_series() builds a list from bounds that are not literals", 0
        return "", 8 * (abs(end - start) // abs(step) + 1)
    if name in _SIZED:
        args = node.expressions if isinstance(node, exp.Anonymous) else list(node.args.values())
        index = _SIZED[name]
        sized = _int(args[index]) if index < len(args) else 0
        return (
            (f"{name}() is called with a size that is not a literal", 0)
            if sized is None
            else ("", sized)
        )
    if isinstance(node, exp.Format) or name in _FORMATS:
        first = node.this if isinstance(node, exp.Format) else (node.expressions or [None])[0]
        if not (isinstance(first, exp.Literal) and first.is_string):
            return f"{name}() is called with a format that is not a literal", 0
        if "*" in first.name:
            return f"{name}() takes a width or precision from an argument", 0
        return "", max((int(d) for d in _DIGITS.findall(first.name)), default=0)
    return "", 0


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
