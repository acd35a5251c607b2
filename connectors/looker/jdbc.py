"""A small generic JDBC runner over `jaydebeapi` and `JPype1` (the optional `looker` extra).

The Java VM starts once per process (JPype cannot start a second one or change its class path),
with the jars the first runner names; a later runner whose jar is missing from it gets a clear
error. Connections are pooled with SQLAlchemy's `QueuePool`, opened read-only
(`Connection.setReadOnly(true)`), and a connection whose run failed is discarded.

A driver may not honour the read-only flag (Looker's runner only tries it), and a JDBC
statement runs in full, committed under autocommit, before the driver says whether it returned
rows. So a statement is refused before it reaches the driver unless its first word, after
spaces and opening parentheses, is SELECT, WITH or VALUES; a leading comment is refused too
(an engine that nests comments could read a different first word).

Each run makes its own `java.sql.Statement` (`createStatement`: HSQLDB, for one, cannot cancel a
running prepared statement), so it can carry `setQueryTimeout` and be cancelled with
`Statement.cancel()` from another thread. A watchdog thread cancels it at the time limit (drivers
do not all honour `setQueryTimeout`, and it does not cover reading the rows) and on
`cancel(job_key)`, again every few milliseconds until the run ends, since a cancel that reaches a
driver before the statement starts is lost. Rows are read through jaydebeapi's cursor and
converters; Java and JDBC exceptions become the errors of `connectors.base`, by SQLSTATE class
and exception type (`connectors.looker.jdbc_errors`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import QueuePool

# Before connectors.looker.jdbc_errors, which needs the bridge too: the message says how to install
# it.
try:
    import jaydebeapi
    import jpype
except ImportError as missing:  # pragma: no cover - exercised by the factory's message test
    raise ImportError(
        "JDBC connectors need the optional Java bridge: install it with "
        "`uv sync --extra looker` (jaydebeapi and JPype1), and a Java runtime."
    ) from missing

from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryCancelled,
    QueryResult,
    QueryTimeout,
    RunContext,
    WarehouseUnavailable,
)
from connectors.limits import Meter, RunLimits
from connectors.looker.jdbc_errors import first_line, message, translate
from connectors.runs import Runs

log = logging.getLogger(__name__)

#: Seconds between repeated cancels of a statement being stopped.
_RECANCEL_S = 0.05
#: Seconds a run waits for a pooled connection before the warehouse counts as busy.
_POOL_WAIT_S = 30.0
#: How a query starts: the only statements a run sends to the driver.
_QUERY_START = re.compile(r"[\s(]*(?:SELECT|WITH|VALUES)\b", re.IGNORECASE)

_JVM_LOCK = threading.Lock()


def start_jvm(jars: Sequence[str | Path]) -> None:
    """Start this process's Java VM with `jars` on its class path, or check the running one has
    them. Raises WarehouseUnavailable when a jar or Java itself is missing."""
    paths = [str(Path(j).expanduser().resolve()) for j in jars]
    for path in paths:
        if not Path(path).is_file():
            raise WarehouseUnavailable(
                f"The JDBC driver jar {path} does not exist.",
                hint="Check the path of the driver jar.",
            )
    with _JVM_LOCK:
        if jpype.isJVMStarted():
            class_path = str(jpype.java.lang.System.getProperty("java.class.path"))
            running = class_path.split(os.pathsep)
            absent = [p for p in paths if p not in running]
            if absent:
                raise WarehouseUnavailable(
                    f"This process's Java VM started without {', '.join(absent)} on its class "
                    "path, and a Java VM cannot be restarted.",
                    hint="Configure every JDBC connector before the first one opens, or restart.",
                )
            return
        try:
            jpype.startJVM(classpath=paths, convertStrings=True)
        except (OSError, jpype.JVMNotFoundException, jpype.JVMNotSupportedException) as exc:
            raise WarehouseUnavailable(
                f"Cannot start a Java VM for the JDBC driver: {exc}",
                hint="Install a Java runtime (e.g. `apt-get install default-jre-headless`) or "
                "set JAVA_HOME.",
                engine_message=str(exc),
            ) from exc


class _Cursor(jaydebeapi.Cursor):
    """jaydebeapi's cursor over a result set this module obtained itself.

    jaydebeapi makes the statement inside `execute`, leaving no way to set a timeout on it or to
    cancel it; this cursor only reads rows (with jaydebeapi's type converters) from a result set
    handed to it. It relies on jaydebeapi 1.2's `_rs`/`_meta` attributes (the version is pinned).
    """

    def adopt(self, result_set: Any) -> None:
        self._rs = result_set
        self._meta = result_set.getMetaData()


class JdbcRunner:
    """Read-only runs and metadata over one JDBC URL.

    `name` is how people know the warehouse ("Looker"). `read_only="require"` fails the open
    when the driver refuses `setReadOnly(true)`; `"try"` logs it and goes on, for interfaces that
    only ever accept SELECT (Looker's documents that). Opening connects once, so a wrong URL,
    jar or login fails here rather than on the first question.
    """

    def __init__(
        self,
        *,
        name: str,
        driver: str,
        url: str,
        jars: Sequence[str | Path],
        properties: Mapping[str, str] | None = None,
        read_only: str = "require",
        pool_size: int = 4,
        unavailable_hint: str = "",
        login_hint: str = "",
        limits: RunLimits | None = None,
    ) -> None:
        if read_only not in ("require", "try"):
            raise ValueError("read_only must be 'require' or 'try'")
        self.name = name
        self._driver = driver
        self._url = url
        self._properties = dict(properties or {})
        self._read_only = read_only
        self._unavailable_hint = unavailable_hint or f"Check that {name} can be reached."
        self._login_hint = login_hint or f"Check the {name} credentials."
        self._runs = Runs()
        self._closed = False
        self.limits = limits or RunLimits()
        start_jvm(jars)
        self._pool = QueuePool(
            self._connect,
            pool_size=pool_size,
            max_overflow=0,
            timeout=_POOL_WAIT_S,
            reset_on_return=None,
        )
        with self.connection():
            pass

    # -- connections -------------------------------------------------------------------------

    def _connect(self) -> Any:
        """A new read-only jaydebeapi connection (the pool's creator)."""
        try:
            conn = jaydebeapi.connect(self._driver, self._url, self._properties)
        except TypeError as exc:  # JPype's "Class ... is not found"
            raise WarehouseUnavailable(
                f"The JDBC driver class {self._driver} is not in the driver jar: {exc}",
                hint="Check that the jar is the driver's own jar.",
            ) from exc
        except jpype.JException as exc:
            raise self._translate(exc, connecting=True) from exc
        try:
            conn.jconn.setReadOnly(True)
        except jpype.JException as exc:
            if self._read_only == "require":
                with contextlib.suppress(Exception):
                    conn.close()
                raise WarehouseUnavailable(
                    f"The {self.name} driver cannot open a read-only connection: {first_line(exc)}",
                    hint="Use a driver that supports read-only connections.",
                    engine_message=message(exc),
                ) from exc
            log.info("%s: setReadOnly(true) refused (%s); relying on SELECT-only", self.name, exc)
        return conn

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled jaydebeapi connection; discarded, not pooled again, if its work failed."""
        if self._closed:
            raise WarehouseUnavailable(f"The {self.name} connector is closed.", hint="Restart.")
        try:
            proxied = self._pool.connect()
        except sa_exc.TimeoutError as exc:
            raise WarehouseUnavailable(
                f"All connections to {self.name} are busy.",
                hint="Try again when the running queries have finished.",
            ) from exc
        try:
            yield proxied.dbapi_connection
        except BaseException:
            proxied.invalidate()
            raise
        proxied.close()

    # -- runs --------------------------------------------------------------------------------

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        """Run one statement: keep `max_rows` rows, count the rest, stop at `timeout_s`."""
        if max_rows < 0:
            raise ValueError("max_rows must not be negative")
        if not _QUERY_START.match(sql):
            first = sql.split(None, 1)[0][:30] if sql.strip() else "nothing"
            raise PermissionDenied(
                f"{self.name} runs queries only, and this statement starts with {first!r}, not "
                "SELECT or WITH; it was not sent.",
                hint="Send one SELECT (without a comment before it).",
            )
        started = time.perf_counter()
        with self._runs.track(context.job_key if context else "") as run:
            if run.cancelled:
                raise QueryCancelled()
            with self.connection() as conn:
                stop = threading.Event()
                timed_out = threading.Event()
                try:
                    statement = conn.jconn.createStatement()
                except jpype.JException as exc:
                    raise self._translate(exc) from exc
                with contextlib.suppress(jpype.JException):  # not every driver has it
                    statement.setQueryTimeout(max(1, math.ceil(timeout_s)))
                self._runs.arm(run, stop.set)
                try:
                    with _watchdog(statement, stop, timed_out, timeout_s):
                        result = self._execute(conn, statement, sql, max_rows)
                except jpype.JException as exc:
                    if run.cancelled:
                        raise QueryCancelled() from exc
                    elapsed = time.perf_counter() - started
                    if timed_out.is_set() or elapsed >= timeout_s:
                        raise QueryTimeout(timeout_s) from exc
                    raise self._translate(exc, timeout_s=timeout_s) from exc
                finally:
                    self._runs.disarm(run)
                    with contextlib.suppress(jpype.JException):
                        statement.close()
            if run.cancelled:  # the cancel came as the statement ended: it still wins
                raise QueryCancelled()
        columns, types, rows, total = result
        return QueryResult(
            columns=columns,
            rows=rows,
            total_rows=total,
            elapsed_s=time.perf_counter() - started,
            column_types=types,
        )

    def _execute(
        self, conn: Any, statement: Any, sql: str, max_rows: int
    ) -> tuple[list[str], list[str], list[tuple[Any, ...]], int]:
        if not statement.execute(sql):
            raise PermissionDenied(
                f"{self.name} ran this as a statement that returns no rows; only queries may run.",
                hint="Send one SELECT.",
            )
        result_set = statement.getResultSet()
        meta = result_set.getMetaData()
        count = meta.getColumnCount()
        columns = [str(meta.getColumnLabel(i)) for i in range(1, count + 1)]
        types = [str(meta.getColumnTypeName(i)) for i in range(1, count + 1)]
        cursor = _Cursor(conn, conn._converters)
        cursor.adopt(result_set)
        # One row converted and measured at a time; the rest are counted, not converted.
        meter = Meter(self.limits, lambda: columns)
        rows = meter.keep(map(_plain_row, iter(cursor.fetchone, None)), max_rows)
        total = len(rows)
        while result_set.next():  # counted, not converted
            total += 1
        result_set.close()
        return columns, types, rows, total

    def metadata(self, method: str, *args: Any) -> list[dict[str, Any]]:
        """The rows of one `DatabaseMetaData` method (`getTables`, `getColumns`...) as dicts
        keyed by the result's column labels, including any driver-specific columns."""
        with self.connection() as conn:
            try:
                result_set = getattr(conn.jconn.getMetaData(), method)(*args)
                meta = result_set.getMetaData()
                labels = [str(meta.getColumnLabel(i)) for i in range(1, meta.getColumnCount() + 1)]
                cursor = _Cursor(conn, conn._converters)
                cursor.adopt(result_set)
                rows = [
                    dict(zip(labels, _plain_row(row), strict=True)) for row in cursor.fetchall()
                ]
                result_set.close()
            except jpype.JException as exc:
                raise self._translate(exc) from exc
        return rows

    def cancel(self, job_key: str) -> bool:
        """Stop the run started with `job_key`, if it still runs."""
        return self._runs.cancel(job_key)

    def close(self) -> None:
        self._closed = True
        self._pool.dispose()

    def _translate(
        self, exc: Any, *, connecting: bool = False, timeout_s: float = 0.0
    ) -> ConnectorError:
        return translate(
            exc,
            name=self.name,
            connecting=connecting,
            timeout_s=timeout_s,
            unavailable_hint=self._unavailable_hint,
            login_hint=self._login_hint,
        )


@contextmanager
def _watchdog(
    statement: Any, stop: threading.Event, timed_out: threading.Event, timeout_s: float
) -> Iterator[None]:
    """Cancel `statement` once `timeout_s` passes or `stop` is set, until the block ends."""
    done = threading.Event()

    def watch() -> None:
        if not stop.wait(timeout_s):
            timed_out.set()
        while not done.is_set():
            with contextlib.suppress(Exception):
                statement.cancel()
            done.wait(_RECANCEL_S)

    thread = threading.Thread(target=watch, name="querybot-jdbc-watchdog", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        stop.set()
        thread.join()  # never cancel a statement after it is closed


def _plain_row(row: Sequence[Any]) -> tuple[Any, ...]:
    """A row of plain Python values: jaydebeapi hands some back as JPype's boxed Java objects
    (a `java.lang.Double` is a float subclass), which the thread's state cannot serialise."""
    return tuple(_plain(value) for value in row)


def _plain(value: Any) -> Any:
    if value is None or type(value) in (bool, int, float, str):
        return value
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, jpype.JObject) and hasattr(value, "booleanValue"):
        return bool(value.booleanValue())
    return str(value)
