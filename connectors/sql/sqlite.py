"""SQLite files, read-only and behind an authorizer (see `sqlite_guard`).

Statements run in worker processes (`SQLiteRuns`: SQLite sees its deadline only between steps of its
virtual machine, and one step can take seconds), killed and replaced when they overrun; the catalog
is read here. SQLite itself refuses to build a string or blob longer than `RunLimits.max_cell_bytes`
(SQLITE_LIMIT_LENGTH, set on every connection), so `printf('%.*c', ...)` and `zeroblob()` stop in
the engine; rows are read one at a time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import URL, Engine
from sqlalchemy.pool import QueuePool

from connectors.base import ColumnInfo, TableInfo, TableProfile, WarehouseUnavailable
from connectors.limits import RunLimits
from connectors.sql.flavor import qualified
from connectors.sql.sqlite_worker import Spec, SQLiteRuns, open_connection
from connectors.workers.pool import Pool

#: Files up to this size get exact row counts (`count(*)` per table) in the metadata.
_COUNT_ROWS_UP_TO_BYTES = 64 * 1024 * 1024

_TABLES_SQL = """
SELECT name, type FROM main.sqlite_master
WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY name
"""


class SQLiteFlavor(SQLiteRuns):
    """A SQLite database file; runs go to its workers (`workers`)."""

    name = "sqlite"
    dialect = "sqlite"
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def __init__(self, url: URL, limits: RunLimits) -> None:
        if not url.database or url.database == ":memory:" or url.database.startswith("file:"):
            raise ValueError(f"A SQLite warehouse needs a file path: sqlite:///PATH (got {url!s}).")
        super().__init__(Path(url.database).expanduser(), limits)
        if not self.path.is_file():
            raise WarehouseUnavailable(
                f"The SQLite file {self.path} does not exist.",
                hint=self.unavailable_hint(),
            )

    def create_engine(self, pool_size: int) -> Engine:
        return create_engine(
            URL.create("sqlite", database=str(self.path)),
            creator=self._open,
            poolclass=QueuePool,
            pool_size=pool_size,
            max_overflow=0,
        )

    def _open(self) -> sqlite3.Connection:
        return open_connection(self.path, self.limits)

    def workers(self, max_workers: int) -> Pool:
        """The worker processes that run this file's statements, `max_workers` at once."""
        return Pool(Spec(str(self.path), self.limits), max_workers=max_workers)

    def check_login(self, con: sqlite3.Connection) -> None:
        # Opening is lazy: reading the schema is what finds a file that is not a database.
        con.execute("SELECT count(*) FROM main.sqlite_master").fetchall()

    def stopper(self, engine: Engine, con: sqlite3.Connection) -> Callable[[], None]:
        """For the Flavor protocol only: SqlConnector runs a SQLite file's statements in its
        workers (a cancel reaches the worker), never on these connections."""
        return con.interrupt

    def read_tables(self, con: sqlite3.Connection) -> list[TableInfo]:
        count_rows = self.path.stat().st_size <= _COUNT_ROWS_UP_TO_BYTES
        tables = []
        for table, kind in con.execute(_TABLES_SQL).fetchall():
            quoted = '"' + table.replace('"', '""') + '"'
            columns = tuple(
                ColumnInfo(name=column, type=type_ or "")
                for _cid, column, type_, _nn, _default, _pk, hidden in con.execute(
                    f"PRAGMA main.table_xinfo({quoted})"
                )
                if hidden != 1  # hidden columns of virtual tables
            )
            rows = None
            if count_rows and kind == "table":
                rows = con.execute(f"SELECT count(*) FROM main.{quoted}").fetchone()[0]
            tables.append(
                TableInfo(
                    name=qualified("main", table, self.dialect), columns=columns, row_count=rows
                )
            )
        return tables

    def read_statistics(
        self, con: sqlite3.Connection, tables: Sequence[TableInfo], values: int
    ) -> dict[str, TableProfile]:
        """None: SQLite's ANALYZE describes indexes, not the values of columns, so its tables
        are scanned."""
        return {}
