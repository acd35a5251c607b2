"""Value profiles of a warehouse's tables: read from the statistics the engine keeps, and scanned,
within bounds, only where it keeps none.

A profile is what the model and the value check learn about a table beyond its columns: its row
count, and for each text column how many distinct values it holds and which ones. An engine that
keeps column statistics (`connectors.base.KeepsStatistics`: PostgreSQL's pg_stats, MySQL's and
MariaDB's histograms and index statistics) gives them without reading a table. What its statistics
leave out, and every table of an engine that keeps none (DuckDB, SQLite), is scanned with ordinary
SELECTs built by sqlglot in the connector's dialect and sent through `connector.run()`. Every scan
is bounded:

- rows: a scan reads the table through `LIMIT max_scan_rows`, so its cost stops growing with the
  table; a table cut there lists no complete values (those not read may exist) and keeps the row
  count its listing gave;
- time: each query stops after `timeout_s`;
- count: one pass sends about `max_scans` queries at most; tables past that keep the profile they
  had and come first in the next pass (never-scanned tables first, then the longest ago).

A scan that is not cut gives exactly the profile an unbounded scan of the whole table gives.

On a dialect with an approximate top-k that returns counts (`_APPROX_TOP_K`: Snowflake's
APPROX_TOP_K), a table is read once: one query gives the row count, every column's approximate
distinct count and every text column's most frequent values. Its values are exact whenever a column
holds fewer distinct values than the counters the sketch keeps (`_TOP_K_COUNTERS`), so a complete
list (at most `complete_values`, every one seen) is as certain as a GROUP BY's; above that only
the frequent values are kept. The connector decides whether a scan may run at all: Snowflake's
EXPLAINs each one it was not asked to run by a person and refuses it over its bytes cap, and the
pass logs the table as not profiled.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from connectors.base import (
    ColumnInfo,
    ColumnProfile,
    Connector,
    ConnectorError,
    KeepsStatistics,
    TableInfo,
    TableProfile,
)

log = logging.getLogger(__name__)

#: Dialects with a cheap approximate distinct count; the others count exactly.
_APPROX_DISTINCT = frozenset({"duckdb", "bigquery", "snowflake", "databricks", "spark", "trino"})
#: Dialects whose APPROX_TOP_K(expr, k, counters) returns [value, count] pairs, most frequent
#: first: their tables are profiled in one scan (`_profile_in_one_scan`).
_APPROX_TOP_K = frozenset({"snowflake"})
#: Values APPROX_TOP_K tracks at once (Space-Saving): a column with fewer distinct values is
#: counted exactly. Far above `complete_values`; Snowflake allows 100,000.
_TOP_K_COUNTERS = 10_000
_TEXT_TYPES = ("CHAR", "TEXT", "STRING", "ENUM")
#: The alias of the row-limited table a scan reads.
_SCANNED = "scanned"


def is_text(column: ColumnInfo) -> bool:
    return any(word in column.type.upper() for word in _TEXT_TYPES)


def table_key(name: str) -> str:
    """The lookup key of a qualified name: lower-case parts joined by dots, quotes dropped."""
    return ".".join(part.strip().strip('"`[]') for part in name.lower().split("."))


@dataclass(frozen=True)
class ProfileLimits:
    #: Text columns with at most this many distinct values are listed in full.
    complete_values: int = 50
    #: Values kept (most frequent first) for text columns with more distinct values.
    top_values: int = 10
    timeout_s: float = 30.0
    #: Rows one scan reads at most.
    max_scan_rows: int = 1_000_000
    #: Scan queries one profiling pass starts at most (the table being scanned is finished).
    max_scans: int = 1_000


def profile_table(
    connector: Connector, table: TableInfo, limits: ProfileLimits, kept: TableProfile | None = None
) -> TableProfile:
    """`table`'s profile from bounded scans: everything when `kept` is None, else what the
    engine's statistics `kept` lack (the row count, text columns' distinct counts and values)."""
    if connector.dialect in _APPROX_TOP_K:
        return _profile_in_one_scan(connector, table, limits, kept)
    known = kept.columns if kept is not None else {}
    counted = [c for c in table.columns if kept is None or _lacks_distinct(c, known)]
    rows, counts = _count(connector, table, counted, limits)
    cut, row_count = _row_count(rows, table, limits, kept)
    columns: dict[str, ColumnProfile] = {}
    for column in table.columns:
        have = known.get(column.name)
        if column.name in counts:
            distinct: int | None = counts[column.name]
        else:
            distinct = have.distinct if have is not None else None
        if have is not None and (have.values or have.complete):
            columns[column.name] = have
        elif is_text(column) and distinct:
            profile = _values(connector, table, column.name, distinct, cut, limits)
            if profile.complete and column.name not in counts:  # the engine's estimate
                profile = ColumnProfile(len(profile.values), profile.values, complete=True)
            columns[column.name] = profile
        else:
            columns[column.name] = ColumnProfile(distinct)
    return TableProfile(row_count, columns)


def _row_count(
    rows: int, table: TableInfo, limits: ProfileLimits, kept: TableProfile | None
) -> tuple[bool, int | None]:
    """Whether a scan of `rows` rows was cut at the bound, and the table's row count: the rows
    scanned, or for a cut scan the engine's figure for the whole table when it has one."""
    if rows < limits.max_scan_rows:
        return False, rows
    if kept is not None and kept.row_count is not None:
        return True, kept.row_count
    return True, table.row_count


def _lacks_distinct(column: ColumnInfo, known: Mapping[str, ColumnProfile]) -> bool:
    have = known.get(column.name)
    return is_text(column) and (have is None or have.distinct is None)


def _lacks_values(column: ColumnInfo, known: Mapping[str, ColumnProfile]) -> bool:
    have = known.get(column.name)
    if have is None:
        return is_text(column)
    return is_text(column) and not (have.values or have.complete) and have.distinct != 0


def scan_cost(table: TableInfo, kept: TableProfile | None, dialect: str) -> int:
    """The queries `profile_table` sends at most; 0 when `kept` lacks nothing."""
    if kept is None:
        values = sum(map(is_text, table.columns))
        return 1 if dialect in _APPROX_TOP_K else 1 + values
    known = kept.columns
    values = sum(_lacks_values(c, known) for c in table.columns)
    distinct = any(_lacks_distinct(c, known) for c in table.columns)
    if not (values or distinct or kept.row_count is None):
        return 0
    return 1 if dialect in _APPROX_TOP_K else 1 + values


def _scanned(
    table: TableInfo, columns: Sequence[str], dialect: str, limits: ProfileLimits
) -> exp.Subquery:
    """At most `max_scan_rows` rows of `table`'s `columns` (of a constant when none)."""
    ref = sqlglot.to_table(table.name, dialect=dialect)
    names: list[exp.Expression] = [exp.column(c, quoted=True) for c in columns]
    read = exp.select(*(names or [exp.Literal.number(1)])).from_(ref)
    return read.limit(limits.max_scan_rows).subquery(_SCANNED)


def _counting(columns: Sequence[ColumnInfo], dialect: str) -> exp.Select:
    """`SELECT COUNT(*)` and the distinct non-null values of each of `columns`."""
    approx = dialect in _APPROX_DISTINCT
    query = exp.select(exp.Count(this=exp.Star()))
    for column in columns:
        this = exp.column(column.name, quoted=True)
        query = query.select(
            exp.ApproxDistinct(this=this)
            if approx
            else exp.Count(this=exp.Distinct(expressions=[this])),
            append=True,
        )
    return query


def _count(
    connector: Connector, table: TableInfo, columns: list[ColumnInfo], limits: ProfileLimits
) -> tuple[int, dict[str, int]]:
    """Rows read (at most `max_scan_rows`) and the distinct non-null values of `columns`."""
    source = _scanned(table, [c.name for c in columns], connector.dialect, limits)
    sql = _counting(columns, connector.dialect).from_(source).sql(connector.dialect)
    result = connector.run(sql, max_rows=1, timeout_s=limits.timeout_s)
    rows, *counts = result.rows[0]
    return int(rows), {c.name: int(n or 0) for c, n in zip(columns, counts, strict=True)}


def _values(
    connector: Connector,
    table: TableInfo,
    column: str,
    distinct: int,
    cut: bool,
    limits: ProfileLimits,
) -> ColumnProfile:
    """The most frequent values of a text column holding `distinct` values: all of them when
    there are at most `complete_values` and the scan read the whole table."""
    complete = distinct <= limits.complete_values
    wanted = limits.complete_values if complete else limits.top_values
    col = exp.column(column, quoted=True)
    query = (
        exp.select(col.copy())
        .from_(_scanned(table, [column], connector.dialect, limits))
        .where(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())))
        .group_by(col.copy())
        .order_by(exp.Ordered(this=exp.Count(this=exp.Star()), desc=True))
        .order_by(col.copy(), append=True)
        .limit(wanted + 1)
    )
    sql = query.sql(connector.dialect)
    result = connector.run(sql, max_rows=wanted + 1, timeout_s=limits.timeout_s)
    values = tuple(str(row[0]) for row in result.rows)
    complete = complete and not cut and len(values) <= limits.complete_values
    return ColumnProfile(distinct, values[:wanted], complete)


def one_scan_sql(
    table: TableInfo,
    counted: Sequence[ColumnInfo],
    listed: Sequence[ColumnInfo],
    dialect: str,
    limits: ProfileLimits,
) -> str:
    """The one query that profiles `table` on a dialect in `_APPROX_TOP_K`: the row count, the
    approximate distinct count of `counted`, and APPROX_TOP_K of `listed` (room for one more
    value than a complete list holds, and for a NULL)."""
    query = _counting(counted, dialect)
    for column in listed:
        query = query.select(
            exp.ApproxTopK(
                this=exp.column(column.name, quoted=True),
                expression=exp.Literal.number(limits.complete_values + 2),
                counters=exp.Literal.number(_TOP_K_COUNTERS),
            ),
            append=True,
        )
    names = list(dict.fromkeys(c.name for c in (*counted, *listed)))
    return query.from_(_scanned(table, names, dialect, limits)).sql(dialect)


def _profile_in_one_scan(
    connector: Connector, table: TableInfo, limits: ProfileLimits, kept: TableProfile | None
) -> TableProfile:
    """`profile_table` in one query of approximate functions (`one_scan_sql`)."""
    known = kept.columns if kept is not None else {}
    counted = [c for c in table.columns if kept is None or _lacks_distinct(c, known)]
    listed = [c for c in table.columns if _lacks_values(c, known)]
    sql = one_scan_sql(table, counted, listed, connector.dialect, limits)
    result = connector.run(sql, max_rows=1, timeout_s=limits.timeout_s)
    rows, *found = result.rows[0]
    split = len(counted)
    counts = {c.name: int(n or 0) for c, n in zip(counted, found[:split], strict=True)}
    tops = {c.name: top_values(t) for c, t in zip(listed, found[split:], strict=True)}
    cut, row_count = _row_count(int(rows), table, limits, kept)
    columns: dict[str, ColumnProfile] = {}
    for column in table.columns:
        have = known.get(column.name)
        distinct = counts.get(column.name, have.distinct if have is not None else None)
        values = tops.get(column.name, ())
        # Fewer values than asked for: every one was seen, unless Snowflake cut the list to fit
        # its output (very long values), which the distinct count then shows.
        seen = len(values) <= limits.complete_values and (distinct or 0) <= limits.complete_values
        if values and seen and not cut:
            columns[column.name] = ColumnProfile(len(values), values, complete=True)
        elif values:
            columns[column.name] = ColumnProfile(distinct, values[: limits.top_values])
        elif have is not None and (have.values or have.complete):
            columns[column.name] = have
        else:
            columns[column.name] = ColumnProfile(distinct)
    return TableProfile(row_count, columns)


def top_values(found: Any) -> tuple[str, ...]:
    """The non-null values of an APPROX_TOP_K result (JSON text, as Snowflake's driver returns
    an ARRAY, or a list of [value, count] pairs), most frequent first, ties by value."""
    try:
        pairs = json.loads(found) if isinstance(found, (str, bytes)) else found or []
        counted = [(str(value), int(count)) for value, count in pairs if value is not None]
    except (ValueError, TypeError) as exc:
        raise ConnectorError(
            f"APPROX_TOP_K gave no [value, count] pairs: {exc}", engine_message=str(found)[:500]
        ) from exc
    return tuple(value for value, _ in sorted(counted, key=lambda pair: (-pair[1], pair[0])))


def from_statistics(table: TableInfo, kept: TableProfile, limits: ProfileLimits) -> TableProfile:
    """An engine's statistics for `table` cut to what a scan would keep: values of text columns
    only, all of them only when complete and at most `complete_values`, else `top_values`."""
    columns = {}
    for column in table.columns:
        have = kept.columns.get(column.name)
        if have is None:
            continue
        if not is_text(column):
            have = ColumnProfile(have.distinct)
        elif not (have.complete and len(have.values) <= limits.complete_values):
            have = ColumnProfile(have.distinct, have.values[: limits.top_values])
        columns[column.name] = have
    return TableProfile(kept.row_count, columns)


class Profiler:
    """Profiles of one connector's tables, pass after pass: the engine's statistics where it
    keeps them, bounded scans for the rest, at most `limits.max_scans` scan queries a pass."""

    def __init__(self, connector: Connector, limits: ProfileLimits) -> None:
        self.connector = connector
        self.limits = limits
        #: Table key -> when it was last scanned (time.monotonic()).
        self._scanned_at: dict[str, float] = {}

    def kept(self, tables: Sequence[TableInfo]) -> dict[str, TableProfile]:
        """Profiles from the engine's statistics alone, by table key (no table is read); a table
        it keeps nothing about is left out, and all are when it keeps none or cannot say."""
        if not isinstance(self.connector, KeepsStatistics):
            return {}
        try:
            stats = self.connector.statistics(tables, values=self.limits.complete_values)
        except ConnectorError as exc:
            log.warning("could not read the warehouse's statistics, scanning instead: %s", exc)
            return {}
        return {
            table_key(t.name): from_statistics(t, stats[t.name], self.limits)
            for t in tables
            if t.name in stats
        }

    def complete(
        self,
        tables: Sequence[TableInfo],
        kept: Mapping[str, TableProfile],
        previous: Mapping[str, TableProfile],
    ) -> dict[str, TableProfile]:
        """Every table's profile: `kept` completed by scans where it lacks something. A table
        left over once the pass's scans are spent (or whose scan fails) keeps its `previous`
        profile, else what `kept` has."""
        profiles = {}
        waiting = []
        for table in tables:
            key = table_key(table.name)
            cost = scan_cost(table, kept.get(key), self.connector.dialect)
            if cost:
                waiting.append((self._scanned_at.get(key, -1.0), key, cost, table))
            elif key in kept:
                profiles[key] = kept[key]
        spent = 0
        for _, key, cost, table in sorted(waiting, key=lambda w: w[:2]):
            if spent < self.limits.max_scans:
                spent += cost
                try:
                    profiles[key] = profile_table(self.connector, table, self.limits, kept.get(key))
                    self._scanned_at[key] = time.monotonic()
                    continue
                except (ConnectorError, sqlglot.errors.SqlglotError) as exc:
                    log.warning("could not profile %s: %s", table.name, exc)
            fallback = previous.get(key, kept.get(key))
            if fallback is not None:
                profiles[key] = fallback
        return profiles


def profile_tables(
    connector: Connector, tables: Sequence[TableInfo], limits: ProfileLimits
) -> dict[str, TableProfile]:
    """Every table's profile, by table key, read in one pass as the catalog reads it (for the
    benchmarks, which want them all at once)."""
    profiler = Profiler(connector, limits)
    return profiler.complete(tables, profiler.kept(tables), {})
