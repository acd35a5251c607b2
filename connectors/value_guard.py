"""Refuse statements that build huge values from a few characters of SQL, before they run.

Some functions build a value whose size only their arguments decide: `repeat('x', 2000000000)`,
`lpad`, `rpad`, `format('%1000000000s', ...)`, DuckDB's `range()` lists, `bar`, `list_resize`...,
PostgreSQL's `array_fill`. DuckDB allocates them outside its `memory_limit`, a whole vector of
2,048 rows at a time, and cannot be interrupted while it does (`repeat('x', 2000000000)` took 4
GB and 18 s whatever `memory_limit` said; `len(range(1000000000))` asked for 8 GB at once).
PostgreSQL builds them in the server backend, whose memory no setting bounds (up to 1 GB a
value, several copies), even while planning (they are immutable: a call on literals is folded).
So every such call is let through only when its size arguments are whole-number literals (a
literal string for `repeat`) that keep one row's built values within the engine's bound
(`Profile.bound`). On PostgreSQL what an aggregate (`array_agg`, `string_agg`...), an
`ARRAY(subquery)` or a recursive CTE collects counts too: one row's built values times the rows
its literal `generate_series` calls yield (3,000 x 1 MB in `array_agg` took 2.8 GB of backend
memory), and when the rows cannot be counted from literals (a table, a recursive CTE, a
computed bound) a row may build only `1 / UNCOUNTED_ROWS` of the bound.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from connectors.limits import SETTINGS, ResourceLimitExceeded, RunLimits
from connectors.units import byte_size

#: Format functions whose format string may carry a width or precision.
_FORMATS = frozenset({"printf", "format", "sprintf"})
#: Runs of digits in a format string (widths, precisions), and `*` (width from an argument).
_DIGITS = re.compile(r"\d+")
#: Aggregates that keep every value they are given (sqlglot classes, then names it has none for).
_COLLECTORS = (exp.ArrayAgg, exp.GroupConcat, exp.JSONArrayAgg, exp.JSONObjectAgg)
_COLLECTOR_NAMES = frozenset(
    {"jsonb_agg", "jsonb_object_agg", "json_object_agg", "xmlagg", "array_agg", "string_agg"}
)
#: The rows a collecting statement is assumed to feed its aggregates when literals do not say.
UNCOUNTED_ROWS = 1024
#: The size of one element `array_fill` builds, at most (a literal text counts its length).
_ELEMENT_BYTES = 8


@dataclass(frozen=True)
class Profile:
    """One engine's value builders and the bound on what a row of them may build."""

    #: The sqlglot dialect statements are read in.
    dialect: str
    #: Why the engine's own bounds do not hold these values (said in every refusal).
    why: str
    #: The most one row's built values may add up to, in bytes.
    bound: Callable[[RunLimits], int]
    #: Anonymous functions (sqlglot has no class for them) -> index of their size argument.
    sized: Mapping[str, int] = field(default_factory=dict)
    #: Whether `generate_series`/`range` outside FROM builds a list (DuckDB) or yields rows.
    series_lists: bool = False
    #: Whether values collected over rows count per row (PostgreSQL: see the module text).
    collects: bool = False

    @property
    def names(self) -> re.Pattern[str]:
        """Any builder by name, for SQL sqlglot cannot parse."""
        builders = ["repeat", "lpad", "rpad", "printf", "format", "sprintf", "array_fill"]
        builders += self.sized
        if self.series_lists:
            builders += ["range", "generate_series"]
        return re.compile(r"\b(" + "|".join(builders) + r")\s*\(", re.IGNORECASE)


DUCKDB = Profile(
    dialect="duckdb",
    why="DuckDB builds such values outside its memory limit",
    bound=lambda limits: limits.built_value_bytes,
    sized={"bar": 3, "list_resize": 1, "array_resize": 1, "bitstring": 1, "to_base": 2},
    series_lists=True,
)

POSTGRES = Profile(
    dialect="postgres",
    why="PostgreSQL builds such values in the server, whose memory no setting bounds",
    bound=lambda limits: limits.max_cell_bytes,
    collects=True,
)


def check(sql: str, limits: RunLimits, profile: Profile) -> None:
    """Raise ResourceLimitExceeded when `sql` calls a value-building function with sizes that
    are not literals, or whose values together (one row's worth, or what is collected over the
    rows, see `Profile.collects`) would pass the bound. A statement sqlglot cannot parse is
    refused if its text names any such function."""
    bound = profile.bound(limits)
    try:
        trees = sqlglot.parse(sql, read=profile.dialect)
    except sqlglot.errors.SqlglotError:  # ParseError, TokenError
        _refuse_named(sql, profile, bound)
        return
    total = 0
    for tree in trees:
        if tree is None:
            continue
        # sqlglot keeps statements it does not know (CALL, PRAGMA...) as raw text.
        if isinstance(tree, exp.Command):
            _refuse_named(tree.sql(dialect=profile.dialect), profile, bound)
        for found in tree.find_all(exp.Func):
            node = _unqualified(found, profile)
            problem, built = _built(node, profile)
            if problem:
                _refuse(problem, profile, bound)
            total += built
            if built > bound:
                _refuse(
                    f"{_name(node)}() would build a value of {byte_size(built)}", profile, bound
                )
            if total > bound:
                _refuse(f"the values it builds add up to {byte_size(total)} a row", profile, bound)
        if profile.collects and total and _collects(tree):
            _check_collected(tree, total, profile, bound)


def _check_collected(tree: exp.Expr, total: int, profile: Profile, bound: int) -> None:
    """Refuse when what `tree`'s aggregates may collect of its built values passes the bound."""
    rows = _rows(tree)
    if rows is None:
        if total * UNCOUNTED_ROWS > bound:
            _refuse(
                f"it collects values it builds ({byte_size(total)} a row) over rows querybot "
                f"cannot count, where a row may build at most {byte_size(bound // UNCOUNTED_ROWS)}",
                profile,
                bound,
            )
    elif total * rows > bound:
        _refuse(
            f"it collects the values it builds over {rows:,} rows, "
            f"{byte_size(total * rows)} in all",
            profile,
            bound,
        )


def _collects(tree: exp.Expr) -> bool:
    """Whether `tree` keeps values over rows: a collecting aggregate, ARRAY(subquery), or a
    recursive CTE."""
    if any(w.args.get("recursive") for w in tree.find_all(exp.With)):
        return True
    return any(
        isinstance(node, _COLLECTORS)
        or _name(node) in _COLLECTOR_NAMES
        or (isinstance(node, exp.Array) and node.find(exp.Query) is not None)
        for node in tree.find_all(exp.Func)
    )


def _rows(tree: exp.Expr) -> int | None:
    """The rows `tree` can yield as far as literals say (the product of its generate_series
    counts), or None when something else yields rows (a table, a recursive CTE, bounds that
    are not literals)."""
    with_ = tree.find(exp.With)
    if with_ is not None and with_.args.get("recursive"):
        return None
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    if any(table.name not in ctes for table in tree.find_all(exp.Table) if table.name):
        return None
    rows = 1
    for series in tree.find_all(exp.GenerateSeries):
        start, end = _int(series.args.get("start")), _int(series.args.get("end"))
        step = _int(series.args.get("step")) if series.args.get("step") else 1
        if start is None or end is None or not step:
            return None
        rows *= abs(end - start) // abs(step) + 1
    return rows


def _unqualified(node: exp.Func, profile: Profile) -> exp.Func:
    """`node` as sqlglot reads the same call unqualified: it keeps `pg_catalog.repeat(...)` as
    an anonymous function, which the rules would not know for `repeat`."""
    if not (isinstance(node, exp.Anonymous) and isinstance(node.parent, exp.Dot)):
        return node
    try:
        call = exp.func(node.name, *(e.copy() for e in node.expressions), dialect=profile.dialect)
    except (ValueError, sqlglot.errors.SqlglotError):
        return node
    return call if isinstance(call, exp.Func) else node


def _refuse_named(sql: str, profile: Profile, bound: int) -> None:
    if named := profile.names.search(sql):
        _refuse(
            f"{named.group(1).lower()}() is called in SQL querybot cannot check", profile, bound
        )


def _refuse(problem: str, profile: Profile, bound: int) -> None:
    raise ResourceLimitExceeded(
        f"{problem}; {profile.why}, so querybot allows them only from literals and up to "
        f"{byte_size(bound)} a row",
        SETTINGS["max_cell_bytes"],
    )


def _name(node: exp.Func) -> str:
    if isinstance(node, exp.Pad):
        return "lpad" if node.args.get("is_left") else "rpad"
    if isinstance(node, exp.GenerateSeries):
        return "range"
    return (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()


def _built(node: exp.Func, profile: Profile) -> tuple[str, int]:
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
        table_function = isinstance(node.parent, exp.Table | exp.From | exp.Join | exp.Lateral)
        if table_function or not profile.series_lists:
            return "", 0  # rows, streamed one at a time
        start, end = _int(node.args.get("start")), _int(node.args.get("end"))
        step = _int(node.args.get("step")) if node.args.get("step") else 1
        if start is None or end is None or not step:
            return "range()/generate_series() builds a list from bounds that are not literals", 0
        return "", 8 * (abs(end - start) // abs(step) + 1)
    if name == "array_fill" and profile.dialect == "postgres":
        return _array_fill(node)
    if name in profile.sized:
        args = node.expressions if isinstance(node, exp.Anonymous) else list(node.args.values())
        index = profile.sized[name]
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


def _array_fill(node: exp.Func) -> tuple[str, int]:
    """PostgreSQL's `array_fill(value, ARRAY[dims...])`: the product of literal dimensions,
    times the value's length when it is a literal text."""
    args = node.expressions if isinstance(node, exp.Anonymous) else []
    dims = args[1] if len(args) > 1 else None
    sizes = [_int(d) for d in dims.expressions] if isinstance(dims, exp.Array) else [None]
    if not sizes or any(s is None for s in sizes):
        return "array_fill() is called with dimensions that are not literals", 0
    value = args[0]
    each = len(value.name) if isinstance(value, exp.Literal) and value.is_string else 0
    return "", math.prod(s or 0 for s in sizes) * max(_ELEMENT_BYTES, each)


def _int(node: exp.Expr | None) -> int | None:
    """The value of a whole-number literal (negated too), else None."""
    if isinstance(node, exp.Neg):
        inner = _int(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Paren):
        return _int(node.this)
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        return int(node.name)
    return None
