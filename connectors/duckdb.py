"""DuckDB files, opened read-only and locked down.

The connection refuses writes, file and network access, extension loading and configuration
changes, so even SQL that slipped past the agent's gate cannot change the file or read the host.
Each `run` uses its own cursor (a separate DuckDB connection to the same database), so several
threads may run queries at once; a watchdog thread interrupts a statement that overruns, and
`cancel` interrupts the cursor of the run with that job key.

Resources (connectors/limits.py): `memory_limit` bounds the buffer manager; the few functions
that allocate outside it are refused before they run (`duckdb_guard`); temporary files go to a
directory of this connector's own, which the watchdog measures while a statement runs and stops
it past `engine_temp_mb` (DuckDB's own `max_temp_directory_size` is set as well, but DuckDB 2.0
let a GROUP BY spill far past it here); results are read in small chunks, each row measured.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from connectors import duckdb_guard
from connectors.base import (
    ColumnInfo,
    ConnectorError,
    CostEstimate,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryResult,
    QueryTimeout,
    RunContext,
    TableInfo,
    WarehouseUnavailable,
    find_table,
)
from connectors.limits import Limits, Meter, engine_memory, engine_temp
from connectors.runs import Runs

#: Rows fetched per call: small, so a chunk of long values never holds much more than the
#: bounds allow before it is measured.
_FETCH_CHUNK = 64

#: Seconds between two looks at the temp directory's size while a statement runs.
_TEMP_POLL_S = 0.1

#: Seconds between repeated interrupts of a run being stopped.
_REINTERRUPT_S = 0.05

_TABLES_SQL = """
SELECT database_name, schema_name, table_name, comment, estimated_size
FROM duckdb_tables()
WHERE database_name = current_database() AND NOT internal
UNION ALL
SELECT database_name, schema_name, view_name, comment, NULL
FROM duckdb_views()
WHERE database_name = current_database() AND NOT internal
ORDER BY schema_name, table_name
"""

_COLUMNS_SQL = """
SELECT schema_name, table_name, column_name, data_type, comment
FROM duckdb_columns()
WHERE database_name = current_database() AND NOT internal
ORDER BY schema_name, table_name, column_index
"""

#: DuckDB's wording when a statement would write to the read-only file or change the locked
#: configuration; these arrive as InvalidInputException/CatalogException, not PermissionException.
_REFUSALS = ("read-only mode", "configuration has been locked")

_HINTS: dict[type[duckdb.Error], str] = {
    duckdb.ParserException: "Fix the SQL syntax.",
    duckdb.CatalogException: "Use only the tables and functions that exist in the schema.",
    duckdb.BinderException: "Check the column names and types against the schema.",
    duckdb.ConversionException: "Check casts and the types of compared values.",
    duckdb.OutOfRangeException: "Check casts and arithmetic that may overflow.",
    duckdb.OutOfMemoryException: "Aggregate, filter or select fewer columns to use less memory.",
}


class DuckDBConnector:
    """A read-only DuckDB database file."""

    name = "duckdb"
    dialect = "duckdb"

    def __init__(self, path: str | Path, *, threads: int = 2, limits: Limits | None = None) -> None:
        self.path = Path(path)
        self.limits = limits or Limits()
        if not self.path.is_file():
            raise WarehouseUnavailable(
                f"The DuckDB file {self.path} does not exist.",
                hint="Check the path (QUERYBOT_WAREHOUSE=duckdb:PATH), or use 'demo'.",
            )
        self.temp_dir = _temp_dir(self.path)
        config = {
            "enable_external_access": False,
            "autoload_known_extensions": False,
            "autoinstall_known_extensions": False,
            "allow_community_extensions": False,
            "threads": threads,
            "memory_limit": f"{self.limits.engine_memory_mb}MiB",
            "temp_directory": str(self.temp_dir),
            "max_temp_directory_size": f"{self.limits.engine_temp_mb}MiB",
        }
        try:
            self._con = duckdb.connect(str(self.path), read_only=True, config=config)
            # DuckDB shares one database instance per file within a process: a second connector
            # on the same file finds the configuration already locked (with the same settings,
            # or connect() would have refused).
            locked = self._con.execute("SELECT current_setting('lock_configuration')").fetchone()
            if not (locked and locked[0]):
                self._con.execute("SET lock_configuration = true")
        except duckdb.Error as exc:
            raise WarehouseUnavailable(
                f"Cannot open the DuckDB file {self.path}: {_first_line(exc)}",
                hint="Check that it is a DuckDB file and that no process has it open for writing.",
                engine_message=str(exc),
            ) from exc
        self._cursor_lock = threading.Lock()
        self._tables_lock = threading.Lock()
        self._tables: list[TableInfo] | None = None
        self._runs = Runs()

    def list_tables(self) -> list[TableInfo]:
        """Every base table and view of the file, read once (the file cannot change)."""
        with self._tables_lock:
            if self._tables is None:
                self._tables = self._read_tables()
            return list(self._tables)

    def describe(self, table: str) -> TableInfo:
        """A table by `catalog.schema.table`, `schema.table` or bare name, ignoring case."""
        return find_table(self.list_tables(), table, qualify_hint="Qualify it with its schema.")

    def estimate(self, sql: str) -> CostEstimate | None:
        """DuckDB has no cheap byte estimate; local queries cost nothing to bill."""
        return None

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        """Run `sql` as given (every statement in it), keep `max_rows` rows and count the rest.

        `context.job_key` names the run for `cancel`; a local engine has no job records to
        label.
        """
        if max_rows < 0:
            raise ValueError("max_rows must not be negative")
        duckdb_guard.check(sql, self.limits)
        with self._runs.track(context.job_key if context else "") as run:
            cursor = self._cursor()
            stop = threading.Event()
            self._runs.arm(run, stop.set)
            try:
                result = self._execute(cursor, sql, max_rows, timeout_s, stop)
            finally:
                cursor.close()
            if run.cancelled:  # the cancel came as the statement ended: it still wins
                raise QueryCancelled()
            return result

    def cancel(self, job_key: str) -> bool:
        """Interrupt the run started with `job_key`, if it still runs."""
        return self._runs.cancel(job_key)

    def close(self) -> None:
        self._con.close()

    def _execute(
        self,
        cursor: duckdb.DuckDBPyConnection,
        sql: str,
        max_rows: int,
        timeout_s: float,
        stop: threading.Event,
    ) -> QueryResult:
        """Run on `cursor` with a watchdog that interrupts it at the timeout or once `stop` is
        set (a cancel), and keeps interrupting: one that lands before the statement starts is
        lost. It also stops the statement once the temp directory grows past its bound."""
        fired = threading.Event()
        done = threading.Event()
        spilled = threading.Event()
        temp_cap = self.limits.engine_temp_mb * 1024 * 1024
        deadline = time.monotonic() + timeout_s

        def watch() -> None:
            while not stop.wait(min(_TEMP_POLL_S, max(deadline - time.monotonic(), 0))):
                if _dir_bytes(self.temp_dir) > temp_cap:
                    spilled.set()
                    break
                if time.monotonic() >= deadline:
                    fired.set()
                    break
            while not done.is_set():
                cursor.interrupt()
                done.wait(_REINTERRUPT_S)

        watchdog = threading.Thread(target=watch, name="querybot-duckdb-watchdog", daemon=True)
        started = time.perf_counter()
        watchdog.start()
        try:
            cursor.execute(sql)
            description = cursor.description or []
            meter = Meter(self.limits, lambda: [d[0] for d in description])
            # Counting streams the rest through in chunks; an interrupt stops the next fetch.
            rows, total = meter.read(_stream(cursor) if description else iter(()), max_rows)
        except duckdb.Error as exc:
            interrupted = isinstance(exc, duckdb.InterruptException)
            if interrupted and spilled.is_set():
                raise engine_temp(self.limits, str(exc)) from exc
            if interrupted and stop.is_set() and not fired.is_set():
                raise QueryCancelled() from exc
            if isinstance(exc, duckdb.OutOfMemoryException):
                raise engine_memory(self.limits, str(exc)) from exc
            raise _translate(exc, timed_out=fired.is_set(), timeout_s=timeout_s) from exc
        finally:
            done.set()
            stop.set()  # wakes the watchdog, which sees `done` and ends
            watchdog.join()  # never interrupt a cursor after it is closed
        return QueryResult(
            columns=[d[0] for d in description],
            rows=rows,
            total_rows=total,
            elapsed_s=time.perf_counter() - started,
            column_types=[str(d[1]) for d in description],
        )

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        try:
            with self._cursor_lock:
                return self._con.cursor()
        except duckdb.Error as exc:
            raise WarehouseUnavailable(
                f"The DuckDB connection to {self.path} is closed.",
                hint="Restart the bot.",
                engine_message=str(exc),
            ) from exc

    def _read_tables(self) -> list[TableInfo]:
        cursor = self._cursor()
        try:
            tables = cursor.execute(_TABLES_SQL).fetchall()
            columns: dict[tuple[str, str], list[ColumnInfo]] = {}
            for schema, table, column, type_, comment in cursor.execute(_COLUMNS_SQL).fetchall():
                info = ColumnInfo(name=column, type=type_, description=comment or "")
                columns.setdefault((schema, table), []).append(info)
        except duckdb.Error as exc:
            raise _translate(exc, timed_out=False, timeout_s=0) from exc
        finally:
            cursor.close()
        return [
            TableInfo(
                name=f"{catalog}.{schema}.{table}",
                columns=tuple(columns.get((schema, table), ())),
                description=comment or "",
                row_count=rows,
            )
            for catalog, schema, table, comment, rows in tables
        ]


def _stream(cursor: duckdb.DuckDBPyConnection) -> Iterator[tuple[Any, ...]]:
    while chunk := cursor.fetchmany(_FETCH_CHUNK):
        yield from chunk


def _temp_dir(path: Path) -> Path:
    """This process's temp directory for the DuckDB file `path`: DuckDB keeps one database
    instance per file in a process, so connectors on the same file share it (and its bound)."""
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"querybot-duckdb-{os.getpid()}-{digest}"


def _dir_bytes(directory: Path) -> int:
    """Bytes on disk of the files directly in `directory` (0 while it does not exist)."""
    try:
        with os.scandir(directory) as entries:
            return sum(e.stat().st_blocks * 512 for e in entries if e.is_file())
    except OSError:
        return 0


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _translate(exc: duckdb.Error, *, timed_out: bool, timeout_s: float) -> ConnectorError:
    """The connector error for an engine exception; the engine's full text is kept."""
    text = str(exc)
    if isinstance(exc, duckdb.InterruptException) and timed_out:
        return QueryTimeout(timeout_s)
    if isinstance(exc, duckdb.PermissionException) or any(r in text for r in _REFUSALS):
        return PermissionDenied(
            f"The warehouse refused this statement: {_first_line(exc)}",
            hint="Only read-only queries on the warehouse's own tables are allowed.",
            engine_message=text,
        )
    if isinstance(exc, duckdb.ConnectionException):
        return WarehouseUnavailable(
            f"The DuckDB connection failed: {_first_line(exc)}",
            hint="Restart the bot.",
            engine_message=text,
        )
    hint = next((h for cls, h in _HINTS.items() if isinstance(exc, cls)), "")
    return QueryFailed(f"DuckDB error: {_first_line(exc)}", hint=hint, engine_message=text)
