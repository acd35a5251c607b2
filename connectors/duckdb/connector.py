"""DuckDB files, opened read-only and locked down.

The connection refuses writes, file and network access, extension loading and configuration
changes, so even SQL that slipped past the agent's gate cannot change the file or read the host.
The catalog is read in this process; user statements (`run`) run in worker processes under a
hard address-space limit (a worker `Pool`), one per run in flight, each on a connection configured
like this one. A watchdog in the worker interrupts a statement that overruns, and `cancel` asks the
worker running that job key to interrupt it; a worker that does not stop is killed and replaced.

Resources (`RunLimits`): `memory_limit` bounds the buffer manager; the few functions that allocate
outside it are refused before they run (`value_guard`), and what else DuckDB builds outside it (each
vector of 2,048 result rows) is bounded by the worker's RLIMIT_AS (`engine_memory_mb` plus a fixed
headroom). Temporary files go to a directory of each worker's own, which its watchdog measures while
a statement runs and stops it past `engine_temp_mb` (DuckDB's own `max_temp_directory_size` is set
as well, but DuckDB 2.0 let a GROUP BY spill far past it here); results are read in small chunks,
each row measured. The bounds hold per worker, so per run in flight.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import threading
from pathlib import Path

import duckdb

from connectors import value_guard
from connectors.base import (
    ColumnInfo,
    CostEstimate,
    QueryCancelled,
    QueryResult,
    RunContext,
    TableInfo,
    WarehouseUnavailable,
    find_table,
)
from connectors.duckdb.worker import Spec, first_line, translate
from connectors.limits import RunLimits
from connectors.runs import Runs
from connectors.workers.pool import Pool

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


class DuckDBConnector:
    """A read-only DuckDB database file."""

    name = "duckdb"
    dialect = "duckdb"

    def __init__(
        self, path: str | Path, *, threads: int = 2, limits: RunLimits | None = None
    ) -> None:
        self.path = Path(path)
        self.limits = limits or RunLimits()
        if not self.path.is_file():
            raise WarehouseUnavailable(
                f"The DuckDB file {self.path} does not exist.",
                hint="Check the path (QUERYBOT_WAREHOUSE=duckdb:PATH), or use 'demo'.",
            )
        self.temp_dir = _temp_dir(self.path)
        config: dict[str, str | bool | int | float | list[str]] = {
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
                f"Cannot open the DuckDB file {self.path}: {first_line(exc)}",
                hint="Check that it is a DuckDB file and that no process has it open for writing.",
                engine_message=str(exc),
            ) from exc
        self._cursor_lock = threading.Lock()
        self._tables_lock = threading.Lock()
        self._tables: list[TableInfo] | None = None
        self._runs = Runs()
        # Each worker's temp directory is this one's name with the worker's number appended.
        self._pool = Pool(
            Spec(str(self.path), config, str(self.temp_dir), self.limits.engine_memory_mb)
        )

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
        value_guard.check(sql, self.limits, value_guard.DUCKDB)
        with self._runs.track(context.job_key if context else "") as run:
            arm = functools.partial(self._runs.arm, run)
            try:
                result = self._pool.run(
                    sql, max_rows=max_rows, timeout_s=timeout_s, limits=self.limits, arm=arm
                )
            finally:
                self._runs.disarm(run)
            if run.cancelled:  # the cancel came as the statement ended: it still wins
                raise QueryCancelled()
            return result

    def cancel(self, job_key: str) -> bool:
        """Interrupt the run started with `job_key`, if it still runs."""
        return self._runs.cancel(job_key)

    def close(self) -> None:
        self._pool.close()
        self._con.close()

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
            raise translate(exc, timed_out=False, timeout_s=0) from exc
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


def _temp_dir(path: Path) -> Path:
    """This process's temp directory for the DuckDB file `path`: DuckDB keeps one database
    instance per file in a process, so connectors on the same file share it (and its bound)."""
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"querybot-duckdb-{os.getpid()}-{digest}"
