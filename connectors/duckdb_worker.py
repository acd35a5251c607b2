"""DuckDB user queries run in worker processes under a hard address-space limit.

DuckDB's `memory_limit` bounds its buffer manager, but it builds each vector of 2,048 result rows
outside it: `SELECT i, (SELECT string_agg('x', '') FROM range(1000000)) FROM range(100000) t(i)`
took the bot process to 4 GB before one row could be measured. So `DuckDBConnector.run` hands
each statement to a worker: a fresh interpreter (`python -m connectors.duckdb_worker`, never a
fork of the threaded bot) that sets RLIMIT_AS before it imports DuckDB, then opens its own
read-only, locked-down connection with the connector's configuration. An allocation past the
limit fails inside the worker (DuckDB's OutOfMemoryException, or the worker dies) and the run
ends in ResourceLimitExceeded naming QUERYBOT_ENGINE_MEMORY_MB; the bot process pays nothing.

The worker runs a statement as the connector always did (its own cursor, a watchdog that
interrupts it at the timeout, on a cancel or once its temp directory passes the bound, the
result read in small chunks and metered by `connectors.limits.Meter`) and sends back the
QueryResult or the ConnectorError. A worker that does not stop within `GRACE_S` of its timeout
or a cancel is killed; a killed or dead worker is replaced by a fresh one on the next run.

Protocol (multiprocessing.connection over three pipes): the parent sends the `Spec`, the worker
answers ("ready", None) or ("error", ...); then per run the parent sends (seq, sql, max_rows,
timeout_s, limits) and the worker answers ("ok", QueryResult) or ("error", ...). A cancel is
the run's `seq` on the control pipe (a stale one, for an earlier run, is ignored).
"""

from __future__ import annotations

import os
import pickle
import resource
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryResult,
    QueryTimeout,
    WarehouseUnavailable,
)
from connectors.limits import MIB, Limits, Meter, engine_memory, engine_temp

if TYPE_CHECKING:
    import duckdb

#: Address space a worker may use past its engine memory: the interpreter, DuckDB's library and
#: threads (an idle worker with 2 threads peaked at 264 MiB here, with MALLOC_ARENA_MAX=2), the
#: rows read and the result being sent.
HEADROOM_MB = 768

#: Seconds a worker has to stop after its timeout or a cancel before it is killed.
GRACE_S = 5.0

#: Seconds a new worker has to open the file.
START_S = 60.0

#: Rows fetched per call: small, so a chunk of long values never holds much more than the
#: bounds allow before it is measured.
_FETCH_CHUNK = 64

#: Seconds between two looks at the temp directory's size while a statement runs.
_TEMP_POLL_S = 0.1

#: Seconds between repeated interrupts of a run being stopped.
_REINTERRUPT_S = 0.05

#: Where the project's packages are, for the worker's import path.
_ROOT = Path(__file__).resolve().parents[1]

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

    @property
    def address_space(self) -> int:
        return (self.engine_memory_mb + HEADROOM_MB) * MIB


def freeze(exc: ConnectorError) -> tuple[Any, ...]:
    """`exc` as a message that unpickles whatever its class's __init__ takes, with the engine
    exception behind it (its `__cause__`: callers tell an engine's refusal from a connector's
    own check by it)."""
    cause = exc.__cause__
    if cause is not None:
        try:
            pickle.dumps(cause)
        except Exception:  # an exception that does not pickle: its class name and text
            cause = RuntimeError(f"{type(cause).__name__}: {cause}")
    return ("error", type(exc), exc.args, dict(vars(exc)), cause)


def thaw(
    cls: type[ConnectorError],
    args: tuple[Any, ...],
    state: dict[str, Any],
    cause: BaseException | None = None,
) -> ConnectorError:
    """The ConnectorError `freeze` sent."""
    if not (isinstance(cls, type) and issubclass(cls, ConnectorError)):
        raise TypeError(f"not a connector error: {cls!r}")
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    exc.__cause__ = cause
    return exc


# -- in the worker -----------------------------------------------------------------------------


def main(requests: Connection, replies: Connection, control: Connection) -> None:
    """Open the connection `Spec` names under its address-space limit, then serve runs until
    the parent closes the request pipe."""
    spec: Spec = requests.recv()
    resource.setrlimit(resource.RLIMIT_AS, (spec.address_space, spec.address_space))
    import duckdb  # after the limit, so DuckDB's own start is inside it

    try:
        config = {**spec.config, "temp_directory": spec.temp_dir}
        con = duckdb.connect(spec.path, read_only=True, config=config)
        con.execute("SET lock_configuration = true")
    except (duckdb.Error, MemoryError) as exc:
        replies.send(
            freeze(
                WarehouseUnavailable(
                    f"Cannot open the DuckDB file {spec.path}: {first_line(exc)}",
                    hint="Check that it is a DuckDB file and that no process has it open "
                    "for writing.",
                    engine_message=str(exc),
                )
            )
        )
        return
    replies.send(("ready", None))
    cancels = _Cancels()
    threading.Thread(
        target=cancels.listen, args=(control,), name="querybot-duckdb-cancel", daemon=True
    ).start()
    while True:
        try:
            seq, sql, max_rows, timeout_s, limits = requests.recv()
        except EOFError:
            break
        stop = cancels.started(seq)
        try:
            reply: tuple[Any, ...] = ("ok", _run(con, spec, sql, max_rows, timeout_s, limits, stop))
        except ConnectorError as exc:
            reply = freeze(exc)
        except MemoryError:
            reply = freeze(engine_memory(limits, "MemoryError in the DuckDB worker"))
        cancels.ended()
        try:
            replies.send(reply)
        except MemoryError:
            replies.send(freeze(engine_memory(limits, "MemoryError sending the result")))
    con.close()


class _Cancels:
    """Cancels from the control pipe, each matched to the run it names: the run in progress is
    stopped, and a cancel that came before its run was read is kept until that run starts
    (seqs only grow, so one below the current run's is stale)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seq = -1
        self._stop: threading.Event | None = None
        self._early: set[int] = set()

    def listen(self, control: Connection) -> None:
        """Read cancels until the parent closes the control pipe."""
        while True:
            try:
                seq = control.recv()
            except (EOFError, OSError):
                return
            with self._lock:
                if self._seq == seq and self._stop is not None:
                    self._stop.set()
                elif seq > self._seq:
                    self._early.add(seq)

    def started(self, seq: int) -> threading.Event:
        """The stop event of run `seq`, which starts now: already set if it was cancelled."""
        stop = threading.Event()
        with self._lock:
            self._seq, self._stop = seq, stop
            if seq in self._early:
                stop.set()
            self._early.difference_update([s for s in self._early if s <= seq])
        return stop

    def ended(self) -> None:
        """The run in progress has ended: a cancel of it comes too late to stop anything."""
        with self._lock:
            self._stop = None


def _run(
    con: duckdb.DuckDBPyConnection,
    spec: Spec,
    sql: str,
    max_rows: int,
    timeout_s: float,
    limits: Limits,
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


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


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
    fds = [int(fd) for fd in sys.argv[1:4]]
    main(Connection(fds[0], writable=False), Connection(fds[1], readable=False),
         Connection(fds[2], writable=False))  # fmt: skip
