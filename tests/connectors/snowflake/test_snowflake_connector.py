"""The Snowflake connector against fakesnow's server with the real snowflake-connector-python
cursor: the catalog, runs, result bounds, errors and repeated approvals."""

from __future__ import annotations

from decimal import Decimal

import pytest

from connectors.base import ConnectorError, QueryFailed, RunContext
from connectors.limits import ResourceLimitExceeded, RunLimits
from tests.connectors.snowflake.conftest import Seeded, make_connector
from tests.support.snowflake_recording import Recorder

pytestmark = pytest.mark.slow  # a server in its own venv


def test_the_catalog_lists_only_the_listed_schemas_with_comments_counts_and_views(
    connector, seeded: Seeded
) -> None:
    db = seeded.database
    tables = {t.name: t for t in connector.list_tables()}
    assert sorted(tables) == [
        f"{db}.ARCHIVE.ORDERS",
        f"{db}.SALES.BIG_ORDERS",
        f"{db}.SALES.CUSTOMERS",
        f"{db}.SALES.ORDERS",
    ]  # never PRIVATE.SALARIES
    orders = tables[f"{db}.SALES.ORDERS"]
    assert [c.name for c in orders.columns] == ["ID", "REGION", "AMOUNT", "PLACED_ON", "NOTE"]
    assert {c.name: c.description for c in orders.columns}["REGION"] == "Sales region"
    assert orders.description.startswith("One row per order.")
    assert orders.row_count == 30
    view = tables[f"{db}.SALES.BIG_ORDERS"]
    assert view.description == "A view." and view.row_count is None
    stats = connector.statistics(list(tables.values()), values=5)
    assert stats[f"{db}.SALES.CUSTOMERS"].row_count == 2
    assert f"{db}.SALES.BIG_ORDERS" not in stats


def test_describe_by_qualified_or_bare_name_and_ambiguity(connector, seeded: Seeded) -> None:
    assert connector.describe("customers").name == f"{seeded.database}.SALES.CUSTOMERS"
    assert connector.describe("archive.orders").name == f"{seeded.database}.ARCHIVE.ORDERS"
    with pytest.raises(QueryFailed, match="ambiguous"):
        connector.describe("orders")  # SALES.ORDERS and ARCHIVE.ORDERS
    with pytest.raises(QueryFailed, match="no table named 'salaries'"):
        connector.describe("salaries")


def test_a_run_keeps_max_rows_and_counts_every_row(connector, recorder: Recorder) -> None:
    result = connector.run(
        "SELECT ID, REGION, AMOUNT FROM ORDERS ORDER BY ID", max_rows=4, timeout_s=30
    )
    assert result.columns == ["ID", "REGION", "AMOUNT"]
    assert result.rows == [
        (1, "US", Decimal("10.00")),
        (2, "APAC", Decimal("20.00")),
        (3, "EU", Decimal("30.00")),
        (4, "US", Decimal("40.00")),
    ]
    assert (result.total_rows, result.truncated) == (30, True)
    assert result.column_types == ["FIXED", "TEXT", "FIXED"]
    assert recorder.arrow_fetches == 1  # read in Arrow batches
    # The bare name resolves in the session's schema, the first listed; another is qualified.
    archive = connector.run("SELECT REGION FROM ARCHIVE.ORDERS", max_rows=10, timeout_s=30)
    assert archive.rows == [("EU",)]


def test_an_empty_result_and_no_rows_kept(connector) -> None:
    empty = connector.run("SELECT ID FROM ORDERS WHERE ID < 0", max_rows=10, timeout_s=30)
    assert (empty.rows, empty.total_rows, empty.columns) == ([], 0, ["ID"])
    counted = connector.run("SELECT ID FROM ORDERS", max_rows=0, timeout_s=30)
    assert (counted.rows, counted.total_rows) == ([], 30)


def test_a_value_over_the_cell_bound_stops_the_run(seeded: Seeded, recorder: Recorder) -> None:
    connector = make_connector(seeded, recorder, limits=RunLimits(max_cell_bytes=20))
    try:
        with pytest.raises(ResourceLimitExceeded, match="QUERYBOT_MAX_CELL_BYTES"):
            connector.run("SELECT ID, NOTE FROM ORDERS ORDER BY ID", max_rows=100, timeout_s=30)
        fits = connector.run("SELECT NOTE FROM ORDERS WHERE ID <= 20", max_rows=100, timeout_s=30)
        assert len(fits.rows) == 20
    finally:
        connector.close()


def test_the_kept_rows_stay_within_the_result_bound(seeded: Seeded, recorder: Recorder) -> None:
    connector = make_connector(seeded, recorder, limits=RunLimits(max_result_bytes=200))
    try:
        with pytest.raises(ResourceLimitExceeded):
            connector.run("SELECT NOTE FROM ORDERS", max_rows=1000, timeout_s=30)
        few = connector.run("SELECT NOTE FROM ORDERS ORDER BY ID", max_rows=3, timeout_s=30)
        assert few.rows == [("x",), ("xx",), ("xxx",)] and few.total_rows == 30
    finally:
        connector.close()


def test_engine_errors_are_repairable_query_failures(connector) -> None:
    with pytest.raises(QueryFailed) as bad_column:
        connector.run("SELECT NOSUCH FROM ORDERS", max_rows=1, timeout_s=30)
    assert bad_column.value.retryable_by_repair and "NOSUCH" in bad_column.value.engine_message
    # A table the catalog does not list is refused before it is sent.
    with pytest.raises(QueryFailed, match=r"no table .*\.SALES\.NOSUCH among the tables"):
        connector.run("SELECT * FROM NOSUCH", max_rows=1, timeout_s=30)


def test_a_repeated_approval_reads_the_first_run(connector, recorder: Recorder) -> None:
    sql = "SELECT REGION, SUM(AMOUNT) AS TOTAL FROM ORDERS GROUP BY 1 ORDER BY 1"
    context = RunContext(job_key="p-123", labels={"requester": "U1", "approver": "U2"})
    first = connector.run(sql, max_rows=10, timeout_s=30, context=context)
    again = connector.run(sql, max_rows=10, timeout_s=30, context=context)
    # fakesnow sums NUMBER(10, 2) as a float (Snowflake keeps NUMBER): compare as numbers.
    assert [(r, float(t)) for r, t in again.rows] == [("APAC", 1550), ("EU", 1650), ("US", 1450)]
    assert again.rows == first.rows
    assert [s.sql for s in recorder.submitted_queries()] == [sql]  # submitted once
    with pytest.raises(ConnectorError, match="different statement"):
        connector.run("SELECT 1 AS X FROM ORDERS", max_rows=1, timeout_s=30, context=context)
    other = connector.run(sql, max_rows=10, timeout_s=30, context=RunContext(job_key="p-456"))
    assert other.rows == first.rows
    assert len(recorder.submitted_queries()) == 2


def test_another_replica_finds_the_first_run_in_query_history(
    seeded: Seeded, recorder: Recorder
) -> None:
    """fakesnow has no QUERY_HISTORY: its answer is scripted, naming the first run's real id."""
    sql = "SELECT COUNT(*) AS N FROM ORDERS"
    context = RunContext(job_key="p-789")
    first_replica = make_connector(seeded, recorder)
    second_replica = make_connector(seeded, recorder)
    try:
        first = first_replica.run(sql, max_rows=1, timeout_s=30, context=context)
        (submitted,) = recorder.submitted_queries()
        recorder.script(
            "SELECT query_id, query_text FROM TABLE(",
            ["QUERY_ID", "QUERY_TEXT"],
            [(submitted.query_id, sql)],
        )
        again = second_replica.run(sql, max_rows=1, timeout_s=30, context=context)
    finally:
        first_replica.close()
        second_replica.close()
    assert again.rows == first.rows == [(30,)]
    assert recorder.submitted_queries() == [submitted]  # the second replica ran nothing
    lookup = [s for s in recorder.sent if "QUERY_HISTORY_BY_USER" in s.sql]
    assert lookup[-1].params == ('{"proposal":"p-789"',)
