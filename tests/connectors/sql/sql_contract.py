"""What every SqlConnector engine must do, as a test class each engine's module subclasses.

A subclass's module provides the fixtures `sample` (a loaded `Sample`) and `connector` (one
SqlConnector on it, shared like the bot shares one across threads).
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from agent.gate import GateSchema, check_sql
from connectors.base import (
    Connector,
    ConnectorError,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryTimeout,
    RunContext,
    WarehouseUnavailable,
)
from connectors.sql.connector import SqlConnector
from tests.support.sql_fixtures import (
    COLUMN_COMMENTS,
    DEPARTMENTS,
    EMPLOYEES,
    HUGE_ROWS,
    SALARIES,
    TABLE_COMMENTS,
    TABLES,
    Sample,
    payloads,
)

#: Writes every engine must refuse, whatever the login's grants; `{s}` is the sample schema.
WRITES = {
    "insert": "INSERT INTO {s}.departments VALUES ('d999', 'Sales')",
    "insert_select": "INSERT INTO {s}.salaries SELECT emp_no, 1, '2030-01-01' FROM {s}.employees",
    "update": "UPDATE {s}.salaries SET amount = amount * 2",
    "delete": "DELETE FROM {s}.salaries",
    "create_table": "CREATE TABLE {s}.stolen (x INTEGER)",
    "create_table_as": "CREATE TABLE {s}.copied AS SELECT * FROM {s}.employees",
    "create_view": "CREATE VIEW {s}.v2 AS SELECT 1 AS x",
    "alter_table": "ALTER TABLE {s}.employees ADD COLUMN bonus INTEGER",
    "drop_table": "DROP TABLE {s}.salaries",
    "drop_view": "DROP VIEW {s}.current_salaries",
}


class SqlConnectorContract:
    """Behaviour shared by PostgreSQL, MySQL/MariaDB and SQLite."""

    # -- identity and metadata ------------------------------------------------------------------

    def test_is_a_connector(self, sample: Sample, connector: SqlConnector) -> None:
        assert isinstance(connector, Connector)
        dialects = {"postgresql": "postgres", "mysql": "mysql", "sqlite": "sqlite"}
        assert (connector.name, connector.dialect) == (sample.engine, dialects[sample.engine])
        assert connector.estimate("SELECT 1") is None

    def test_lists_the_sample_tables_fully_qualified(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        tables = {t.name: t for t in connector.list_tables()}
        assert set(tables) == {sample.table(t) for t in TABLES}
        employees = tables[sample.table("employees")]
        assert [c.name for c in employees.columns] == [
            "emp_no",
            "first_name",
            "last_name",
            "hire_date",
            "dept_no",
        ]
        assert all(c.type for c in employees.columns)
        assert employees.short_name == "employees"
        view = tables[sample.table("current_salaries")]
        assert [c.name for c in view.columns] == ["emp_no", "amount"]
        assert view.row_count is None

    def test_reads_comments_where_the_engine_has_them(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        tables = {t.short_name: t for t in connector.list_tables()}
        for table, text in TABLE_COMMENTS.items():
            assert tables[table].description == (text if sample.comments else "")
        for (table, column), text in COLUMN_COMMENTS.items():
            info = next(c for c in tables[table].columns if c.name == column)
            assert info.description == (text if sample.comments else "")
        assert all(c.description == "" for c in tables["departments"].columns)

    def test_row_counts(self, connector: SqlConnector) -> None:
        counts = {t.short_name: t.row_count for t in connector.list_tables()}
        # Estimates: exact here because the samples were analysed after loading.
        assert counts["employees"] == len(EMPLOYEES)
        assert counts["salaries"] == len(SALARIES)

    def test_metadata_is_read_once(self, sample: Sample) -> None:
        connector = SqlConnector(sample.url, pool_size=1)
        try:
            first = connector.list_tables()
            sample.admin([f"CREATE TABLE {sample.table('later')} (x INTEGER)"])
            try:
                second = connector.list_tables()
            finally:
                sample.admin([f"DROP TABLE {sample.table('later')}"])
        finally:
            connector.close()
        assert first == second
        assert sample.table("later") not in {t.name for t in second}
        second.clear()  # callers get a copy
        assert first

    def test_names_are_what_the_gate_understands(self, connector: SqlConnector) -> None:
        """The gate resolves short names against the connector's qualified ones and rewrites
        the statement; what it approves runs."""
        schema = GateSchema.from_tables(connector.list_tables(), connector.dialect)
        verdict = check_sql(
            "SELECT d.dept_name, count(*) AS n FROM departments d"
            " JOIN employees e ON e.dept_no = d.dept_no GROUP BY d.dept_name ORDER BY n DESC",
            schema,
            row_limit=3,
        )
        assert verdict.ok, verdict.reasons
        result = connector.run(verdict.sql, max_rows=10, timeout_s=10)
        assert result.total_rows == 3
        assert sum(n for _, n in result.rows) == 3 * len(EMPLOYEES) // len(DEPARTMENTS)

    @pytest.mark.parametrize("spelling", ["{s}.employees", "employees", "EMPLOYEES", "Employees"])
    def test_describe(self, sample: Sample, connector: SqlConnector, spelling: str) -> None:
        name = spelling.format(s=sample.schema)
        assert connector.describe(name).name == sample.table("employees")

    def test_describe_unknown_table_suggests(self, connector: SqlConnector) -> None:
        with pytest.raises(QueryFailed, match=r"Did you mean .*employees"):
            connector.describe("employes")
        with pytest.raises(QueryFailed) as caught:
            connector.describe("zzzzzz")
        assert "Did you mean" not in caught.value.message

    # -- running --------------------------------------------------------------------------------

    def test_run_caps_rows_and_counts_the_rest(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        result = connector.run(
            f"SELECT emp_no, last_name FROM {sample.table('employees')} ORDER BY emp_no",
            max_rows=10,
            timeout_s=10,
            context=RunContext(job_key="k1", labels={"user": "u1"}),
        )
        assert result.columns == ["emp_no", "last_name"]
        assert result.rows == [(e[0], e[2]) for e in EMPLOYEES[:10]]
        assert result.total_rows == len(EMPLOYEES)
        assert result.truncated
        assert result.elapsed_s >= 0

    def test_run_under_the_cap(self, sample: Sample, connector: SqlConnector) -> None:
        result = connector.run(
            f"SELECT count(*) AS n, sum(amount) AS total FROM {sample.table('salaries')}",
            max_rows=10,
            timeout_s=10,
        )
        assert result.columns == ["n", "total"]
        assert result.rows[0][0] == len(SALARIES)
        assert float(result.rows[0][1]) == float(sum(s[1] for s in SALARIES))
        assert (result.total_rows, result.truncated) == (1, False)

    def test_run_with_zero_rows_kept_still_counts(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        result = connector.run(
            f"SELECT * FROM {sample.table('salaries')}", max_rows=0, timeout_s=10
        )
        assert (result.rows, result.total_rows) == ([], len(SALARIES))
        assert result.columns == ["emp_no", "amount", "from_date"]

    def test_empty_result_keeps_its_columns(self, sample: Sample, connector: SqlConnector) -> None:
        result = connector.run(
            f"SELECT emp_no, first_name FROM {sample.table('employees')} WHERE emp_no < 0",
            max_rows=10,
            timeout_s=10,
        )
        assert (result.columns, result.rows, result.total_rows) == (
            ["emp_no", "first_name"],
            [],
            0,
        )

    def test_percent_signs_reach_the_engine_unchanged(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        result = connector.run(
            f"SELECT '100%' AS pct, count(*) AS n FROM {sample.table('employees')}"
            " WHERE last_name LIKE 'K%'",
            max_rows=5,
            timeout_s=10,
        )
        expected = sum(1 for e in EMPLOYEES if e[2].startswith("K"))
        assert result.rows == [("100%", expected)]

    def test_timeout_stops_the_statement_and_the_connector_recovers(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        with pytest.raises(QueryTimeout) as caught:
            connector.run(sample.slow_sql, max_rows=10, timeout_s=0.3)
        assert caught.value.timeout_s == 0.3
        assert not caught.value.retryable_by_repair
        assert connector.run("SELECT 42", max_rows=1, timeout_s=5).rows == [(42,)]

    def test_cancel_stops_a_running_statement_and_the_connector_recovers(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        key = f"cancel-{uuid.uuid4().hex}"
        context = RunContext(job_key=key)
        with ThreadPoolExecutor(max_workers=1) as pool:
            running = pool.submit(
                connector.run, sample.slow_sql, max_rows=1, timeout_s=120, context=context
            )
            wait_until(lambda: sample.is_running(sample.slow_sql), what="the slow statement")
            # a cancel before the run is tracked finds nothing and changes nothing: retried
            wait_until(lambda: connector.cancel(key), what="a cancel that finds the run")
            with pytest.raises(QueryCancelled) as caught:
                running.result(timeout=60)  # a guard only: the statement runs 60 s or forever
        assert not caught.value.retryable_by_repair
        assert not connector.cancel(key), "nothing runs under that key any more"
        assert not sample.is_running(sample.slow_sql) or sample.engine == "sqlite"
        assert connector.run("SELECT 42", max_rows=1, timeout_s=5).rows == [(42,)]

    def test_cancel_of_an_unknown_key_stops_nothing(self, connector: SqlConnector) -> None:
        assert not connector.cancel("never-started")
        assert not connector.cancel("")

    @pytest.mark.slow
    def test_timeout_covers_counting_the_rows(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        s = sample.table("salaries")
        sql = f"SELECT a.emp_no FROM {s} a, {s} b, {s} c"  # HUGE_ROWS rows, streamed to count
        assert HUGE_ROWS > 40_000_000
        with pytest.raises(QueryTimeout):
            connector.run(sql, max_rows=5, timeout_s=0.3)

    @pytest.mark.parametrize("kind", list(WRITES))
    def test_writes_are_refused_by_the_engine(
        self, sample: Sample, connector: SqlConnector, kind: str
    ) -> None:
        before = sample.fingerprint()
        with pytest.raises(PermissionDenied) as caught:
            connector.run(WRITES[kind].format(s=sample.schema), max_rows=10, timeout_s=10)
        assert caught.value.engine_message
        assert not caught.value.retryable_by_repair
        assert sample.fingerprint() == before

    @pytest.mark.slow
    def test_injection_payloads_change_nothing(
        self, sample: Sample, connector: SqlConnector
    ) -> None:
        """A sample of the SQL-injection corpus, alone and spliced into a query, sent straight
        to the engine: each one runs as a read or fails as a connector error, and no data or
        table changes."""
        e = sample.table("employees")
        splices = (
            "{p}",
            f"SELECT emp_no FROM {e} WHERE last_name = '{{p}}'",
            f"SELECT emp_no FROM {e} WHERE emp_no = {{p}}",
        )
        before = sample.fingerprint()
        outcomes: Counter[str] = Counter()
        for payload in payloads(every=15):
            for splice in splices:
                try:
                    connector.run(splice.replace("{p}", payload), max_rows=5, timeout_s=0.1)
                    outcomes["ran"] += 1
                except ConnectorError as exc:
                    outcomes[type(exc).__name__] += 1
        assert sample.fingerprint() == before
        assert outcomes["ran"] and outcomes["QueryFailed"]
        assert outcomes["WarehouseUnavailable"] == 0, outcomes

    def test_a_second_statement_is_never_run(self, sample: Sample, connector: SqlConnector) -> None:
        before = sample.fingerprint()
        with pytest.raises(QueryFailed):
            connector.run(
                f"SELECT 1; DELETE FROM {sample.table('salaries')}", max_rows=10, timeout_s=10
            )
        assert sample.fingerprint() == before

    @pytest.mark.parametrize(
        "sql",
        [
            "SELECT nope FROM {s}.employees",
            "SELECT * FROM {s}.nowhere",
            "SELEC 1",
            "SELECT emp_no FROM {s}.employees GROUP BY",
        ],
    )
    def test_engine_errors_are_query_failed(
        self, sample: Sample, connector: SqlConnector, sql: str
    ) -> None:
        with pytest.raises(QueryFailed) as caught:
            connector.run(sql.format(s=sample.schema), max_rows=10, timeout_s=10)
        error = caught.value
        assert error.retryable_by_repair
        assert error.engine_message
        assert (
            error.message.split(":")[0]
            .lower()
            .startswith(
                {"postgresql": "postgresql", "mysql": "mysql", "sqlite": "sqlite"}[sample.engine]
            )
        )

    def test_unknown_column_hint(self, sample: Sample, connector: SqlConnector) -> None:
        with pytest.raises(QueryFailed) as caught:
            connector.run(
                f"SELECT salary_amt FROM {sample.table('salaries')}", max_rows=1, timeout_s=10
            )
        assert "salary_amt" in caught.value.engine_message
        assert "column" in caught.value.hint.lower()

    @pytest.mark.slow
    def test_concurrent_runs_share_the_pool(self, sample: Sample, connector: SqlConnector) -> None:
        """More runs than pooled connections, with timeouts and failures among them.

        Only the slow statements get a short clock (a few seconds, which also bounds their
        wait for a connection); the others get a long one, so a loaded machine makes the test
        slower, never a wait for a free connection into a failure.
        """
        e, s = sample.table("employees"), sample.table("salaries")
        jobs = [(sample.slow_sql, QueryTimeout), ("SELECT nope FROM " + e, QueryFailed)] * 2
        jobs += [
            (f"SELECT count(*) FROM {s} WHERE emp_no = {emp_no}", [(3,)])
            for emp_no, *_ in EMPLOYEES[:12]
        ]
        jobs += [(f"SELECT max(emp_no) FROM {e}", [(EMPLOYEES[-1][0],)])] * 4

        def run(job: tuple[str, object]) -> object:
            timeout_s = 3 if job[0] == sample.slow_sql else 120
            try:
                return connector.run(job[0], max_rows=5, timeout_s=timeout_s).rows
            except (QueryTimeout, QueryFailed) as exc:
                return type(exc)

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(run, jobs))
        assert results == [expected for _, expected in jobs]

    def test_closed_connector_is_unavailable(self, sample: Sample) -> None:
        connector = SqlConnector(sample.url, pool_size=1)
        assert connector.run("SELECT 1", max_rows=1, timeout_s=5).rows == [(1,)]
        connector.close()
        with pytest.raises(WarehouseUnavailable):
            connector.run("SELECT 1", max_rows=1, timeout_s=5)


def wait_until(check: Callable[[], bool], *, what: str, limit_s: float = 30) -> None:
    """Poll `check` until it holds; fail naming `what` after `limit_s` (a guard, not a
    measurement)."""
    give_up = time.monotonic() + limit_s
    while not check():
        if time.monotonic() > give_up:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)
