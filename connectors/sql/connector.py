"""SQL databases from a URL through SQLAlchemy: PostgreSQL, MySQL/MariaDB and SQLite.

Safety does not rest on the agent's gate: every run is a read-only transaction with a statement
time limit, on a session that is read-only too, with a login checked when the connector opens
(PostgreSQL, MySQL) or behind an authorizer (SQLite); see the flavor modules for each engine.
SQLAlchemy supplies URL parsing and the connection pool; statements go to the DB-API driver
connection unchanged. A run that fails discards its connection, so no session state it may have
changed (or a half-read result) reaches the next run. `cancel` stops a run by its job key the
flavor's way (from another connection). SQLite runs in worker processes instead (`SQLiteRuns`),
which meter the rows the same way and are killed when a statement overruns: its deadline is only
seen between steps, and one step can take seconds.

The pool is what protects the warehouse: at most `pool_size` statements run on it at once, however
many of the bot's workers ask. A run that finds every connection busy queues for one for up to its
own time limit (a queued run can be cancelled); only then does it fail, saying so.

Results are read a row at a time, each measured against `RunLimits` as it arrives, so the bot never
holds more than one row past the bytes it keeps (rows past the cap are counted and measured, not
kept); each flavor applies the engine's own memory bounds in `begin`.
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, make_url

from connectors.base import (
    ConnectorError,
    CostEstimate,
    PermissionDenied,
    QueryCancelled,
    QueryResult,
    QueryTimeout,
    RunContext,
    TableInfo,
    TableProfile,
    WarehouseUnavailable,
    find_table,
)
from connectors.limits import Meter, ResourceLimitExceeded, RunLimits
from connectors.runs import Run, Runs
from connectors.sql.flavor import ActsAsFlavor, Flavor, first_line
from connectors.sql.watchdog import Watchdog
from connectors.units import counted
from connectors.workers.pool import Pool, StartsWorkers

#: Time allowed for the one catalog pass that builds the table list.
_METADATA_TIMEOUT_S = 60.0

#: URL backend -> drivers accepted after `+` (None: no driver named).
_DRIVERS: dict[str, frozenset[str | None]] = {
    "postgresql": frozenset({None, "psycopg"}),
    # Heroku-style and libpq URLs: SQLAlchemy dropped the alias, people still paste it.
    "postgres": frozenset({None}),
    "mysql": frozenset({None, "pymysql"}),
    "mariadb": frozenset({None, "pymysql"}),
    "sqlite": frozenset({None, "pysqlite"}),
}

URL_FORMS = (
    "postgresql://USER@HOST[:PORT]/DB (or postgres://), "
    "mysql://USER@HOST[:PORT]/DB (or mariadb://), sqlite:///PATH"
)


class SqlConnector:
    """A read-only PostgreSQL, MySQL/MariaDB or SQLite database, from a SQLAlchemy-style URL.

    `postgresql://` (or `postgres://`) uses psycopg 3, `mysql://` and `mariadb://` PyMySQL,
    `sqlite:///PATH` the standard library. Opening connects once, so a wrong host, password or
    file (and a login too powerful to be held read-only) fails here rather than on the first
    question.
    """

    def __init__(self, url: str, *, pool_size: int = 4, limits: RunLimits | None = None) -> None:
        if pool_size < 1:
            raise ValueError("pool_size must be at least 1")
        self.limits = limits or RunLimits()
        self._flavor = flavor_for(url, self.limits)
        self.name: str = self._flavor.name
        self.dialect: str = self._flavor.dialect
        #: PostgreSQL and MySQL/MariaDB run a statement as the role `RunContext.identity` names.
        self._roles = self._flavor if isinstance(self._flavor, ActsAsFlavor) else None
        self.acts_as_identities: bool = self._roles is not None
        self._pool_size = pool_size
        self._engine = self._flavor.create_engine(pool_size)
        #: Where runs go instead of a pooled connection, for an engine that needs a process.
        self._workers: Pool | None = None
        if isinstance(self._flavor, StartsWorkers):
            self._workers = self._flavor.workers(pool_size)
        self._closed = False
        #: Connections taken from the pool; runs wait here, never in the pool (whose wait
        #: neither a cancel nor the run's own time limit could end).
        self._free = threading.Condition()
        self._in_use = 0
        self._tables_lock = threading.Lock()
        self._tables: list[TableInfo] | None = None
        self._runs = Runs()
        self._run_ids = itertools.count(1)
        try:
            with self._connection(_METADATA_TIMEOUT_S, keep=False) as con:
                self._flavor.check_login(con)
        except BaseException:
            self.close()
            raise

    def list_tables(self) -> list[TableInfo]:
        """Every table and view the login may read, read in one pass and then cached."""
        with self._tables_lock:
            if self._tables is None:
                with self._connection(_METADATA_TIMEOUT_S) as con:
                    self._flavor.begin(con, _METADATA_TIMEOUT_S)
                    tables = self._flavor.read_tables(con)
                    self._flavor.end(con)
                self._tables = tables
            return list(self._tables)

    def describe(self, table: str) -> TableInfo:
        """A table by qualified (`schema.table`) or bare name, ignoring case and quotes."""
        return find_table(self.list_tables(), table, qualify_hint="Qualify it with its schema.")

    def statistics(self, tables: Sequence[TableInfo], *, values: int) -> dict[str, TableProfile]:
        """Profiles from what the engine keeps (PostgreSQL's pg_stats, MySQL's and MariaDB's
        histograms and index statistics; nothing for SQLite), in one catalog pass."""
        with self._connection(_METADATA_TIMEOUT_S) as con:
            self._flavor.begin(con, _METADATA_TIMEOUT_S)
            profiles = self._flavor.read_statistics(con, tables, values)
            self._flavor.end(con)
        return profiles

    def unreadable(self, identity: str, tables: Sequence[str]) -> list[str]:
        """Those of `tables` (catalog names) the role `identity` may not SELECT from; a name the
        catalog does not know counts as unreadable. PermissionDenied when the login may not act
        as `identity`, or the engine has no roles querybot can act as."""
        roles = self._role_flavor(identity)
        known = {t.name: t for t in self.list_tables()}
        found = [known[name] for name in tables if name in known]
        with self._connection(_METADATA_TIMEOUT_S) as con:
            self._flavor.begin(con, _METADATA_TIMEOUT_S)
            refused = roles.unreadable(con, identity, found)
            self._flavor.end(con)
        return [name for name in tables if name not in known or name in refused]

    def _role_flavor(self, identity: str) -> ActsAsFlavor:
        if self._roles is None:
            raise PermissionDenied(
                f"querybot cannot run queries as {identity!r} on {self.name}: it has no roles "
                "to act as.",
                hint="Give each identity a table allowlist (run_as.tables in the config file), "
                "or remove run_as from this warehouse.",
            )
        return self._roles

    def estimate(self, sql: str) -> CostEstimate | None:
        """These engines bill nothing per query and have no cheap byte estimate."""
        return None

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        """Run one statement read-only: keep `max_rows` rows, count the rest, stop at timeout.

        The time limit is enforced by the engine and covers streaming the rows being counted.
        A `Watchdog` stops the statement the way `cancel` does if it is still running `GRACE_S`
        after the limit (one statement can lift the engine's limit, e.g. MariaDB's
        `SET STATEMENT max_statement_time=0 FOR ...`), and cuts the connection `GRACE_S` later if
        even that did not end it (one call the engine cannot interrupt). `context.job_key` names the
        run for `cancel`; these engines keep no job records to label. When every pooled connection
        is busy the run first waits up to `timeout_s` for one (that wait does not count against the
        statement's limit).
        """
        if max_rows < 0:
            raise ValueError("max_rows must not be negative")
        identity = context.identity if context else ""
        roles = self._role_flavor(identity) if identity else None
        started = time.perf_counter()
        key = (context.job_key if context else "") or f"querybot-run-{next(self._run_ids)}"
        if self._workers is not None:
            return self._run_in_worker(self._workers, sql, max_rows, timeout_s, key)
        with self._runs.track(key) as run:
            watchdog: Watchdog | None = None
            try:
                with self._connection(timeout_s, run=run) as con:
                    watchdog = Watchdog(timeout_s, functools.partial(self._runs.cancel, key), con)
                    watchdog.start()
                    try:
                        self._flavor.begin(con, timeout_s)
                        if roles is not None:
                            roles.act_as(con, identity)
                        # Armed as late as possible: a cancel sent to an idle server is lost.
                        self._runs.arm(run, self._flavor.stopper(self._engine, con))
                        try:
                            if run.cancelled:
                                raise QueryCancelled()
                            cursor, stream = self._flavor.execute(con, sql)
                            meter = Meter(self.limits, lambda: _names(cursor))
                            try:
                                rows = meter.keep(stream, max_rows)
                                total = len(rows) + meter.count(stream)
                            except ResourceLimitExceeded:
                                self._flavor.abandon(con, cursor, stream)
                                raise
                        finally:
                            self._runs.disarm(run)
                        if run.cancelled:  # e.g. MySQL's SLEEP() returns normally when killed
                            raise QueryCancelled()
                        columns, types = self._flavor.describe(con, cursor, sql)
                        cursor.close()
                        self._flavor.end(con)
                    finally:
                        watchdog.stop()  # before `con` goes back to the pool
            except ConnectorError as exc:
                if watchdog is not None and watchdog.expired.is_set():
                    raise QueryTimeout(timeout_s) from exc
                # Whatever the engine called it (a user request, an interrupt), it was the cancel.
                if run.cancelled and not isinstance(exc, QueryCancelled):
                    raise QueryCancelled() from exc
                raise
        return QueryResult(
            columns=columns,
            rows=rows,
            total_rows=total,
            elapsed_s=time.perf_counter() - started,
            column_types=types,
        )

    def _run_in_worker(
        self, workers: Pool, sql: str, max_rows: int, timeout_s: float, key: str
    ) -> QueryResult:
        """`run` in a worker process, which meters the rows and translates the engine's errors;
        it is killed `worker_proc.GRACE_S` after the timeout or a cancel if still running. The
        run holds one of the `pool_size` slots meanwhile, as a run on a connection does."""
        with self._runs.track(key) as run:
            try:
                with self._slot(timeout_s, run):
                    try:
                        result = workers.run(
                            sql,
                            max_rows=max_rows,
                            timeout_s=timeout_s,
                            limits=self.limits,
                            arm=functools.partial(self._runs.arm, run),
                        )
                    finally:
                        self._runs.disarm(run)
            except ConnectorError as exc:
                if run.cancelled and not isinstance(exc, QueryCancelled):
                    raise QueryCancelled() from exc
                raise
            if run.cancelled:  # the cancel came as the statement ended: it still wins
                raise QueryCancelled()
        return result

    def cancel(self, job_key: str) -> bool:
        """Stop the run started with `job_key`, if it still runs."""
        return self._runs.cancel(job_key)

    def close(self) -> None:
        with self._free:
            self._closed = True
            self._free.notify_all()  # queued runs fail now, not at the end of their wait
        if self._workers is not None:
            self._workers.close()
        self._engine.dispose()

    @contextmanager
    def _connection(
        self, timeout_s: float, *, keep: bool = True, run: Run | None = None
    ) -> Iterator[Any]:
        """A pooled driver connection, once one is free; engine errors become connector errors.

        A connection whose work failed is discarded, not returned to the pool; so is one used
        with `keep=False` (the login check changes session state).
        """
        with self._slot(timeout_s, run), self._checked_out(timeout_s, keep=keep) as con:
            yield con

    @contextmanager
    def _slot(self, wait_s: float, run: Run | None) -> Iterator[None]:
        """One of the `pool_size` slots, held for the block (see `_take_slot`)."""
        self._take_slot(wait_s, run)
        try:
            yield
        finally:
            with self._free:
                self._in_use -= 1
                self._free.notify()

    def _take_slot(self, wait_s: float, run: Run | None) -> None:
        """Wait up to `wait_s` until fewer than `pool_size` connections are taken, then take
        one. A cancel of `run` ends the wait (QueryCancelled)."""

        def wake() -> None:
            with self._free:
                self._free.notify_all()

        def ready() -> bool:
            cancelled = run is not None and run.cancelled
            return cancelled or self._closed or self._in_use < self._pool_size

        if run is not None:
            # Not under self._free: a cancel calls `wake` while holding the runs' lock.
            self._runs.arm(run, wake)
        try:
            with self._free:
                free = self._free.wait_for(ready, timeout=wait_s)
                if run is not None and run.cancelled:
                    raise QueryCancelled()
                if self._closed:
                    raise WarehouseUnavailable(
                        f"The {self.name} connector is closed.", hint="Restart the bot."
                    )
                if not free:
                    count = counted(self._pool_size, "connection")
                    raise WarehouseUnavailable(
                        f"The query did not start: querybot's {count} to the {self.name} "
                        f"database stayed busy with other queries for {wait_s:g} s.",
                        hint="Ask again in a few minutes. If it keeps happening, the database is "
                        "overloaded or its queries are slow: tell whoever runs querybot.",
                    )
                self._in_use += 1
        finally:
            if run is not None:
                self._runs.disarm(run)

    @contextmanager
    def _checked_out(self, timeout_s: float, *, keep: bool) -> Iterator[Any]:
        """A connection from the pool, which always has one free for a run holding a slot."""
        failures: tuple[type[BaseException], ...] = (sa_exc.DBAPIError, *self._flavor.errors)
        try:
            proxied = self._engine.raw_connection()
        except failures as exc:
            # The pool raises the driver's own exception; an engine would wrap it.
            cause = exc.orig if isinstance(exc, sa_exc.DBAPIError) and exc.orig is not None else exc
            raise WarehouseUnavailable(
                f"Cannot connect to the {self.name} database: {first_line(cause)}",
                hint=self._flavor.unavailable_hint(),
                engine_message=str(cause),
            ) from exc
        try:
            yield proxied.driver_connection
        except self._flavor.errors as exc:
            proxied.invalidate()
            raise self._flavor.translate(exc, timeout_s) from exc
        except BaseException:
            proxied.invalidate()
            raise
        if keep:
            proxied.close()
        else:
            proxied.invalidate()


def _names(cursor: Any) -> list[str]:
    return [d[0] for d in getattr(cursor, "description", None) or ()]


def flavor_for(url: str, limits: RunLimits | None = None) -> Flavor:
    """The engine flavor for a database URL; ValueError when the URL is not one we support."""
    try:
        parsed = make_url(url)
    except sa_exc.ArgumentError as exc:
        # Not echoed: the text may hold a password.
        raise ValueError(f"Not a database URL. Supported forms: {URL_FORMS}.") from exc
    backend, _, driver = parsed.drivername.partition("+")
    if backend not in _DRIVERS or (driver or None) not in _DRIVERS[backend]:
        raise ValueError(f"Unsupported database URL {_safe(parsed)}. Supported forms: {URL_FORMS}.")
    if backend in ("postgresql", "postgres"):
        from connectors.sql.postgres import PostgresFlavor

        return PostgresFlavor(parsed, limits or RunLimits())
    if backend == "sqlite":
        from connectors.sql.sqlite import SQLiteFlavor

        return SQLiteFlavor(parsed, limits or RunLimits())
    from connectors.sql.mysql import MySQLFlavor

    return MySQLFlavor(parsed, limits or RunLimits())


def _safe(url: URL) -> str:
    return url.render_as_string(hide_password=True)
