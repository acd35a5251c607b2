"""SQLite warehouse statements run in worker processes, so their time bound is hard.

SQLite looks at a deadline (its progress handler, and `sqlite3_interrupt` likewise) only between
steps of its virtual machine, and one step can take seconds: twelve `instr()` calls on megabyte
strings in one expression ran 65 s against a 3 s timeout in the bot's own process, and nothing
in the process could stop them. So `SqlConnector.run` hands each statement on a SQLite file to a
worker (a `Pool`, the machinery DuckDB uses): a fresh interpreter under RLIMIT_AS
(`engine_memory_mb` + `HEADROOM_MB`, the per-run memory bound SQLite lacks) that opens the file as
the connector always did (`open_connection`), runs the statement with the progress-handler deadline
(`sqlite_guard.set_deadline`) and meters its rows with `connectors.limits.Meter`. A worker that has
not answered `worker_proc.GRACE_S` after its timeout or a cancel is killed and replaced: that is the
bound, whatever one step costs.

`SQLiteRuns` is the engine's side of a run, shared by the worker and the connector's own
catalog reads (`SQLiteFlavor` extends it); this module imports no SQLAlchemy or sqlglot, so a
worker starts quickly.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryResult,
    QueryTimeout,
    WarehouseUnavailable,
)
from connectors.limits import MIB, Meter, RunLimits, cell_too_large, engine_memory
from connectors.sql.sqlite_guard import clear_deadline, open_readonly, set_deadline
from connectors.workers import proc as worker_proc
from connectors.workers.proc import first_line

#: Address space a worker may use past its engine memory: the interpreter and sqlite3 (about
#: 30 MiB), SQLite's page cache, the rows read and the result being pickled back.
HEADROOM_MB = 512

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


@dataclass(frozen=True)
class Spec:
    """What a SQLite worker opens: the file, with the connector's limits."""

    path: str
    limits: RunLimits

    engine: ClassVar[str] = "SQLite"
    module: ClassVar[str] = "connectors.sql.sqlite_worker"

    @property
    def address_space(self) -> int:
        return (self.limits.engine_memory_mb + HEADROOM_MB) * MIB

    def for_worker(self, number: int) -> Spec:
        """Every worker opens the same file the same way."""
        return self

    def clean_up(self) -> None:
        """A SQLite worker leaves nothing behind (its temp files go with its handles)."""


def open_connection(path: Path, limits: RunLimits) -> sqlite3.Connection:
    """A warehouse connection: read-only behind the authorizer, and no value longer than the
    cell bound (SQLITE_LIMIT_LENGTH: SQLite refuses to build it, before it exists)."""
    con = open_readonly(path)
    con.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limits.max_cell_bytes)
    return con


class SQLiteRuns:
    """How a statement runs on a SQLite file and how its errors read."""

    def __init__(self, path: Path, limits: RunLimits) -> None:
        self.path = path
        self.limits = limits

    def begin(
        self, con: sqlite3.Connection, timeout_s: float, stop: threading.Event | None = None
    ) -> None:
        set_deadline(con, timeout_s, stop)

    def execute(self, con: sqlite3.Connection, sql: str) -> tuple[sqlite3.Cursor, Iterator[Any]]:
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

    def end(self, con: sqlite3.Connection) -> None:
        clear_deadline(con)

    def translate(self, exc: BaseException, timeout_s: float) -> ConnectorError:
        text = str(exc)
        code = getattr(exc, "sqlite_errorname", "") or ""
        if code == "SQLITE_INTERRUPT":  # the deadline, unless a cancel did (see `_run`)
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


# -- in the worker -----------------------------------------------------------------------------


def _open(spec: Spec) -> sqlite3.Connection:
    runs = SQLiteRuns(Path(spec.path), spec.limits)
    try:
        con = open_connection(runs.path, spec.limits)
        # Opening is lazy: reading the schema is what finds a file that is not a database.
        con.execute("SELECT count(*) FROM main.sqlite_master").fetchall()
    except sqlite3.Error as exc:
        raise WarehouseUnavailable(
            f"Cannot open the SQLite file {spec.path}: {first_line(exc)}",
            hint=runs.unavailable_hint(),
            engine_message=str(exc),
        ) from exc
    return con


def _run(
    con: sqlite3.Connection,
    spec: Spec,
    sql: str,
    max_rows: int,
    timeout_s: float,
    limits: RunLimits,
    stop: threading.Event,
) -> QueryResult:
    """Run `sql` under the deadline, stopped early by `stop` (a cancel), every row metered."""
    runs = SQLiteRuns(Path(spec.path), limits)
    started = time.perf_counter()
    runs.begin(con, timeout_s, stop)
    cursor = None
    try:
        cursor, stream = runs.execute(con, sql)
        meter = Meter(limits, lambda: runs.describe(con, cursor, sql)[0])
        rows, total = meter.read(stream, max_rows)
        columns, types = runs.describe(con, cursor, sql)
    except sqlite3.Error as exc:
        if stop.is_set() and getattr(exc, "sqlite_errorname", "") == "SQLITE_INTERRUPT":
            raise QueryCancelled() from exc
        raise runs.translate(exc, timeout_s) from exc
    finally:
        if cursor is not None:
            runs.abandon(con, cursor, iter(()))
        runs.end(con)
    return QueryResult(
        columns=columns,
        rows=rows,
        total_rows=total,
        elapsed_s=time.perf_counter() - started,
        column_types=types,
    )


if __name__ == "__main__":
    worker_proc.main(_open, _run)
