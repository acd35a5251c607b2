"""Value profiles from PostgreSQL's planner statistics, without reading any table.

ANALYZE (and autovacuum, which runs it as tables change) keeps, per column, the share of NULLs,
the number of distinct values (`n_distinct`: a count, or minus its ratio to the row count), the
most common values with their frequencies, and histogram bounds; `pg_class.reltuples` holds the
row count. One catalog query reads them for every table (the `pg_stats` view shows only columns
the login may read). A table never analysed has no `pg_stats` rows and is left out, for the
catalog to scan.

Values are those of string and enum columns: the most common ones, most frequent first; a column
with none (every value rare, e.g. names) gives its first histogram bounds instead, in order. The
list is complete when ANALYZE found every value to be common (their count equals `n_distinct`,
and their frequencies with the NULLs cover every row), or every value to be a histogram bound
(as many bounds as distinct values). On a table larger than ANALYZE's sample (300 x the
statistics target rows, 30,000 by default), that is PostgreSQL's own judgement from the sample,
the one its planner relies on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from connectors.base import ColumnProfile, TableInfo, TableProfile
from connectors.sql.flavor import qualified

#: How close to 1 the common values' frequencies plus the NULLs' share must come (they are
#: stored as `real`).
_COVERED = 0.999

#: `inherited` first: a parent's statistics over its children are what a query of it reads.
_STATS_SQL = """
SELECT DISTINCT ON (s.schemaname, s.tablename, s.attname)
       s.schemaname, s.tablename, s.attname, c.reltuples, s.null_frac, s.n_distinct,
       t.typcategory IN ('S', 'E') AS text,
       s.most_common_freqs,
       pg_catalog.array_length(s.histogram_bounds, 1),
       CASE WHEN t.typcategory IN ('S', 'E')
            THEN (s.most_common_vals::text::text[])[1:%(values)s] END,
       CASE WHEN t.typcategory IN ('S', 'E')
            THEN (s.histogram_bounds::text::text[])[1:%(values)s] END
FROM pg_catalog.pg_stats s
JOIN pg_catalog.pg_namespace n ON n.nspname = s.schemaname
JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attname = s.attname
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
WHERE s.schemaname <> 'information_schema' AND s.schemaname !~ '^pg_'
ORDER BY s.schemaname, s.tablename, s.attname, s.inherited DESC
"""


def read_statistics(
    con: Any, tables: Sequence[TableInfo], values: int, dialect: str
) -> dict[str, TableProfile]:
    """Profiles of the analysed `tables`, by name, with at most `values` values a column."""
    wanted = {t.name for t in tables}
    rows: dict[str, float] = {}
    columns: dict[str, dict[str, ColumnProfile]] = {}
    names: dict[tuple[str, str], str] = {}  # rows come by table: each is named once
    with con.cursor() as cur:
        for schema, table, column, reltuples, *stats in cur.execute(_STATS_SQL, {"values": values}):
            name = names.get((schema, table)) or qualified(schema, table, dialect)
            names[(schema, table)] = name
            if name in wanted:
                rows[name] = reltuples
                columns.setdefault(name, {})[column] = _column(reltuples, *stats)
    return {
        name: TableProfile(round(rows[name]) if rows[name] >= 0 else None, profiles)
        for name, profiles in columns.items()
    }


def _column(
    reltuples: float,
    null_frac: float,
    n_distinct: float,
    text: bool,
    frequencies: list[float] | None,
    bounded: int | None,
    common_values: list[str] | None,
    bounds: list[str] | None,
) -> ColumnProfile:
    """One `pg_stats` row as a profile (`reltuples` is -1 for a table never counted)."""
    distinct: int | None = None
    if n_distinct > 0:
        distinct = round(n_distinct)
    elif n_distinct < 0 and reltuples >= 0:
        distinct = round(-n_distinct * reltuples)
    elif null_frac >= 1:
        distinct = 0  # only NULLs
    if not text:
        return ColumnProfile(distinct)
    if common_values:  # complete when every value is a common one
        listed = tuple(common_values)
        common = frequencies or []
        covered = sum(common) + null_frac >= _COVERED
        complete = len(common) == distinct == len(listed) and covered
    else:  # complete when each value is a bound (a histogram of as many bounds as values)
        listed = tuple(bounds or ())
        complete = bool(listed) and bounded == distinct == len(listed)
    return ColumnProfile(distinct, listed, complete)
