"""Value profiles from what MySQL and MariaDB keep about tables, without reading any table.

- Row counts: `information_schema.TABLES.TABLE_ROWS` (InnoDB's estimate) for base tables.
- Index statistics: `information_schema.STATISTICS.CARDINALITY` of a column that leads an index
  estimates its distinct values.
- MariaDB's engine-independent statistics (`mysql.column_stats`, from `ANALYZE TABLE ...
  PERSISTENT FOR ...`): the distinct count (rows per value, `avg_frequency`), and with
  `histogram_type=JSON_HB` the values: buckets holding one value each (`ndv` 1) name it, and when
  every bucket does, they name every value. Reading it needs `GRANT SELECT ON mysql.column_stats`
  (and `mysql.table_stats`); without, this source is skipped.
- MySQL 8's histograms (`information_schema.COLUMN_STATISTICS`, from `ANALYZE TABLE ... UPDATE
  HISTOGRAM ON ...`): a singleton histogram lists every value with its frequency (complete when
  it read every row, `sampling-rate` 1); an equi-height one counts distinct values per bucket and
  names the values that fill a bucket alone.

Columns they say nothing about are left out, for the catalog to scan.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

import pymysql

from connectors.base import ColumnProfile, TableInfo, TableProfile
from connectors.sql.flavor import qualified

_ROWS_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES
WHERE {where} AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') AND TABLE_ROWS IS NOT NULL
"""

_INDEX_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, MAX(CARDINALITY) FROM information_schema.STATISTICS
WHERE {where} AND SEQ_IN_INDEX = 1 AND CARDINALITY IS NOT NULL
GROUP BY TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME
"""

_MARIADB_SQL = """
SELECT c.db_name, c.table_name, c.column_name, t.cardinality, c.nulls_ratio, c.avg_frequency,
       c.hist_type, c.histogram
FROM mysql.column_stats c JOIN mysql.table_stats t USING (db_name, table_name)
WHERE c.db_name = COALESCE(%s, c.db_name) AND c.db_name NOT IN %s
"""

_MYSQL_SQL = """
SELECT SCHEMA_NAME, TABLE_NAME, COLUMN_NAME, HISTOGRAM FROM information_schema.COLUMN_STATISTICS
WHERE SCHEMA_NAME = COALESCE(%s, SCHEMA_NAME) AND SCHEMA_NAME NOT IN %s
"""

_TABLE_FILTER = "TABLE_SCHEMA = COALESCE(%s, TABLE_SCHEMA) AND TABLE_SCHEMA NOT IN %s"

#: MySQL writes string values in histograms as `base64:type<N>:<base64>`.
_BASE64 = "base64:type"

#: The server refused to show a table (no privilege), or it does not exist (MySQL has no
#: mysql.column_stats, MariaDB no COLUMN_STATISTICS).
_UNREADABLE = frozenset({1142, 1146, 1109})


def read_statistics(
    con: Any,
    tables: Sequence[TableInfo],
    values: int,
    *,
    database: str | None,
    system: tuple[str, ...],
    mariadb: bool,
    dialect: str,
) -> dict[str, TableProfile]:
    """Profiles of `tables`, by name, from row counts, index statistics and histograms."""
    wanted = {t.name for t in tables}
    args = (database, system)
    rows: dict[str, int] = {}
    columns: dict[str, dict[str, ColumnProfile]] = {}

    def put(schema: str, table: str, column: str, profile: ColumnProfile) -> None:
        name = qualified(schema, table, dialect)
        if name in wanted:
            columns.setdefault(name, {})[column] = profile

    with con.cursor() as cur:
        cur.execute(_ROWS_SQL.format(where=_TABLE_FILTER), args)
        for schema, table, count in cur.fetchall():
            rows[qualified(schema, table, dialect)] = int(count)
        cur.execute(_INDEX_SQL.format(where=_TABLE_FILTER), args)
        for schema, table, column, cardinality in cur.fetchall():
            put(schema, table, column, ColumnProfile(int(cardinality)))
        # what a histogram knows replaces an index's estimate
        for schema, table, column, profile in _histograms(cur, args, values, mariadb=mariadb):
            put(schema, table, column, profile)
    names = (rows.keys() | columns.keys()) & wanted
    return {name: TableProfile(rows.get(name), columns.get(name, {})) for name in names}


def _histograms(
    cur: Any, args: tuple[Any, ...], values: int, *, mariadb: bool
) -> list[tuple[str, str, str, ColumnProfile]]:
    """(schema, table, column, profile) from MariaDB's column_stats or MySQL's histograms;
    none when the login may not read them."""
    try:
        cur.execute(_MARIADB_SQL if mariadb else _MYSQL_SQL, args)
        found = cur.fetchall()
    except pymysql.err.MySQLError as exc:
        if exc.args and exc.args[0] in _UNREADABLE:
            return []
        raise
    if mariadb:
        return [(s, t, c, mariadb_column(*stats, values=values)) for s, t, c, *stats in found]
    return [(s, t, c, mysql_column(text, values=values)) for s, t, c, text in found]


def mariadb_column(
    rows: float | None,
    nulls_ratio: float | None,
    avg_frequency: float | None,
    hist_type: str | None,
    histogram: bytes | str | None,
    *,
    values: int,
) -> ColumnProfile:
    """One `mysql.column_stats` row (with its table's row count at ANALYZE) as a profile."""
    distinct = None
    if rows is not None and nulls_ratio is not None and avg_frequency:
        distinct = round(float(rows) * (1 - float(nulls_ratio)) / float(avg_frequency))
    elif rows is not None and nulls_ratio is not None and float(nulls_ratio) >= 1:
        distinct = 0
    if hist_type != "JSON_HB" or not histogram:
        return ColumnProfile(distinct)
    text = histogram.decode() if isinstance(histogram, bytes) else histogram
    buckets = json.loads(text).get("histogram_hb", [])
    single = [b for b in buckets if b.get("ndv") == 1 and isinstance(b.get("start"), str)]
    sizes: dict[str, float] = {}
    for bucket in single:
        sizes[bucket["start"]] = sizes.get(bucket["start"], 0.0) + float(bucket.get("size", 0))
    return _profile(distinct, sizes, len(single) == len(buckets), values)


def mysql_column(histogram: str | bytes | dict[str, Any], *, values: int) -> ColumnProfile:
    """One MySQL 8 histogram (`COLUMN_STATISTICS.HISTOGRAM`) as a profile."""
    data = histogram if isinstance(histogram, dict) else json.loads(histogram)
    buckets = data.get("buckets", [])
    sizes: dict[str, float] = {}
    before = 0.0
    if data.get("histogram-type") == "singleton":
        for value, cumulative in buckets:
            _add(sizes, value, float(cumulative) - before)
            before = float(cumulative)
        exact = float(data.get("sampling-rate", 0)) >= 1
        return _profile(len(buckets), sizes, exact and len(sizes) == len(buckets), values)
    for lower, upper, cumulative, _ndv in buckets:
        if lower == upper:
            _add(sizes, lower, float(cumulative) - before)
        before = float(cumulative)
    return _profile(sum(int(b[3]) for b in buckets), sizes, False, values)


def _add(sizes: dict[str, float], value: Any, share: float) -> None:
    """Count `share` of the rows for a histogram value that is a string (others are skipped)."""
    if isinstance(value, str) and value.startswith(_BASE64):
        try:
            value = base64.b64decode(value.split(":", 2)[2]).decode()
        except (binascii.Error, UnicodeDecodeError, IndexError):
            return
        sizes[value] = sizes.get(value, 0.0) + share


def _profile(
    distinct: int | None, sizes: dict[str, float], every: bool, values: int
) -> ColumnProfile:
    """Values most frequent first (then by value), at most `values`; complete when `every`
    value of the column is among them."""
    ranked = sorted(sizes, key=lambda v: (-sizes[v], v))
    complete = every and bool(ranked) and len(ranked) <= values
    return ColumnProfile(len(ranked) if complete else distinct, tuple(ranked[:values]), complete)
