"""DuckDB user queries run in worker processes under a hard address-space limit.

DuckDB's `memory_limit` bounds its buffer manager, but it builds each vector of 2,048 result rows
outside it: `SELECT i, (SELECT string_agg('x', '') FROM range(1000000)) FROM range(100000) t(i)`
took the bot process to 4 GB before one row could be measured. So `DuckDBConnector.run` hands
each statement to a worker: a fresh interpreter (`python -m connectors.duckdb.worker`, never a
fork of the threaded bot) that sets RLIMIT_AS before it imports DuckDB, then opens its own
read-only, locked-down connection with the connector's configuration. An allocation past the
limit fails inside the worker (DuckDB's OutOfMemoryException, or the worker dies) and the run
ends in ResourceLimitExceeded naming QUERYBOT_ENGINE_MEMORY_MB; the bot process pays nothing.

The worker runs a statement as the connector always did (its own cursor, a watchdog that
interrupts it at the timeout, on a cancel or once its temp directory passes the bound, the
result read in small chunks and metered by `connectors.limits.Meter`) and sends back the
QueryResult or the ConnectorError. The process, its protocol and cancels are `worker_proc`'s; a
`Pool` starts, kills and replaces workers (one that does not stop within `worker_proc.GRACE_S` of
its timeout or a cancel).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryResult,
    QueryTimeout,
    WarehouseUnavailable,
)
from connectors.limits import MIB, Meter, RunLimits, engine_memory, engine_temp
from connectors.workers import proc as worker_proc
from connectors.workers.proc import first_line

if TYPE_CHECKING:
    import duckdb

#: Address space a worker may use past its engine memory: the interpreter, DuckDB's library and
#: threads (an idle worker with 2 threads peaked at 264 MiB here, with MALLOC_ARENA_MAX=2), the
#: rows read and the result being sent.
HEADROOM_MB = 768

#: Rows fetched per call: small, so a chunk of long values never holds much more than the
#: bounds allow before it is measured.
_FETCH_CHUNK = 64

#: Seconds between two looks at the temp directory's size while a statement runs.
_TEMP_POLL_S = 0.1

#: Seconds between repeated interrupts of a run being stopped.
_REINTERRUPT_S = 0.05

#: DuckDB's wording when a statement would write to the read-only file or change the locked
#: configuration; these arrive as InvalidInputException/CatalogException, not PermissionException.
_REFUSALS = ("read-only mode", "configuration has been locked")


@dataclass(frozen=True)
class Spec:
    """What a worker opens: the file, DuckDB's configuration, its own temp directory."""

    path: str
    config: dict[str, Any]
    temp_dir: str
    engine_memory_mb: int

    engine: ClassVar[str] = "DuckDB"
    module: ClassVar[str] = "connectors.duckdb.worker"

    @property
    def address_space(self) -> int:
        return (self.engine_memory_mb + HEADROOM_MB) * MIB

    def for_worker(self, number: int) -> Spec:
        """Each worker's temp directory is the connector's with the worker's number appended."""
        return dataclasses.replace(self, temp_dir=f"{self.temp_dir}-w{number}")

    def clean_up(self) -> None:
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _open(spec: Spec) -> duckdb.DuckDBPyConnection:
    """The worker's locked-down connection (DuckDB is imported here, under RLIMIT_AS, so its
    own start is inside the limit)."""
    import duckdb

    try:
        config = {**spec.config, "temp_directory": spec.temp_dir}
        con = duckdb.connect(spec.path, read_only=True, config=config)
        con.execute("SET lock_configuration = true")
    except (duckdb.Error, MemoryError) as exc:
        raise WarehouseUnavailable(
            f"Cannot open the DuckDB file {spec.path}: {first_line(exc)}",
            hint="Check that it is a DuckDB file and that no process has it open for writing.",
            engine_message=str(exc),
        ) from exc
    return con


def _run(
    con: duckdb.DuckDBPyConnection,
    spec: Spec,
    sql: str,
    max_rows: int,
    timeout_s: float,
    limits: RunLimits,
    stop: threading.Event,
) -> QueryResult:
    """Run `sql` on a cursor of its own (temporary tables die with it) with a watchdog that
    interrupts it at the timeout or once `stop` is set (a cancel), and keeps interrupting: one
    that lands before the statement starts is lost. It also stops the statement once the temp
    directory grows past its bound."""
    import duckdb

    cursor = con.cursor()
    fired = threading.Event()
    done = threading.Event()
    spilled = threading.Event()
    temp_cap = limits.engine_temp_mb * MIB
    deadline = time.monotonic() + timeout_s

    def watch() -> None:
        while not stop.wait(min(_TEMP_POLL_S, max(deadline - time.monotonic(), 0))):
            if dir_bytes(Path(spec.temp_dir)) > temp_cap:
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
        meter = Meter(limits, lambda: [d[0] for d in description])
        # Counting streams the rest through in chunks; an interrupt stops the next fetch.
        rows, total = meter.read(_stream(cursor) if description else iter(()), max_rows)
    except duckdb.Error as exc:
        interrupted = isinstance(exc, duckdb.InterruptException)
        if interrupted and spilled.is_set():
            raise engine_temp(limits, str(exc)) from exc
        if interrupted and stop.is_set() and not fired.is_set():
            raise QueryCancelled() from exc
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise engine_memory(limits, str(exc)) from exc
        raise translate(exc, timed_out=fired.is_set(), timeout_s=timeout_s) from exc
    finally:
        done.set()
        stop.set()  # wakes the watchdog, which sees `done` and ends
        watchdog.join()  # never interrupt a cursor after it is closed
        cursor.close()
    return QueryResult(
        columns=[d[0] for d in description],
        rows=rows,
        total_rows=total,
        elapsed_s=time.perf_counter() - started,
        column_types=[str(d[1]) for d in description],
    )


def _stream(cursor: duckdb.DuckDBPyConnection) -> Iterator[tuple[Any, ...]]:
    while chunk := cursor.fetchmany(_FETCH_CHUNK):
        yield from chunk


def dir_bytes(directory: Path) -> int:
    """Bytes on disk of the files directly in `directory` (0 while it does not exist)."""
    try:
        with os.scandir(directory) as entries:
            return sum(e.stat().st_blocks * 512 for e in entries if e.is_file())
    except OSError:
        return 0


def translate(exc: duckdb.Error, *, timed_out: bool, timeout_s: float) -> ConnectorError:
    """The connector error for an engine exception; the engine's full text is kept."""
    import duckdb

    hints: dict[type[duckdb.Error], str] = {
        duckdb.ParserException: "Fix the SQL syntax.",
        duckdb.CatalogException: "Use only the tables and functions that exist in the schema.",
        duckdb.BinderException: "Check the column names and types against the schema.",
        duckdb.ConversionException: "Check casts and the types of compared values.",
        duckdb.OutOfRangeException: "Check casts and arithmetic that may overflow.",
        duckdb.OutOfMemoryException: "Aggregate, filter or select fewer columns to use less "
        "memory.",
    }
    text = str(exc)
    if isinstance(exc, duckdb.InterruptException) and timed_out:
        return QueryTimeout(timeout_s)
    if isinstance(exc, duckdb.PermissionException) or any(r in text for r in _REFUSALS):
        return PermissionDenied(
            f"The warehouse refused this statement: {first_line(exc)}",
            hint="Only read-only queries on the warehouse's own tables are allowed.",
            engine_message=text,
        )
    if isinstance(exc, duckdb.ConnectionException):
        return WarehouseUnavailable(
            f"The DuckDB connection failed: {first_line(exc)}",
            hint="Restart the bot.",
            engine_message=text,
        )
    hint = next((h for cls, h in hints.items() if isinstance(exc, cls)), "")
    return QueryFailed(f"DuckDB error: {first_line(exc)}", hint=hint, engine_message=text)


if __name__ == "__main__":
    worker_proc.main(_open, _run)
