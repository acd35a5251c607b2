"""The driver's calls recorded at the connector's boundary, for what fakesnow does not emulate.

`Recorder.connect` stands where `snowflake.connector.connect` does: it records each login's
arguments (session parameters: QUERY_TAG, STATEMENT_TIMEOUT_IN_SECONDS) and every statement
sent, and passes them on to the real driver connected to fakesnow, except the statements a test
scripts (fakesnow lacks EXPLAIN, SYSTEM$CANCEL_QUERY, QUERY_HISTORY, and answers SHOW WAREHOUSES
with one fixed warehouse): those are
answered from the script and never reach the server (the most specific prefix wins), as are the
queries a test scripts whole with `script_run` (fakesnow lacks APPROX_TOP_K): they get a query id
of their own and their rows come back in an Arrow batch. `hold(...)` makes the status of the next
submitted query RUNNING until a SYSTEM$CANCEL_QUERY for it is sent (then Snowflake's error 604,
"SQL execution canceled"), as a long query on a real warehouse would be.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import snowflake.connector
from snowflake.connector import errors as sf
from snowflake.connector.constants import QueryStatus

SMALL_PLAN = json.dumps(
    {"GlobalStats": {"partitionsTotal": 1, "partitionsAssigned": 1, "bytesAssigned": 1024}}
)


@dataclass
class Sent:
    """One statement as the connector sent it, and on which login (index into `logins`)."""

    login: int
    sql: str
    params: Any = None
    asynchronous: bool = False
    timeout: Any = None
    #: The query id Snowflake gave a query submitted asynchronously.
    query_id: str = ""


@dataclass
class Recorder:
    server: dict[str, Any]
    logins: list[dict[str, Any]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    #: Statement prefix (upper case) -> (column names, rows) answered instead of the server;
    #: EXPLAIN a small plan unless a test says otherwise (fakesnow has none, and the connector
    #: explains every run nobody approved).
    scripted: dict[str, tuple[Sequence[str], list[tuple[Any, ...]]]] = field(
        default_factory=lambda: {"EXPLAIN USING JSON": (["content"], [(SMALL_PLAN,)])}
    )
    #: Whole queries (normalised text) answered instead of the server when submitted to run.
    scripted_runs: dict[str, tuple[Sequence[str], list[tuple[Any, ...]]]] = field(
        default_factory=dict
    )
    #: Answers of the scripted queries submitted, by the query id they were given.
    scripted_results: dict[str, tuple[Sequence[str], list[tuple[Any, ...]]]] = field(
        default_factory=dict
    )
    held: set[str] = field(default_factory=set)
    cancelled: set[str] = field(default_factory=set)
    submitted: threading.Event = field(default_factory=threading.Event)
    #: Calls of fetch_arrow_batches (results read in Arrow batches).
    arrow_fetches: int = 0
    _hold_next: bool = False

    def connect(self, **kwargs: Any) -> RecordedConnection:
        self.logins.append(kwargs)
        login = len(self.logins) - 1
        target = {**kwargs, **self.server}  # the login's own settings, fakesnow's address
        target["session_parameters"] = {
            **kwargs.get("session_parameters", {}),
            **self.server["session_parameters"],
        }
        return RecordedConnection(snowflake.connector.connect(**target), self, login)

    def script(self, prefix: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        self.scripted[prefix.upper()] = (columns, rows)

    def script_run(self, sql: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        """Answer the query `sql`, when it is submitted to run, with `rows`."""
        self.scripted_runs[_normal(sql)] = (columns, rows)

    def hold(self) -> None:
        """The next query submitted stays RUNNING until it is cancelled."""
        self._hold_next = True

    def statements(self) -> list[str]:
        return [s.sql for s in self.sent]

    def submitted_queries(self) -> list[Sent]:
        """The queries submitted to run (asynchronously), in order."""
        return [s for s in self.sent if s.asynchronous]

    def answer(self, sql: str) -> tuple[Sequence[str], list[tuple[Any, ...]]] | None:
        """The scripted answer of the longest prefix of `sql`, if any."""
        text = _normal(sql)
        found = [k for k in self.scripted if text.startswith(k)]
        return self.scripted[max(found, key=len)] if found else None


def _normal(sql: str) -> str:
    return " ".join(sql.split()).upper()


class RecordedConnection:
    def __init__(self, real: Any, recorder: Recorder, login: int) -> None:
        self.real = real
        self.recorder = recorder
        self.login = login

    def cursor(self) -> RecordedCursor:
        return RecordedCursor(self.real.cursor(), self)

    def get_query_status_throw_if_error(self, query_id: str) -> QueryStatus:
        if query_id in self.recorder.scripted_results:
            return QueryStatus.SUCCESS
        if query_id in self.recorder.cancelled:
            raise sf.ProgrammingError(msg="SQL execution canceled", errno=604, sqlstate="57014")
        if query_id in self.recorder.held:
            return QueryStatus.RUNNING
        status: QueryStatus = self.real.get_query_status_throw_if_error(query_id)
        return status

    def is_still_running(self, status: QueryStatus) -> bool:
        running: bool = self.real.is_still_running(status)
        return running

    def close(self) -> None:
        self.real.close()


class RecordedCursor:
    def __init__(self, real: Any, connection: RecordedConnection) -> None:
        self.real = real
        self.connection = connection
        self.recorder = connection.recorder
        self._scripted: tuple[Sequence[str], list[tuple[Any, ...]]] | None = None
        self._query_id = ""

    def execute(self, sql: str, params: Any = None, timeout: Any = None) -> RecordedCursor:
        self.recorder.sent.append(Sent(self.connection.login, sql, params, timeout=timeout))
        if sql.upper().startswith("SELECT SYSTEM$CANCEL_QUERY"):
            self.recorder.cancelled.add(params[0])
            self._scripted = (["STATUS"], [("Identified SQL statement is being canceled.",)])
            return self
        self._scripted = self.recorder.answer(sql)
        if self._scripted is None:
            self.real.execute(sql, params, timeout=timeout)
        return self

    def execute_async(self, sql: str, timeout: Any = None) -> None:
        sent = Sent(self.connection.login, sql, None, True, timeout)
        self.recorder.sent.append(sent)
        if (run := self.recorder.scripted_runs.get(_normal(sql))) is not None:
            self._query_id = sent.query_id = f"scripted-{len(self.recorder.sent)}"
            self.recorder.scripted_results[self._query_id] = run
            self.recorder.submitted.set()
            return
        self._query_id = ""
        self.real.execute_async(sql, timeout=timeout)
        sent.query_id = str(self.real.sfqid)
        if self.recorder._hold_next:
            self.recorder._hold_next = False
            self.recorder.held.add(self.real.sfqid)
        self.recorder.submitted.set()

    @property
    def sfqid(self) -> Any:
        return self._query_id or self.real.sfqid

    def get_results_from_sfqid(self, query_id: str) -> None:
        self._scripted = self.recorder.scripted_results.get(query_id)
        if self._scripted is None:
            self.real.get_results_from_sfqid(query_id)

    @property
    def rowcount(self) -> Any:
        return len(self._scripted[1]) if self._scripted is not None else self.real.rowcount

    @property
    def description(self) -> Any:
        if self._scripted is not None:
            return [_Column(name) for name in self._scripted[0]]
        return self.real.description

    def fetchall(self) -> list[tuple[Any, ...]]:
        if self._scripted is not None:
            return list(self._scripted[1])
        rows: list[tuple[Any, ...]] = self.real.fetchall()
        return rows

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._scripted is not None:
            return self._scripted[1][0] if self._scripted[1] else None
        row: tuple[Any, ...] | None = self.real.fetchone()
        return row

    def fetch_arrow_batches(self) -> Any:
        self.recorder.arrow_fetches += 1
        if self._scripted is not None:
            names, rows = self._scripted
            columns = [pa.array([row[i] for row in rows]) for i in range(len(names))]
            return iter([pa.record_batch(columns, names=list(names))])
        return self.real.fetch_arrow_batches()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@dataclass(frozen=True)
class _Column:
    name: str
    #: A scripted answer gives no types.
    type_code: int | None = None
