"""BigQueryConnector over a scripted REST API, what the emulator cannot show: dry-run
bytes and costs, partition warnings from INFORMATION_SCHEMA, refusals over the cap and of
what BigQuery does not call a SELECT."""

from __future__ import annotations

import pytest

from connectors.base import (
    ConnectorError,
    CostEstimate,
    PermissionDenied,
    QueryFailed,
    RunContext,
)
from connectors.bigquery.connector import BigQueryConnector
from tests.connectors.bigquery.scripted_queries import queries
from tests.support.bigquery_fake_api import Answer, FakeBigQuery


def test_estimate_reports_bytes_and_cost(api: FakeBigQuery, connector: BigQueryConnector) -> None:
    sql = "SELECT region FROM sales.orders WHERE placed_on = '2026-01-01'"
    api.answer(sql, Answer(bytes_processed=512 * 1024**2))
    estimate = connector.estimate(sql)
    assert estimate == CostEstimate(
        bytes_processed=512 * 1024**2, cost_usd=512 / 1024**2 * 5.0, warnings=(), refusal=""
    )
    (body,) = [b for b in api.inserts() if b["configuration"]["query"]["query"] == sql]
    assert body["configuration"]["dryRun"] is True
    assert body["configuration"]["query"]["useQueryCache"] is False
    assert api.runs() == []


def test_estimate_warns_about_an_unfiltered_partitioned_table(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    sql = "SELECT region, COUNT(*) FROM orders GROUP BY region"
    api.answer(sql, Answer(bytes_processed=5 * 1024**2))
    estimate = connector.estimate(sql)
    assert estimate.warnings == (
        "proj.sales.orders is partitioned by placed_on, and this query does not filter on it, "
        "so it reads every partition.",
    )
    assert estimate.refusal == ""


def test_over_the_cap_is_refused_with_cheaper_advice(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    sql = "SELECT * FROM sales.orders"
    api.answer(sql, Answer(bytes_processed=3 * 2**40))
    estimate = connector.estimate(sql)
    assert estimate.bytes_processed == 3 * 2**40
    assert estimate.cost_usd == 15.0
    assert estimate.refusal.startswith(
        "This query would process 3 TiB (about $15.00), more than the 1 GiB this bot may "
        "bill per query, so it was not offered for approval."
    )
    assert "filter proj.sales.orders on placed_on" in estimate.refusal
    assert "select only the columns needed" in estimate.refusal
    assert api.runs() == []


def test_just_under_the_cap_is_offered(api: FakeBigQuery, connector: BigQueryConnector) -> None:
    sql = "SELECT id FROM sales.orders WHERE placed_on > '2026-01-01'"
    api.answer(sql, Answer(bytes_processed=1024**3))
    assert connector.estimate(sql).refusal == ""


def test_dry_run_error_reaches_repair_with_its_reason(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    sql = "SELECT nme FROM sales.orders"
    api.answer(sql, Answer(insert_error=(400, "invalidQuery", "Unrecognized name: nme at [1:8]")))
    with pytest.raises(QueryFailed) as caught:
        connector.estimate(sql)
    assert caught.value.retryable_by_repair
    assert caught.value.engine_message == "invalidQuery: Unrecognized name: nme at [1:8]"


def test_statement_bigquery_does_not_call_select_is_refused(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    sql = "SELECT 1"
    api.answer(sql, Answer(statement_type="SCRIPT"))
    with pytest.raises(PermissionDenied, match="SCRIPT"):
        connector.estimate(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM hr.salaries",
        "SELECT * FROM `region-eu`.INFORMATION_SCHEMA.JOBS",
        "SELECT 1; SELECT 2",
    ],
)
def test_refused_before_anything_is_sent(
    sql: str, api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    with pytest.raises(ConnectorError):
        connector.estimate(sql)
    with pytest.raises(ConnectorError):
        connector.run(sql, max_rows=10, timeout_s=5, context=RunContext(job_key="k"))
    assert queries(api) == []
