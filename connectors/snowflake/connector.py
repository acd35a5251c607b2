"""Snowflake through `snowflake-connector-python`, run the way a data team would allow it.

Snowflake has no read-only session, so nothing but one query over the listed schemas is ever
sent (snowflake_sql); the role should hold only USAGE and SELECT besides (README, "Snowflake").
Before approval, `EXPLAIN USING JSON` gives the micro-partitions and bytes a query will read and
the warehouse's size gives its rate, and a query that would read more than the cap is not
offered. A run logs in with its own session, whose STATEMENT_TIMEOUT_IN_SECONDS and QUERY_TAG
(app, proposal, requester, approver) are set at login; it is submitted asynchronously, so its
query id is known at once: `cancel` sends SYSTEM$CANCEL_QUERY for it, and a repeated approval
reads the first run's result (remembered here, or found in QUERY_HISTORY by its tag) instead of
running again. Results are read in Arrow batches within the row and byte bounds.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import snowflake.connector
from snowflake.connector import errors as sf
from snowflake.connector.constants import FIELD_ID_TO_NAME

from connectors.base import (
    ConnectorError,
    CostEstimate,
    QueryCancelled,
    QueryFailed,
    QueryResult,
    RunContext,
    TableInfo,
    TableProfile,
    find_table,
)
from connectors.limits import Meter, RunLimits
from connectors.runs import Runs
from connectors.settings import SF_MAX_BYTES_SCANNED
from connectors.snowflake import metadata as meta
from connectors.snowflake import session
from connectors.snowflake.errors import translate
from connectors.snowflake.runs import FirstRuns
from connectors.snowflake.sql import Scope, check_schemas, check_tables, parse
from connectors.units import byte_size

log = logging.getLogger(__name__)

_ACCOUNT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,254}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]{0,254}")
#: Seconds between status polls of a running query: fast at first, then every second.
_POLLS = (0.05, 0.1, 0.2, 0.5, 1.0)
Connect = Callable[..., Any]


class SnowflakeConnector:
    """Read-only Snowflake SQL over the listed schemas of one database; the first schema is the
    session's own, so its tables may be named bare."""

    name = "snowflake"
    dialect = "snowflake"

    def __init__(
        self,
        account: str,
        *,
        database: str,
        schemas: Sequence[str],
        warehouse: str,
        credentials: session.Credentials,
        role: str | None = None,
        max_bytes_scanned: int = SF_MAX_BYTES_SCANNED,
        job_timeout_s: float = 300,
        metadata_ttl_s: float = 600,
        endpoint: str | None = None,
        limits: RunLimits | None = None,
        connect: Connect = snowflake.connector.connect,
    ) -> None:
        if not _ACCOUNT.fullmatch(account):
            raise ValueError(f"{account!r} is not a Snowflake account identifier.")
        names = [database, warehouse, *schemas, *([role] if role else [])]
        if bad := [n for n in names if not _NAME.fullmatch(n)]:
            raise ValueError(f"{bad[0]!r} is not a plain Snowflake identifier.")
        if not schemas:
            raise ValueError("Name at least one schema the bot may query.")
        if max_bytes_scanned <= 0 or job_timeout_s <= 0:
            raise ValueError("The bytes cap and the timeout must be positive.")
        self.account = account
        self.scope = Scope(database.upper(), tuple(s.upper() for s in schemas))
        self.warehouse = warehouse.upper()
        self.role = role.upper() if role else None
        self.max_bytes_scanned = max_bytes_scanned
        self.job_timeout_s = job_timeout_s
        self.metadata_ttl_s = metadata_ttl_s
        self.limits = limits or RunLimits()
        self._credentials = credentials
        self._endpoint = session.endpoint_parameters(endpoint) if endpoint else {}
        self._connect = connect
        self._lock = threading.Lock()
        self._control: Any = None
        self._tables: tuple[float, tuple[TableInfo, ...]] | None = None
        self._warehouse_size: tuple[float, str | None] | None = None
        self._runs = Runs()
        self._first = FirstRuns(self.scope.database, self._fetch)

    # -- sessions ----------------------------------------------------------------------------

    def open_session(self, tag: str, timeout_s: float) -> Any:
        """A new session with `tag` and a statement timeout set at login."""
        try:
            return self._connect(
                account=self.account,
                database=self.scope.database,
                schema=self.scope.schemas[0],
                warehouse=self.warehouse,
                **({"role": self.role} if self.role else {}),
                **self._credentials.parameters(),
                **self._endpoint,
                session_parameters=session.session_parameters(tag, timeout_s),
                login_timeout=min(timeout_s, 60),
                # The driver retries failed requests (a 5xx) within this, never past the run.
                network_timeout=timeout_s,
                client_session_keep_alive=False,
            )
        except sf.Error as exc:
            raise translate(exc, timeout_s=timeout_s) from exc

    def _control_session(self) -> Any:
        """The shared session for metadata, EXPLAIN and cancels (opened on first use)."""
        if self._control is None:
            tag = session.query_tag("", {"purpose": "metadata"})
            self._control = self.open_session(tag, self.job_timeout_s)
        return self._control

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of one of the connector's own statements, on the control session."""
        with self._lock:
            try:
                cursor = self._control_session().cursor()
                try:
                    cursor.execute(sql, tuple(params) or None, timeout=self.job_timeout_s)
                    return [tuple(row) for row in cursor.fetchall()]
                finally:
                    cursor.close()
            except sf.Error as exc:
                raise translate(exc, timeout_s=self.job_timeout_s) from exc

    # -- metadata ----------------------------------------------------------------------------

    def list_tables(self) -> list[TableInfo]:
        """Every table and view of the listed schemas, named `DATABASE.SCHEMA.TABLE`."""
        now = time.monotonic()
        if self._tables is None or now - self._tables[0] >= self.metadata_ttl_s:
            schemas = self.scope.schemas
            tables = self._fetch(meta.tables_sql(self.scope.database, schemas), schemas)
            columns = self._fetch(meta.columns_sql(self.scope.database, schemas), schemas)
            self._tables = (now, meta.assemble(self.scope.database, tables, columns))
        return list(self._tables[1])

    def describe(self, table: str) -> TableInfo:
        """A table by `DATABASE.SCHEMA.TABLE`, `SCHEMA.TABLE` or bare name, ignoring case."""
        return find_table(self.list_tables(), table, qualify_hint="Qualify it as SCHEMA.TABLE.")

    def statistics(self, tables: Sequence[TableInfo], *, values: int) -> dict[str, TableProfile]:
        """Row counts from INFORMATION_SCHEMA.TABLES (metadata: no warehouse time); Snowflake
        keeps no column statistics a role can read, so values are left to the catalog."""
        wanted = {t.name for t in tables}
        return {
            t.name: TableProfile(t.row_count)
            for t in self.list_tables()
            if t.name in wanted and t.row_count is not None
        }

    # -- before approval ---------------------------------------------------------------------

    def estimate(self, sql: str) -> CostEstimate | None:
        """What EXPLAIN says the query reads, the warehouse's rate, and a refusal over the cap."""
        self._check(sql)
        figures = self._plan(sql)
        if figures is None:
            return None
        notes = (meta.plan_note(figures), meta.warehouse_note(self.warehouse, self.size()))
        refusal = ""
        if figures.bytes_assigned > self.max_bytes_scanned:
            refusal = self._over_cap(figures, "it was not offered for approval")
        return CostEstimate(figures.bytes_assigned, None, notes, refusal)

    def _plan(self, sql: str) -> meta.Plan | None:
        try:
            rows = self._fetch(f"EXPLAIN USING JSON {sql}")
        except ConnectorError as exc:
            if not self._endpoint:
                raise
            # A stand-in (SNOWFLAKE_ENDPOINT) without EXPLAIN, such as fakesnow: no estimate.
            log.warning("EXPLAIN failed on %s, so no estimate: %s", self._endpoint, exc)
            return None
        return meta.plan(str(rows[0][0]) if rows else "")

    def _over_cap(self, figures: meta.Plan, outcome: str) -> str:
        return (
            f"This query would read {byte_size(figures.bytes_assigned)} "
            f"({figures.partitions_assigned:,} of {figures.partitions_total:,} micro-partitions), "
            f"more than the {byte_size(self.max_bytes_scanned)} this bot may read per query, so "
            f"{outcome}. To make it cheaper: filter on the columns the table is clustered by, "
            "select fewer columns, aggregate, or ask about a shorter period."
        )

    def size(self) -> str | None:
        """The warehouse's size as SHOW WAREHOUSES writes it (`X-Small`), None when unknown."""
        now = time.monotonic()
        if self._warehouse_size is None or now - self._warehouse_size[0] >= self.metadata_ttl_s:
            found: str | None = None
            with self._lock:
                cursor = self._control_session().cursor()
                try:
                    cursor.execute("SHOW WAREHOUSES LIKE %s", (self.warehouse,))
                    names = [d.name.lower() for d in cursor.description or ()]
                    for row in cursor.fetchall() if {"name", "size"} <= set(names) else ():
                        if str(row[names.index("name")]).upper() == self.warehouse:
                            found = str(row[names.index("size")])
                except sf.Error as exc:
                    log.warning("SHOW WAREHOUSES failed: %s", exc)
                finally:
                    cursor.close()
            self._warehouse_size = (now, found)
        return self._warehouse_size[1]

    # -- after approval ----------------------------------------------------------------------

    def run(
        self, sql: str, *, max_rows: int, timeout_s: float, context: RunContext | None = None
    ) -> QueryResult:
        """Run one approved query in its own tagged session, keeping at most `max_rows` rows.

        With `context.job_key`, a query already started for that key (here, or by another
        replica, found in QUERY_HISTORY by its tag) is read instead of run again.
        """
        if max_rows < 0:
            raise ValueError("max_rows must not be negative")
        self._check(sql)
        context = context or RunContext()
        if not context.job_key:  # nobody approved it (a profiling scan): nobody saw its cost
            figures = self._plan(sql)
            if figures is not None and figures.bytes_assigned > self.max_bytes_scanned:
                raise QueryFailed(self._over_cap(figures, "it was not run"))
        timeout = min(timeout_s, self.job_timeout_s)
        started = time.perf_counter()
        with self._runs.track(context.job_key) as run:
            earlier = self._first.find(context.job_key, sql)
            tag = session.query_tag(context.job_key, context.labels)
            conn = self.open_session(tag, timeout)
            try:
                cursor = conn.cursor()
                try:
                    if earlier is None:
                        cursor.execute_async(sql, timeout=timeout)
                        query_id = str(cursor.sfqid)
                        self._first.remember(context.job_key, sql, query_id)
                    else:
                        query_id = earlier
                    self._runs.arm(run, partial(self._cancel_query, query_id))
                    self._wait(conn, query_id, started + timeout, timeout)
                    cursor.get_results_from_sfqid(query_id)
                    rows = self._read(cursor, max_rows)
                except sf.Error as exc:
                    if run.cancelled:
                        raise QueryCancelled() from exc
                    raise translate(exc, timeout_s=timeout) from exc
                finally:
                    self._runs.disarm(run)
                if run.cancelled:  # it finished as the cancel came: the cancel still wins
                    raise QueryCancelled()
                description = cursor.description or ()
                total = cursor.rowcount if cursor.rowcount is not None else len(rows)
            finally:
                with contextlib.suppress(sf.Error):
                    conn.close()
        return QueryResult(
            columns=[d.name for d in description],
            rows=rows,
            total_rows=max(total, len(rows)),
            elapsed_s=time.perf_counter() - started,
            column_types=[FIELD_ID_TO_NAME.get(d.type_code, str(d.type_code)) for d in description],
        )

    def _check(self, sql: str) -> None:
        """One read query over the listed schemas' catalogued tables, or refused here."""
        tree = parse(sql)
        check_schemas(tree, self.scope)
        names = (t.name.split(".", 2) for t in self.list_tables())
        check_tables(tree, self.scope, frozenset((d, s, n) for d, s, n in names))

    def _wait(self, conn: Any, query_id: str, deadline: float, timeout: float) -> None:
        """Poll the query's status until it ends; past `deadline`, cancel it and time out."""
        for poll in _polls():
            status = conn.get_query_status_throw_if_error(query_id)
            if not conn.is_still_running(status):
                return
            if time.perf_counter() >= deadline:
                self._cancel_query(query_id)
                raise translate(TimeoutError(query_id), timeout_s=timeout)
            time.sleep(min(poll, max(deadline - time.perf_counter(), 0.001)))

    def _read(self, cursor: Any, max_rows: int) -> list[tuple[Any, ...]]:
        """The first `max_rows` rows, from Arrow batches (each measured as it is kept)."""
        names = [d.name for d in cursor.description or ()]
        return Meter(self.limits, lambda: names).keep(_arrow_rows(cursor, max_rows), max_rows)

    def cancel(self, job_key: str) -> bool:
        """SYSTEM$CANCEL_QUERY for the query of the run started with `job_key`; that run then
        raises QueryCancelled."""
        return self._runs.cancel(job_key)

    def _cancel_query(self, query_id: str) -> None:
        """Ask Snowflake to stop `query_id`, on a cursor of its own (not behind the lock: a
        cancel must not wait for a catalog load)."""
        with contextlib.suppress(sf.Error, ConnectorError):
            cursor = self._control_session().cursor()
            try:
                cursor.execute("SELECT SYSTEM$CANCEL_QUERY(%s)", (query_id,), timeout=30)
            finally:
                cursor.close()

    def control_rows(self, sql: str) -> list[tuple[Any, ...]]:
        """Rows of the connector's own statement (for `querybot doctor`), never a person's."""
        return self._fetch(sql)

    def close(self) -> None:
        if self._control is not None:
            with contextlib.suppress(sf.Error):
                self._control.close()
            self._control = None


def _polls() -> Iterator[float]:
    yield from _POLLS
    while True:
        yield _POLLS[-1]


def _arrow_rows(cursor: Any, max_rows: int) -> Iterator[tuple[Any, ...]]:
    """Up to `max_rows` rows from the result's Arrow batches, converted a batch at a time and
    only as far as needed (no batch is fetched past the cap); a result Snowflake sent as JSON
    is read row by row instead."""
    try:
        batches = cursor.fetch_arrow_batches()
    except sf.NotSupportedError:
        yield from (tuple(row) for row in cursor)
        return
    left = max_rows
    for batch in batches:
        if left <= 0:
            return
        part = batch.slice(0, left)
        left -= part.num_rows
        yield from zip(*(column.to_pylist() for column in part.columns), strict=True)
