"""The canaries that are files: DuckDB and SQLite, each in a directory of its own beside the
secret files, run through the connector production opens or read-write."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from connectors import open_connector
from tests.support.canary_data import COLUMNS, ROWS, checksum, files, write_secrets
from tests.support.canary_runs import TIMEOUT_S, Run, run_connector, run_on


@contextmanager
def _watchdog(interrupt: Callable[[], None]) -> Iterator[None]:
    timer = threading.Timer(TIMEOUT_S, interrupt)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def duckdb_snapshot(path: Path) -> dict[str, object]:
    """Every table's checksum, the views, functions and macros, settings and attached databases
    of the DuckDB file at `path`, read through a `DuckDBConnector` of its own.

    DuckDB keeps one database instance per file in a process, so while another connector on the
    file is open this one shares its instance and sees what a statement left in it (a setting,
    an attached database, a loaded extension), not only what reached the file.
    """
    connector = open_connector(f"duckdb:{path}", data_dir=path.parent)

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return connector.run(sql, max_rows=100_000, timeout_s=30).rows

    try:
        names = rows(
            "SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY ALL"
        )
        return {
            "tables": {n: checksum(rows('SELECT * FROM "{}"."{}"."{}"'.format(*n))) for n in names},
            "views": rows("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1"),
            # a loaded extension adds functions; a macro is one that is not internal
            "functions": rows(
                "SELECT count(*), list_sort(list(function_name) FILTER (WHERE NOT internal))"
                " FROM duckdb_functions()"
            ),
            "settings": rows("SELECT name, value FROM duckdb_settings() ORDER BY name"),
            "databases": rows(
                "SELECT database_name, path, readonly FROM duckdb_databases() ORDER BY 1"
            ),
        }
    finally:
        connector.close()


class DuckDBCanary:
    """`canary.duckdb` (catalog `canary`) in its own directory."""

    CONNECTIONS = ("DuckDBConnector: read-only, external access off", "read-write")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "canary.duckdb"
        write_secrets(directory)
        con = duckdb.connect(str(self.path))
        for table, cols in COLUMNS.items():
            con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in cols)})")
            con.executemany(
                f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", ROWS[table]
            )
        con.close()

    @property
    def spec(self) -> str:
        """The warehouse spec a deployment would configure for this file."""
        return f"duckdb:{self.path}"

    def snapshot(self) -> dict[str, object]:
        return {**duckdb_snapshot(self.path), "files": files(self.directory)}

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        if hardened:  # the connector production opens for `duckdb:PATH`
            connector = open_connector(self.spec, data_dir=self.directory)
            try:
                return run_on(connector, statements)
            finally:
                connector.close()
        # read-write, files and network reachable: only the gate stands in the way
        con = duckdb.connect(str(self.path))
        run = Run()
        try:
            for sql in statements:
                rows, error = None, None
                with _watchdog(con.interrupt):
                    try:
                        rows = con.execute(sql).fetchmany(2000)
                    except duckdb.Error as exc:
                        error = exc
                run.record(sql, rows, error)
        finally:
            con.close()
        return run


class SQLiteCanary:
    """`canary.sqlite` in its own directory."""

    CONNECTIONS = ("SqlConnector: mode=ro and a read-only authorizer", "read-write")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / "canary.sqlite"
        write_secrets(directory)
        con = sqlite3.connect(self.path)
        for table, cols in COLUMNS.items():
            con.execute(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in cols)})")
            con.executemany(
                f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", ROWS[table]
            )
        con.commit()
        con.close()

    def snapshot(self) -> dict[str, object]:
        con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            names = con.execute("SELECT type, name FROM sqlite_schema ORDER BY 1, 2").fetchall()
            sums = {
                n: checksum(con.execute(f'SELECT * FROM "{n}"').fetchall())
                for kind, n in names
                if kind == "table"
            }
        finally:
            con.close()
        return {"schema": names, "tables": sums, "files": files(self.directory)}

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def run(self, statements: Iterable[str], *, hardened: bool) -> Run:
        if hardened:  # the connector: read-only URI plus an authorizer allowing only reads
            return run_connector(self.url, statements)
        con = sqlite3.connect(self.path)
        run = Run()
        try:
            for sql in statements:
                deadline = _Deadline()
                con.set_progress_handler(deadline, 1000)
                rows, error = None, None
                try:
                    rows = con.execute(sql).fetchmany(2000)
                except (sqlite3.Error, OverflowError, ValueError) as exc:
                    error = exc
                run.record(sql, rows, error)
            con.rollback()
        finally:
            con.close()
        return run


class _Deadline:
    """A SQLite progress handler that aborts a statement after the timeout."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def __call__(self) -> int:
        return int(time.monotonic() - self.start > TIMEOUT_S)
