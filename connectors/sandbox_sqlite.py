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
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from connectors.sqlite_guard import open_readonly

#: Rows handed to DuckDB at a time.
BATCH_ROWS = 50_000

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


@dataclass(frozen=True)
class SqliteContents:
    tables: tuple[SqliteTable, ...]
    #: Views and virtual tables left out (their SQL is never run).
    skipped: tuple[str, ...]


def quote_sqlite(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@contextmanager
def open_upload(path: Path) -> Iterator[sqlite3.Connection]:
    """The uploaded file, read-only and immutable, locked down as `sqlite_guard` does it."""
    with closing(open_readonly(path, upload=True)) as con:
        yield con


def read_contents(con: sqlite3.Connection) -> SqliteContents:
    """The file's ordinary tables with their row counts and column types."""
    tables = []
    skipped = []
    for name, sql in con.execute(_TABLES_SQL).fetchall():
        if sql.lstrip().upper().startswith("CREATE VIRTUAL"):
            skipped.append(name)
            continue
        tables.append(_read_table(con, name))
    views = con.execute("SELECT name FROM main.sqlite_master WHERE type = 'view'").fetchall()
    skipped += [name for (name,) in views]
    return SqliteContents(tuple(tables), tuple(skipped))


def _read_table(con: sqlite3.Connection, name: str) -> SqliteTable:
    table = quote_sqlite(name)
    info = con.execute(f"PRAGMA table_xinfo({table})").fetchall()
    columns = []
    for _cid, column, declared, _notnull, _default, _pk, hidden in info:
        if hidden == 1:  # a hidden column of a virtual table; never in SELECT *
            continue
        kinds = {
            kind
            for (kind,) in con.execute(
                f"SELECT DISTINCT typeof({quote_sqlite(column)}) FROM {table}"
            ).fetchall()
        }
        columns.append(SqliteColumn(column, declared or "", _duck_type(kinds - {"null"})))
    (rows,) = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    return SqliteTable(name, tuple(columns), int(rows))


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
    while rows := cursor.fetchmany(BATCH_ROWS):
        batch = {
            f"c{i}": _column_values([row[i] for row in rows], column.duck_type)
            for i, column in enumerate(table.columns)
        }
        target.register("querybot_batch", batch)
        try:
            target.execute(insert)
        finally:
            target.unregister("querybot_batch")


def _column_values(values: list[Any], duck_type: str) -> np.ndarray:
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
