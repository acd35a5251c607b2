"""Copying the tables of an uploaded SQLite file into a DuckDB sandbox, without trusting the file.

DuckDB's own SQLite reader is an extension that must be downloaded, which a bot without internet
cannot do, so the rows are read with Python's sqlite3 and handed to DuckDB in column batches
(numpy arrays, which DuckDB scans without a per-row round trip).

The file is opened as an upload through `sqlite_guard.open_readonly` (read-only, immutable,
behind its authorizer, `trusted_schema` off, extension loading off). Only ordinary tables are
read: views, triggers and virtual tables hold SQL or module code from the file, so they are
skipped, never run.
SQLite columns have no fixed type; each column's type here is what its values really are
(`typeof`), and text columns declared as dates become DATE/TIMESTAMP when every value casts.

A small file can hold far more than its size: a column added with a long DEFAULT takes it on
every older row, and a generated column computes its value (`printf('%.*c', ...)`) on every
read. Before anything is copied, each column's values are measured (their bytes as text or
blob) against the expanded-bytes bound: a literal default's worst case (rows times its length)
at once, columns whose values SQLite makes up (defaults, generated columns) value by value, so
the scan stops as soon as the bound is passed; no single value may be longer than the file
(SQLITE_LIMIT_LENGTH). Rows are then copied in batches sized by their measured bytes.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import duckdb

from connectors.sql.sqlite_guard import open_readonly

if TYPE_CHECKING:
    import numpy as np

#: Rows handed to DuckDB at a time, at most; fewer when they hold more values or bytes.
BATCH_ROWS = 50_000
BATCH_CELLS = 500_000
BATCH_BYTES = 32 * 1024 * 1024
#: The SQL function counting the bytes of made-up values (see `_Budget`).
_SPEND = "querybot_spend"

_TABLES_SQL = """
SELECT name, coalesce(sql, '') FROM main.sqlite_master
WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY rowid
"""


@dataclass(frozen=True)
class SqliteColumn:
    name: str
    #: The type the file declares ("" when none), for dates and for the description.
    declared: str
    #: The DuckDB type its values fit.
    duck_type: str


@dataclass(frozen=True)
class SqliteTable:
    name: str
    columns: tuple[SqliteColumn, ...]
    rows: int
    #: Bytes its values take, as text or blob.
    expanded_bytes: int = 0


@dataclass(frozen=True)
class SqliteContents:
    tables: tuple[SqliteTable, ...]
    #: Views and virtual tables left out (their SQL is never run).
    skipped: tuple[str, ...]


def quote_sqlite(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Checks(Protocol):
    """The loader's bounds, called as the file is read; each raises when its bound is passed."""

    def columns(self, table: str, count: int) -> None: ...

    def cells(self, total: int) -> None:
        """`total`: rows times columns of the tables read so far."""

    def expanded(self, total: int | None, what: str = "") -> None:
        """`total`: bytes of the values read so far (None: past the bound, by how much
        unknown); `what` says where, for the message."""


@contextmanager
def open_upload(path: Path, *, max_value_bytes: int) -> Iterator[sqlite3.Connection]:
    """The uploaded file, read-only and immutable, locked down as `sqlite_guard` does it, and
    no value (a string or blob SQLite makes) longer than `max_value_bytes`."""
    with closing(open_readonly(path, upload=True)) as con:
        # a C int; SQLite lowers anything over its compiled maximum (1e9) to that
        con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, min(max_value_bytes, 2**31 - 1))
        yield con


def read_contents(con: sqlite3.Connection, checks: Checks, max_bytes: int) -> SqliteContents:
    """The file's ordinary tables with their row counts, column types and sizes, held to
    `checks` as they are read (`max_bytes`: the expanded-bytes bound, for the early stop)."""
    tables: list[SqliteTable] = []
    skipped = []
    budget = _Budget(max_bytes)
    con.create_function(_SPEND, 1, budget.spend, deterministic=True)
    for name, sql in con.execute(_TABLES_SQL).fetchall():
        if sql.lstrip().upper().startswith("CREATE VIRTUAL"):
            skipped.append(name)
            continue
        tables.append(_read_table(con, name, checks, budget, tables))
    views = con.execute("SELECT name FROM main.sqlite_master WHERE type = 'view'").fetchall()
    skipped += [name for (name,) in views]
    return SqliteContents(tuple(tables), tuple(skipped))


class _Budget:
    """Bytes of the file's values measured so far; `spend` (a SQL function) adds one made-up
    value's and stops the statement once the total passes the bound."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.spent = 0
        self.over = False

    def spend(self, size: int | None) -> int:
        self.spent += size or 0
        if self.spent > self.max_bytes:
            self.over = True
            raise ValueError("expanded past the bound")  # any error: the statement stops
        return size or 0


def _read_table(
    con: sqlite3.Connection,
    name: str,
    checks: Checks,
    budget: _Budget,
    earlier: list[SqliteTable],
) -> SqliteTable:
    table = quote_sqlite(name)
    info = [row for row in con.execute(f"PRAGMA table_xinfo({table})").fetchall() if row[6] != 1]
    # hidden == 1: a hidden column of a virtual table, never in SELECT *
    checks.columns(name, len(info))
    (rows,) = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    checks.cells(sum(t.rows * len(t.columns) for t in earlier) + rows * len(info))
    for _cid, column, _declared, _notnull, default, _pk, hidden in info:
        if hidden == 0 and default is not None and rows * len(default) > budget.max_bytes:
            checks.expanded(rows * len(default), f" (the default of {name}.{column} on each row)")
    start = budget.spent
    columns = []
    for _cid, column, declared, _notnull, default, _pk, hidden in info:
        size, limit = "length(CAST(v AS BLOB))", ""
        if hidden != 0 or default is not None:  # values SQLite makes up: counted one by one
            size = f"{_SPEND}({size})"
            # made once a row: the LIMIT keeps SQLite from flattening the subquery into the five
            # reads of `v` below, each of which would compute a generated column again
            limit = " LIMIT -1"
        source = f"(SELECT {quote_sqlite(column)} AS v FROM {table}{limit})"
        kinds = ", ".join(f"max(typeof(v) = '{kind}')" for kind in _KINDS)
        try:
            *found, spent = con.execute(f"SELECT {kinds}, total({size}) FROM {source}").fetchone()
        except sqlite3.Error:
            if budget.over:
                checks.expanded(None, f" (column {name}.{column})")
            raise
        if hidden == 0 and default is None:
            budget.spent += int(spent)
        checks.expanded(budget.spent)
        kinds_found = {kind for kind, present in zip(_KINDS, found, strict=True) if present}
        columns.append(SqliteColumn(column, declared or "", _duck_type(kinds_found)))
    return SqliteTable(name, tuple(columns), int(rows), budget.spent - start)


_KINDS = ("integer", "real", "text", "blob")


def _duck_type(kinds: set[str]) -> str:
    """The DuckDB type every value of these SQLite storage classes fits."""
    if kinds == {"integer"}:
        return "BIGINT"
    if kinds and kinds <= {"integer", "real"}:
        return "DOUBLE"
    if kinds == {"blob"}:
        return "BLOB"
    return "VARCHAR"  # text, nothing but NULLs, or a mix


def copy_table(
    source: sqlite3.Connection,
    table: SqliteTable,
    target: duckdb.DuckDBPyConnection,
    target_name: str,
    target_columns: list[str],
) -> None:
    """Insert every row of `table` into the existing DuckDB table `target_name` (a quoted
    identifier) whose columns are `target_columns` (quoted), in order."""
    names = ", ".join(quote_sqlite(c.name) for c in table.columns)
    cursor = source.execute(f"SELECT {names} FROM {quote_sqlite(table.name)}")
    casts = ", ".join(
        f"CAST(c{i} AS {c.duck_type}) AS {target_columns[i]}" for i, c in enumerate(table.columns)
    )
    insert = f"INSERT INTO {target_name} SELECT {casts} FROM querybot_batch"
    row_bytes = table.expanded_bytes // max(table.rows, 1) + 1
    batch_rows = max(
        1, min(BATCH_ROWS, BATCH_CELLS // max(len(table.columns), 1), BATCH_BYTES // row_bytes)
    )
    while rows := cursor.fetchmany(batch_rows):
        batch = {
            f"c{i}": _column_values([row[i] for row in rows], column.duck_type)
            for i, column in enumerate(table.columns)
        }
        target.register("querybot_batch", batch)
        try:
            target.execute(insert)
        finally:
            with contextlib.suppress(duckdb.Error):  # keep the insert's own error
                target.unregister("querybot_batch")


def import_libraries() -> None:
    """Import numpy, which only a SQLite file's rows go to DuckDB through: the loader's child
    process, started for every upload, calls this before its memory limit when the file is a
    SQLite one, so the limit bounds what the file costs, not the library."""
    import numpy  # noqa: F401


def _column_values(values: list[Any], duck_type: str) -> np.ndarray:
    import numpy as np  # see import_libraries

    if duck_type == "VARCHAR":
        values = [_text(v) for v in values]
    return np.array(values, dtype=object)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def date_type(declared: str) -> str | None:
    """DATE or TIMESTAMP for a declared date/time type, else None."""
    upper = declared.upper()
    if "TIME" in upper:
        return "TIMESTAMP"
    if "DATE" in upper:
        return "DATE"
    return None
