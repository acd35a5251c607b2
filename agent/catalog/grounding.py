"""Value grounding: the text literals a query filters on must occur in their columns.

`region = 'california'` on a column that holds 'California' returns nothing, silently. After the
gate accepts a statement, every `column = 'literal'`, `column <> 'literal'` and
`column IN ('a', 'b')` on a text column is checked: against the column's full value list when the
catalog profiled one, otherwise with a one-row query against the live table. A miss comes back with
the closest real values (same text ignoring case first, then by edit similarity) for the repair
step.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import sqlglot
from rapidfuzz import fuzz, process, utils
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify

from agent.catalog.snapshot import CatalogSnapshot, is_text, table_key
from connectors.base import Connector, ConnectorError, TableInfo


@dataclass(frozen=True)
class ValueMiss:
    table: str
    column: str
    value: str
    suggestions: tuple[str, ...]

    def __str__(self) -> str:
        where = f"{self.table.rsplit('.', 1)[-1]}.{self.column}"
        text = f"'{self.value}' not found in {where}"
        if self.suggestions:
            return text + "; did you mean " + " or ".join(f"'{s}'" for s in self.suggestions) + "?"
        return text + "; no similar value occurs there."


def closest(value: str, candidates: list[str], limit: int = 3) -> tuple[str, ...]:
    """Real values most like `value`: those equal ignoring case alone when there are any, else
    the most similar."""
    folded = value.casefold()
    same = [c for c in candidates if c.casefold() == folded]
    if same:
        return tuple(same[:limit])
    rest = list(dict.fromkeys(candidates))
    scored = process.extract(
        value, rest, scorer=fuzz.ratio, processor=utils.default_process, limit=limit,
        score_cutoff=50,
    )  # fmt: skip
    return tuple(c for c, _, _ in scored)


def _column_of(node: exp.Expr) -> tuple[exp.Column | None, bool]:
    """The column a comparison side reads, and whether it is case-folded (`lower(x)`)."""
    folded = False
    while isinstance(node, exp.Lower | exp.Upper | exp.Trim | exp.Paren):
        folded = folded or isinstance(node, exp.Lower | exp.Upper)
        node = node.this
    return (node, folded) if isinstance(node, exp.Column) else (None, folded)


def literal_filters(tree: exp.Expr) -> Iterator[tuple[exp.Column, str, bool]]:
    """(column, literal, case-folded) for each equality or IN filter on a string literal."""
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.In):
        if isinstance(node, exp.In):
            column, folded = _column_of(node.this)
            literals = [e for e in node.expressions if isinstance(e, exp.Literal) and e.is_string]
        else:
            assert isinstance(node, exp.Binary)  # an EQ or a NEQ: find_all's union type says less
            column, folded = _column_of(node.left)
            other = node.right
            if column is None:
                column, folded = _column_of(node.right)
                other = node.left
            literals = [other] if isinstance(other, exp.Literal) and other.is_string else []
        if column is not None:
            for literal in literals:
                yield column, literal.this, folded


def _sources(tree: exp.Expr) -> dict[str, str]:
    """Alias (or name) -> qualified table name, for every table the statement reads."""
    out: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        name = ".".join(p.name for p in table.parts)
        out.setdefault(table.alias_or_name.lower(), name)
    return out


@dataclass(frozen=True)
class Filter:
    """A literal filter resolved to its table and text column."""

    table: TableInfo
    column: str
    value: str
    #: The column is compared through lower()/upper(): case does not matter.
    folded: bool


def text_filters(sql: str, snapshot: CatalogSnapshot) -> list[Filter]:
    """The literal filters of `sql` (gated, fully qualified) on text columns of the snapshot;
    what cannot be parsed or resolved is left out."""
    dialect = snapshot.dialect
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        tree = qualify(
            tree,
            schema=snapshot.gate_schema.mapping,
            dialect=dialect,
            validate_qualify_columns=False,
            quote_identifiers=False,
        )
    except SqlglotError:
        return []
    sources = _sources(tree)
    filters: dict[tuple[str, str, str], Filter] = {}
    for column, value, folded in literal_filters(tree):
        table = snapshot.by_key.get(table_key(sources.get(column.table.lower(), "")))
        if table is None:
            continue
        info = next((c for c in table.columns if c.name.lower() == column.name.lower()), None)
        if info is not None and is_text(info):
            filters.setdefault(
                (table.name, info.name, value), Filter(table, info.name, value, folded)
            )
    return list(filters.values())


def check_values(
    sql: str,
    snapshot: CatalogSnapshot,
    connector: Connector | None = None,
    *,
    timeout_s: float = 10.0,
) -> list[ValueMiss]:
    """The literal filters in `sql` (gated, fully qualified) whose value does not occur.

    Columns with a complete value profile are checked without a query; others are checked live
    through `connector` when one is given, and skipped when not. Anything that cannot be resolved
    is skipped: grounding only ever adds evidence, it never blocks on its own failure.
    """
    misses = []
    for f in text_filters(sql, snapshot):
        miss = _check(f.table, f.column, f.value, f.folded, snapshot, connector, timeout_s)
        if miss is not None:
            misses.append(miss)
    return misses


def _check(
    table: TableInfo,
    column: str,
    value: str,
    folded: bool,
    snapshot: CatalogSnapshot,
    connector: Connector | None,
    timeout_s: float,
) -> ValueMiss | None:
    profile = snapshot.column_profile(table.name, column)
    known = list(profile.values) if profile else []
    if profile is not None and profile.complete:
        if value in known or (folded and value.casefold() in {v.casefold() for v in known}):
            return None
        return ValueMiss(table.name, column, value, closest(value, known))
    if connector is None:
        return None
    try:
        if _occurs(connector, table, column, value, folded, timeout_s):
            return None
        candidates = _near(connector, table, column, value, timeout_s)
    except ConnectorError:
        return None
    return ValueMiss(table.name, column, value, closest(value, [*candidates, *known]))


def _select(table: TableInfo, column: str, dialect: str) -> tuple[exp.Select, exp.Column]:
    col = exp.column(column, quoted=True)
    return exp.select(col.copy()).from_(sqlglot.to_table(table.name, dialect=dialect)), col


def _occurs(
    connector: Connector, table: TableInfo, column: str, value: str, folded: bool, timeout: float
) -> bool:
    query, col = _select(table, column, connector.dialect)
    left: exp.Expr = exp.Lower(this=col) if folded else col
    right = exp.Literal.string(value.lower() if folded else value)
    query = query.where(exp.EQ(this=left, expression=right)).limit(1)
    result = connector.run(query.sql(connector.dialect), max_rows=1, timeout_s=timeout)
    return bool(result.rows)


def _near(
    connector: Connector, table: TableInfo, column: str, value: str, timeout: float
) -> list[str]:
    """Values equal ignoring case, or sharing the first or last three letters (a misspelling
    rarely changes both ends)."""
    query, col = _select(table, column, connector.dialect)
    lowered = value.lower()
    folded = exp.Lower(this=col.copy())
    match: exp.Expr = exp.EQ(this=folded, expression=exp.Literal.string(lowered))
    if len(lowered) >= 4:
        for func, part in ((exp.Left, lowered[:3]), (exp.Right, lowered[-3:])):
            end = func(this=folded.copy(), expression=exp.Literal.number(3))
            match = exp.or_(match, exp.EQ(this=end, expression=exp.Literal.string(part)))
    query = query.where(match).distinct().limit(200)
    result = connector.run(query.sql(connector.dialect), max_rows=200, timeout_s=timeout)
    return [str(row[0]) for row in result.rows]
