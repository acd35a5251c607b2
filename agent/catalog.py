"""The warehouse's metadata as the context step sees it: tables, columns and value profiles.

`Catalog` keeps one immutable `CatalogSnapshot` per connector. The table list is read once,
synchronously (the gate cannot work without it); value profiles (row and distinct counts, the
values that occur in text columns) are computed in a background thread, and the whole snapshot is
refreshed in the background once it is older than the TTL. A question never waits for profiling:
it uses whatever snapshot is current.

Profiles are computed with ordinary SELECTs built by sqlglot in the connector's dialect and sent
through `connector.run()`, so every connector gets them without a new interface method.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import sqlglot
from sqlglot import exp

from agent.gate import GateSchema
from connectors.base import ColumnInfo, Connector, ConnectorError, TableInfo

log = logging.getLogger(__name__)

#: Dialects with a cheap approximate distinct count; the others count exactly.
_APPROX_DISTINCT = frozenset({"duckdb", "bigquery", "snowflake", "databricks", "spark", "trino"})
_TEXT_TYPES = ("CHAR", "TEXT", "STRING", "ENUM")


def is_text(column: ColumnInfo) -> bool:
    return any(word in column.type.upper() for word in _TEXT_TYPES)


def is_temporal(column: ColumnInfo) -> bool:
    """A DATE, DATETIME or TIMESTAMP column (not a year kept as a number)."""
    return any(word in column.type.upper() for word in ("DATE", "TIME"))


def table_key(name: str) -> str:
    """The lookup key of a qualified name: lower-case parts joined by dots, quotes dropped."""
    return ".".join(part.strip().strip('"`[]') for part in name.lower().split("."))


@dataclass(frozen=True)
class ColumnProfile:
    """What occurs in one column."""

    distinct: int | None
    #: Most frequent first; every distinct non-null value when `complete`.
    values: tuple[str, ...] = ()
    complete: bool = False


@dataclass(frozen=True)
class TableProfile:
    row_count: int | None
    #: By column name as the connector spells it; text columns only carry values.
    columns: Mapping[str, ColumnProfile] = field(default_factory=dict)


@dataclass(frozen=True)
class CatalogSnapshot:
    """Tables and their profiles at one moment. Immutable, so threads share it freely."""

    tables: tuple[TableInfo, ...]
    dialect: str
    profiles: Mapping[str, TableProfile] = field(default_factory=dict)
    taken_at: float = field(default_factory=time.monotonic)
    #: Functions the gate accepts besides known pure ones (QUERYBOT_ALLOWED_FUNCTIONS).
    functions: tuple[str, ...] = ()

    @cached_property
    def by_key(self) -> dict[str, TableInfo]:
        return {table_key(t.name): t for t in self.tables}

    @cached_property
    def gate_schema(self) -> GateSchema:
        return GateSchema.from_tables(self.tables, self.dialect, functions=self.functions)

    def profile(self, table: str) -> TableProfile | None:
        return self.profiles.get(table_key(table))

    def column_profile(self, table: str, column: str) -> ColumnProfile | None:
        profile = self.profile(table)
        if profile is None:
            return None
        wanted = column.lower()
        return next((p for c, p in profile.columns.items() if c.lower() == wanted), None)


@dataclass(frozen=True)
class ProfileLimits:
    #: Text columns with at most this many distinct values are listed in full.
    complete_values: int = 50
    #: Values kept (most frequent first) for text columns with more distinct values.
    top_values: int = 10
    timeout_s: float = 30.0


def profile_table(connector: Connector, table: TableInfo, limits: ProfileLimits) -> TableProfile:
    """Row count, distinct counts and the values of text columns, from the live table."""
    dialect = connector.dialect
    ref = sqlglot.to_table(table.name, dialect=dialect)
    distinct = exp.ApproxDistinct if dialect in _APPROX_DISTINCT else _count_distinct
    stats = exp.select(exp.Count(this=exp.Star())).from_(ref.copy())
    for column in table.columns:
        stats = stats.select(distinct(this=exp.column(column.name, quoted=True)), append=True)
    result = connector.run(stats.sql(dialect), max_rows=1, timeout_s=limits.timeout_s)
    row_count, *counts = result.rows[0]
    columns: dict[str, ColumnProfile] = {}
    for column, count in zip(table.columns, counts, strict=True):
        values: tuple[str, ...] = ()
        if is_text(column) and count:
            complete = count <= limits.complete_values
            wanted = limits.complete_values if complete else limits.top_values
            values = _top_values(connector, ref, column.name, wanted + 1, limits.timeout_s)
            complete = complete and len(values) <= limits.complete_values
            values = values[:wanted]
        else:
            complete = False
        columns[column.name] = ColumnProfile(int(count or 0), values, complete)
    return TableProfile(int(row_count), columns)


def _count_distinct(this: exp.Expression) -> exp.Expression:
    return exp.Count(this=exp.Distinct(expressions=[this]))


def _top_values(
    connector: Connector, ref: exp.Table, column: str, limit: int, timeout_s: float
) -> tuple[str, ...]:
    col = exp.column(column, quoted=True)
    query = (
        exp.select(col.copy())
        .from_(ref.copy())
        .where(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())))
        .group_by(col.copy())
        .order_by(exp.Ordered(this=exp.Count(this=exp.Star()), desc=True))
        .order_by(col.copy(), append=True)
        .limit(limit)
    )
    result = connector.run(query.sql(connector.dialect), max_rows=limit, timeout_s=timeout_s)
    return tuple(str(row[0]) for row in result.rows)


def profile_tables(
    connector: Connector, tables: tuple[TableInfo, ...], limits: ProfileLimits
) -> dict[str, TableProfile]:
    """Profiles of every table that can be profiled; a failing table is skipped, not fatal."""
    profiles = {}
    for table in tables:
        try:
            profiles[table_key(table.name)] = profile_table(connector, table, limits)
        except (ConnectorError, sqlglot.errors.SqlglotError) as exc:
            log.warning("could not profile %s: %s", table.name, exc)
    return profiles


class Catalog:
    """The connector's current snapshot, refreshed in the background once older than `ttl_s`.

    The first access reads the table list synchronously; profiles follow in a background thread
    (when `profile` is on). Later accesses return the current snapshot at once and, when it is
    stale, start one background refresh. `on_refresh` is called with every new snapshot (the
    examples store retires examples whose tables or columns went away).
    """

    def __init__(
        self,
        connector: Connector,
        *,
        ttl_s: float = 3600.0,
        profile: bool = True,
        limits: ProfileLimits | None = None,
        on_refresh: Callable[[CatalogSnapshot], None] | None = None,
        functions: Iterable[str] = (),
    ) -> None:
        self.connector = connector
        self.functions = tuple(functions)
        self.ttl_s = ttl_s
        self.profile = profile
        self.limits = limits or ProfileLimits()
        self.on_refresh = on_refresh
        self._snapshot: CatalogSnapshot | None = None
        self._load_lock = threading.Lock()
        self._refreshing = threading.Lock()

    def snapshot(self) -> CatalogSnapshot:
        """The current snapshot; raises ConnectorError only when no table list was ever read."""
        current = self._snapshot
        if current is None:
            with self._load_lock:
                if self._snapshot is None:
                    tables = tuple(self.connector.list_tables())
                    dialect = self.connector.dialect
                    self._publish(CatalogSnapshot(tables, dialect, functions=self.functions))
                    if self.profile:
                        self._start_refresh()
                current = self._snapshot
        elif time.monotonic() - current.taken_at > self.ttl_s:
            self._start_refresh()
        assert current is not None
        return current

    @property
    def tables(self) -> list[TableInfo]:
        return list(self.snapshot().tables)

    @property
    def gate_schema(self) -> GateSchema:
        return self.snapshot().gate_schema

    def refresh(self) -> CatalogSnapshot:
        """Read tables (and profiles) now, publish and return the new snapshot."""
        tables = tuple(self.connector.list_tables())
        profiles = profile_tables(self.connector, tables, self.limits) if self.profile else {}
        snapshot = CatalogSnapshot(
            tables, self.connector.dialect, profiles, functions=self.functions
        )
        self._publish(snapshot)
        return snapshot

    def _publish(self, snapshot: CatalogSnapshot) -> None:
        snapshot.gate_schema  # noqa: B018 - build it before any question needs it
        self._snapshot = snapshot
        if self.on_refresh is not None:
            self.on_refresh(snapshot)

    def _start_refresh(self) -> None:
        if not self._refreshing.acquire(blocking=False):
            return  # one refresh at a time

        def work() -> None:
            try:
                self.refresh()
            except ConnectorError as exc:
                log.warning("catalog refresh failed, keeping the old snapshot: %s", exc)
            finally:
                self._refreshing.release()

        threading.Thread(target=work, name="catalog-refresh", daemon=True).start()

    def wait_idle(self, timeout_s: float = 60.0) -> bool:
        """Wait for a running background refresh (for tests and the benchmark)."""
        if self._refreshing.acquire(timeout=timeout_s):
            self._refreshing.release()
            return True
        return False
