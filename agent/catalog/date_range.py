"""Which dates the data covers: the first and last value of a table's date and time columns.

The model is told them beside today's date (so "last month" past the data's end is no
surprise), and an empty result filtered on a period says them. Each table's are read once, in
one `SELECT MIN(c), MAX(c), ...` built by sqlglot in the connector's dialect and sent through
`connector.run` (read-only, one row, bounded by a timeout), and kept until the catalog is read
again. Only where value profiling is on (it is off where a scan is billed) and never under a
warehouse identity, as for the live value check: `AgentDeps.live`.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from agent.catalog.snapshot import is_temporal
from connectors.base import Connector, ConnectorError, TableInfo

log = logging.getLogger(__name__)

#: Seconds one table's MIN/MAX query may take.
TIMEOUT_S = 10.0


@dataclass(frozen=True)
class DateRange:
    """The first and last value of one column (dates as YYYY-MM-DD)."""

    table: str
    column: str
    first: str
    last: str

    @property
    def name(self) -> str:
        return f"{self.table.rsplit('.', 1)[-1]}.{self.column}"

    def text(self) -> str:
        return f"{self.name} from {self.first} to {self.last}"


def _day(value: object) -> str | None:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)[:10] if value is not None else None


def range_sql(table: TableInfo, dialect: str) -> str | None:
    """The one query reading MIN and MAX of each of `table`'s date and time columns, or None
    when it has none."""
    columns = [c for c in table.columns if is_temporal(c)]
    if not columns:
        return None
    query = exp.select(
        *(f(this=exp.column(c.name, quoted=True)) for c in columns for f in (exp.Min, exp.Max))
    ).from_(sqlglot.to_table(table.name, dialect=dialect))
    return query.sql(dialect=dialect)


def read_ranges(connector: Connector, table: TableInfo) -> tuple[DateRange, ...]:
    """`table`'s date ranges, read now. Raises ConnectorError when the query fails."""
    sql = range_sql(table, connector.dialect)
    if sql is None:
        return ()
    result = connector.run(sql, max_rows=1, timeout_s=TIMEOUT_S)
    if not result.rows:
        return ()
    values = list(result.rows[0])
    columns = [c for c in table.columns if is_temporal(c)]
    found = []
    for n, column in enumerate(columns):
        first, last = _day(values[2 * n]), _day(values[2 * n + 1])
        if first and last:
            found.append(DateRange(table.name, column.name, first, last))
    return tuple(found)


class DateRanges:
    """Date ranges by table, read on first use and kept until `clear` (a catalog refresh)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[DateRange, ...]] = {}

    def of(self, connector: Connector, tables: Iterable[TableInfo]) -> tuple[DateRange, ...]:
        """The ranges of `tables`' date columns; a table whose query fails has none (logged)."""
        found: list[DateRange] = []
        for table in tables:
            with self._lock:
                kept = self._kept.get(table.name)
            if kept is None:
                try:
                    kept = read_ranges(connector, table)
                except ConnectorError as exc:
                    log.info("No date range for %s: %s", table.name, exc.message)
                    kept = ()
                with self._lock:
                    self._kept[table.name] = kept
            found += kept
        return tuple(found)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
