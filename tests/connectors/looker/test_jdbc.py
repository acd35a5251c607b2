"""The generic JDBC runner against a real JDBC driver: HSQLDB from Debian's packages.

Read-only connections, statements that are not queries refused before they are sent, the row
cap and count, the engine's timeout, a cancel from another thread, and the errors users see
(bad login, unreachable server, missing jar or driver class).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import jpype
import pytest

from connectors.base import (
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryTimeout,
    RunContext,
    WarehouseUnavailable,
)
from connectors.looker.connector import LookerConnector
from connectors.looker.jdbc import JdbcRunner
from connectors.looker.jdbc_errors import translate
from tests.fixtures.looker import standin


@pytest.fixture(scope="module")
def standin_url() -> str:
    return standin.build("jdbc_tests")


def runner_for(url: str, user: str = standin.USER, password: str = standin.PASSWORD) -> JdbcRunner:
    return JdbcRunner(
        name="HSQLDB",
        driver=standin.DRIVER,
        url=url,
        jars=[standin.require_jar()],
        properties={"user": user, "password": password},
    )


@pytest.fixture
def runner(standin_url: str) -> Iterator[JdbcRunner]:
    runner = runner_for(standin_url)
    yield runner
    runner.close()


def test_rows_are_capped_and_the_rest_counted(runner: JdbcRunner) -> None:
    result = runner.run(
        "SELECT `orders.id`, `orders.status`, `orders.amount`, `orders.created_date` "
        "FROM `shop`.`orders` ORDER BY `orders.id`",
        max_rows=2,
        timeout_s=30,
    )
    assert result.columns == ["orders.id", "orders.status", "orders.amount", "orders.created_date"]
    assert result.rows == [(1, "complete", 10.5, "2026-01-05"), (2, "complete", 4.5, "2026-01-20")]
    assert result.total_rows == 4 and result.truncated
    assert result.column_types[:2] == ["INTEGER", "VARCHAR"]


def test_the_aggregate_function_of_the_standin_sums_measures(runner: JdbcRunner) -> None:
    result = runner.run(
        "SELECT `orders.status`, AGGREGATE(`orders.count`) AS `orders`, "
        "AGGREGATE(`orders.total_amount`) AS `total` FROM `shop`.`orders` "
        "GROUP BY `orders.status` ORDER BY `orders.status`",
        max_rows=10,
        timeout_s=30,
    )
    assert result.rows == [("cancelled", 1.0, 3.0), ("complete", 3.0, 35.0)]
    # plain Python values, not JPype's boxed java.lang.Double (the thread state must serialise)
    assert {type(v) for row in result.rows for v in row} == {str, float}


def test_the_connection_is_read_only_even_for_a_login_that_may_write(standin_url: str) -> None:
    """Below the runner's own refusal of non-queries, the engine refuses a write on its pooled
    connections: the read-only flag holds even for the DBA."""
    admin = runner_for(standin_url, user="SA", password="")
    try:
        with admin.connection() as conn:
            assert conn.jconn.isReadOnly()
            statement = conn.jconn.createStatement()
            with pytest.raises(jpype.JException) as raised:
                statement.execute("INSERT INTO `shop`.`users` (`users.id`) VALUES (9)")
            statement.close()
        error = translate(raised.value, name="HSQLDB")
        assert isinstance(error, PermissionDenied)
        assert "refused to write on a read-only connection" in error.message
        count = admin.run("SELECT COUNT(*) FROM `shop`.`users`", max_rows=1, timeout_s=30)
        assert count.rows == [(2,)]
    finally:
        admin.close()


def test_file_reads_need_a_login_without_admin_rights(standin_url: str) -> None:
    """Read-only is no sandbox: HSQLDB lets a DBA's read-only session read files with
    LOAD_FILE (the gate denies load_file); the bot's own SELECT-only login cannot."""
    sql = "SELECT LOAD_FILE('/etc/hostname') FROM (VALUES (0))"
    admin = runner_for(standin_url, user="SA", password="")
    try:
        assert admin.run(sql, max_rows=1, timeout_s=30).total_rows == 1
    finally:
        admin.close()
    bot = runner_for(standin_url)
    try:
        with pytest.raises(QueryFailed, match="admin rights required"):
            bot.run(sql, max_rows=1, timeout_s=30)
    finally:
        bot.close()


#: Statements that are not queries, written as they could reach the connector without the gate.
NOT_QUERIES = [
    "INSERT INTO `shop`.`users` (`users.id`) VALUES (9)",
    "UPDATE `shop`.`orders` SET `orders.amount` = 0",
    "DELETE FROM `shop`.`users`",
    "CREATE TABLE `shop`.`querybot_probe` (x INT)",
    "DROP TABLE `slow`.`nums`",
    "/* SELECT */ DELETE FROM `shop`.`users`",
    "-- SELECT\nDELETE FROM `shop`.`users`",
    "COMMIT",
    "",
]


def standin_state(runner: JdbcRunner) -> list[object]:
    """The stand-in's tables and the rows of the model's two Explores."""
    tables = runner.run(
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM INFORMATION_SCHEMA.TABLES "
        "WHERE TABLE_SCHEMA IN ('shop', 'slow') ORDER BY 1, 2",
        max_rows=100,
        timeout_s=30,
    )
    rows = [
        runner.run(f"SELECT * FROM `shop`.`{t}` ORDER BY 1", max_rows=100, timeout_s=30).rows
        for t in ("orders", "users")
    ]
    return [tables.rows, *rows]


def test_a_login_that_can_write_changes_nothing(standin_url: str) -> None:
    """Looker's runner only tries the read-only flag (`read_only="try"`). A driver that ignores
    it is modelled by lifting the flag on the one pooled connection of a DBA's runner: writes
    sent straight to the connector are refused before they reach the driver (a JDBC statement
    runs, and commits, before the driver tells whether it returned rows)."""
    admin = JdbcRunner(
        name="Looker",
        driver=standin.DRIVER,
        url=standin_url,
        jars=[standin.require_jar()],
        properties={"user": "SA", "password": ""},
        read_only="try",
        pool_size=1,
    )
    looker = LookerConnector(admin, sample_rows=0)
    try:
        with admin.connection() as conn:
            conn.jconn.setReadOnly(False)
        before = standin_state(admin)
        for sql in NOT_QUERIES:
            with pytest.raises(PermissionDenied, match="runs queries only") as caught:
                looker.run(sql, max_rows=1, timeout_s=30)
            assert "not sent" in caught.value.message and "SELECT" in caught.value.hint
        assert standin_state(admin) == before
        with admin.connection() as conn:  # the same connection, still able to write
            assert not conn.jconn.isReadOnly()
    finally:
        looker.close()


def test_engine_errors_are_query_failures_with_the_engine_text(runner: JdbcRunner) -> None:
    with pytest.raises(QueryFailed) as caught:
        runner.run("SELECT `orders.nope` FROM `shop`.`orders`", max_rows=1, timeout_s=30)
    assert "orders.nope" in caught.value.message
    assert caught.value.retryable_by_repair


@pytest.mark.slow
def test_a_slow_statement_is_stopped_at_the_timeout(runner: JdbcRunner) -> None:
    with pytest.raises(QueryTimeout) as caught:
        runner.run(standin.SLOW_SQL, max_rows=1, timeout_s=1)
    assert "1 s" in caught.value.message
    # the connection that ran it was discarded; the runner still works
    assert runner.run("SELECT 1 FROM `shop`.`users`", max_rows=5, timeout_s=30).total_rows == 2


def test_cancel_stops_a_running_statement_from_another_thread(runner: JdbcRunner) -> None:
    outcome: list[BaseException] = []

    def work() -> None:
        try:
            runner.run(standin.SLOW_SQL, max_rows=1, timeout_s=60, context=RunContext("job-1"))
        except BaseException as exc:  # recorded for the assertion below
            outcome.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.cancel("job-1"):
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.02)
    thread.join(30)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], QueryCancelled)
    assert not runner.cancel("job-1")  # nothing left to stop


def test_metadata_rows_carry_every_column_the_driver_returns(runner: JdbcRunner) -> None:
    rows = runner.metadata("getColumns", None, "shop", "orders", "%")
    by_name = {row["COLUMN_NAME"]: row for row in rows}
    assert by_name["orders.count"]["IS_GENERATEDCOLUMN"] == "YES"
    assert by_name["orders.status"]["IS_GENERATEDCOLUMN"] == "NO"
    assert by_name["orders.status"]["REMARKS"] == "Where the order is"


def test_a_wrong_password_is_a_login_error(standin_url: str) -> None:
    with pytest.raises(PermissionDenied, match="refused the login") as caught:
        runner_for(standin_url, password="wrong")
    assert caught.value.hint


def test_an_unreachable_server_is_unavailable() -> None:
    with pytest.raises(WarehouseUnavailable, match="Cannot reach HSQLDB"):
        runner_for("jdbc:hsqldb:hsql://127.0.0.1:1/nothing")


def test_a_missing_jar_or_driver_class_is_named(standin_url: str, tmp_path) -> None:
    with pytest.raises(WarehouseUnavailable, match="does not exist"):
        JdbcRunner(name="X", driver=standin.DRIVER, url=standin_url, jars=[tmp_path / "no.jar"])
    with pytest.raises(WarehouseUnavailable, match=r"org\.example\.NoDriver"):
        JdbcRunner(
            name="X", driver="org.example.NoDriver", url=standin_url, jars=[standin.require_jar()]
        )
