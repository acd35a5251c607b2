"""SQLite files, read-only and behind an authorizer (see `sqlite_guard`), deadline per run.

SQLite itself refuses to build a string or blob longer than `Limits.max_cell_bytes`
(SQLITE_LIMIT_LENGTH, set on every connection), so `printf('%.*c', ...)` and `zeroblob()` stop in
the engine; rows are read one at a time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.engine import URL, Engine
from sqlalchemy.pool import QueuePool

from connectors.base import (
    ColumnInfo,
    ConnectorError,
    PermissionDenied,
    QueryFailed,
    QueryTimeout,
    TableInfo,
    TableProfile,
    WarehouseUnavailable,
)
from connectors.limits import Limits, cell_too_large, engine_memory
from connectors.sql_flavor import Stream, first_line, qualified
from connectors.sqlite_guard import (
    GuardedConnection,
    clear_deadline,
    open_readonly,
    set_deadline,
)

#: Files up to this size get exact row counts (`count(*)` per table) in the metadata.
_COUNT_ROWS_UP_TO_BYTES = 64 * 1024 * 1024

_TABLES_SQL = """
SELECT name, type FROM main.sqlite_master
WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY name
"""

_REFUSED = ("SQLITE_AUTH", "SQLITE_READONLY")
#: The authorizer's refusals do not always carry SQLITE_AUTH (a denied function is SQLITE_ERROR,
#: a denied temp table SQLITE_SCHEMA); its messages are fixed by SQLite.
_REFUSAL_TEXTS = ("not authorized", "authorization denied")
_GONE = ("SQLITE_CANTOPEN", "SQLITE_NOTADB", "SQLITE_CORRUPT", "SQLITE_IOERR", "SQLITE_BUSY")
_HINTS = {
    "syntax error": "Fix the SQL syntax.",
    "no such table": "Use only the tables that exist in the schema.",
    "no such column": "Check the column names against the schema.",
    "no such function": "Check the function names (SQLite has fewer than other engines).",
    "one statement at a time": "Send one statement only.",
}


class SQLiteFlavor:
    """A SQLite database file."""

    name = "sqlite"
    dialect = "sqlite"
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def __init__(self, url: URL, limits: Limits) -> None:
        self.limits = limits
        if not url.database or url.database == ":memory:" or url.database.startswith("file:"):
            raise ValueError(f"A SQLite warehouse needs a file path: sqlite:///PATH (got {url!s}).")
        self.path = Path(url.database).expanduser()
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

    def _open(self) -> GuardedConnection:
        con = open_readonly(self.path)
        con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self.limits.max_cell_bytes)
        return con

    def check_login(self, con: sqlite3.Connection) -> None:
        # Opening is lazy: reading the schema is what finds a file that is not a database.
        con.execute("SELECT count(*) FROM main.sqlite_master").fetchall()

    def begin(self, con: GuardedConnection, timeout_s: float) -> None:
        set_deadline(con, timeout_s)

    def execute(self, con: sqlite3.Connection, sql: str) -> Stream:
        cursor = con.execute(sql)  # sqlite3 refuses a second statement
        return cursor, iter(cursor)

    def abandon(
        self, con: sqlite3.Connection, cursor: sqlite3.Cursor, stream: Iterator[Any]
    ) -> None:
        cursor.close()

    def describe(
        self, con: sqlite3.Connection, cursor: sqlite3.Cursor, sql: str
    ) -> tuple[list[str], list[str]]:
        return [d[0] for d in cursor.description or ()], []  # sqlite3 reports no types

    def stopper(self, engine: Engine, con: GuardedConnection) -> Callable[[], None]:
        # Checked by the deadline's progress handler: the statement fails with SQLITE_INTERRUPT.
        return con.stop_requested.set

    def end(self, con: GuardedConnection) -> None:
        clear_deadline(con)

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

    def translate(self, exc: BaseException, timeout_s: float) -> ConnectorError:
        text = str(exc)
        code = getattr(exc, "sqlite_errorname", "") or ""
        if code == "SQLITE_INTERRUPT":  # the deadline, unless a cancel did (see SqlConnector)
            return QueryTimeout(timeout_s)
        if code == "SQLITE_TOOBIG":
            return cell_too_large(self.limits, engine_message=text)
        if code == "SQLITE_NOMEM":
            return engine_memory(self.limits, text)
        if code.startswith(_REFUSED) or any(t in text for t in _REFUSAL_TEXTS):
            return PermissionDenied(
                f"SQLite refused this statement: {first_line(exc)}",
                hint="Only read-only queries on the database's own tables are allowed.",
                engine_message=text,
            )
        if code.startswith(_GONE):
            return WarehouseUnavailable(
                f"The SQLite file {self.path} cannot be read: {first_line(exc)}",
                hint=self.unavailable_hint(),
                engine_message=text,
            )
        hint = next((h for key, h in _HINTS.items() if key in text), "")
        return QueryFailed(f"SQLite error: {first_line(exc)}", hint=hint, engine_message=text)

    def unavailable_hint(self) -> str:
        return (
            f"Check that {self.path} is a SQLite database this process may read "
            "(QUERYBOT_WAREHOUSE=sqlite:///PATH, four slashes for an absolute path)."
        )
