"""BigQueryConnector over a scripted REST API: what the emulator cannot show.

Dry-run bytes and costs, refusals over the cap, partition warnings from INFORMATION_SCHEMA,
job options and labels on the wire, job-id idempotency (a repeated, doubled or retried
approval runs once), paging up to the row cap, and failures by reason.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from connectors.base import (
    ConnectorError,
    CostEstimate,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryTimeout,
    RunContext,
    WarehouseUnavailable,
)
from connectors.bigquery.connector import BigQueryConnector
from connectors.bigquery.errors import BytesLimitExceeded, QuotaExceeded
from connectors.bigquery.metadata import metadata_sql
from tests.support.bigquery_fake_api import Answer, FakeBigQuery

TOTALS = (
    "SELECT region, SUM(id) AS total FROM sales.orders "
    "WHERE placed_on >= '2026-01-01' GROUP BY region"
)
TOTALS_ANSWER = Answer(
    schema=[("region", "STRING"), ("total", "INTEGER")],
    rows=[("EU", 10), ("US", 32)],
    bytes_processed=3 * 1024**2,
)


def queries(api: FakeBigQuery) -> list[str]:
    """SQL of every job inserted (dry runs included), metadata excluded."""
    return [
        body["configuration"]["query"]["query"]
        for body in api.inserts()
        if "INFORMATION_SCHEMA" not in body["configuration"]["query"]["query"]
    ]


# -- metadata ------------------------------------------------------------------------------------


def test_tables_columns_descriptions_and_layout(connector: BigQueryConnector) -> None:
    assert (connector.name, connector.dialect) == ("bigquery", "bigquery")
    tables = {t.name: t for t in connector.list_tables()}
    assert list(tables) == [
        "proj.sales.events",
        "proj.sales.orders",
        "proj.sales.recent_orders",
        "proj.archive.orders",
    ]
    orders = tables["proj.sales.orders"]
    assert orders.description == (
        "One row per order. Partitioned by placed_on: filter on it to read less. "
        "Clustered by region."
    )
    columns = {c.name: c for c in orders.columns}
    assert list(columns) == ["id", "placed_on", "region", "customer"]
    assert columns["id"].description == "Order id"
    assert columns["customer"].type == "STRUCT<name STRING, address STRUCT<city STRING>>"
    assert columns["customer"].description == (
        "Who ordered Fields: customer.address STRUCT<city STRING>; "
        "customer.address.city STRING (Shipping city); customer.name STRING."
    )
    events = tables["proj.sales.events"]
    assert [c.name for c in events.columns] == ["name"]  # _PARTITIONTIME is a pseudo-column
    assert "Partitioned by _PARTITIONTIME" in events.description
    assert tables["proj.sales.recent_orders"].description == ""


def test_one_metadata_query_per_dataset_then_cached(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    api.answer(TOTALS, TOTALS_ANSWER)
    connector.list_tables()
    connector.describe("events")
    connector.estimate(TOTALS)
    metadata = [
        b for b in api.inserts() if "INFORMATION_SCHEMA" in b["configuration"]["query"]["query"]
    ]
    assert len(metadata) == 2
    config = metadata[0]["configuration"]
    assert config["query"]["maximumBytesBilled"] == str(1024**3)
    assert config["labels"] == {"app": "querybot", "purpose": "metadata"}


def test_metadata_is_read_again_after_the_ttl(api: FakeBigQuery) -> None:
    connector = BigQueryConnector("proj", datasets=["sales"], metadata_ttl_s=0, client=api.client())
    connector.list_tables()
    connector.list_tables()
    assert len(api.inserts()) == 2


def test_describe_by_qualified_or_short_name(connector: BigQueryConnector) -> None:
    assert connector.describe("`proj.sales.events`").name == "proj.sales.events"
    assert connector.describe("ARCHIVE.orders").name == "proj.archive.orders"
    assert connector.describe("recent_orders").name == "proj.sales.recent_orders"
    with pytest.raises(QueryFailed, match="ambiguous"):
        connector.describe("orders")
    with pytest.raises(QueryFailed, match="Did you mean events"):
        connector.describe("event")


def test_metadata_permission_error_is_clear(api: FakeBigQuery) -> None:
    api.answer(
        metadata_sql("proj", "sales"),
        Answer(insert_error=(403, "accessDenied", "Access Denied: Dataset proj:sales")),
    )
    connector = BigQueryConnector("proj", datasets=["sales"], client=api.client())
    with pytest.raises(PermissionDenied) as caught:
        connector.list_tables()
    assert "roles/bigquery.dataViewer" in caught.value.hint


# -- estimate (dry run) --------------------------------------------------------------------------


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


# -- run -----------------------------------------------------------------------------------------


def test_run_sends_caps_timeout_labels_and_a_derived_job_id(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    api.answer(TOTALS, TOTALS_ANSWER)
    context = RunContext(
        job_key="a1b2c3",
        labels={"requester": "U012ABC", "approver": "U034DEF", "channel": "C0ABC"},
    )
    result = connector.run(TOTALS, max_rows=100, timeout_s=20, context=context)
    assert result.columns == ["region", "total"]
    assert result.rows == [("EU", 10), ("US", 32)]
    assert result.total_rows == 2
    assert result.column_types == ["STRING", "INT64"]
    assert result.bytes_processed == 3 * 1024**2
    assert result.job_url == (
        "https://console.cloud.google.com/bigquery?project=proj&j=bq:EU:querybot_a1b2c3"
        "&page=queryresults"
    )
    (body,) = [b for b in api.inserts() if b["configuration"]["query"]["query"] == TOTALS]
    assert body["jobReference"]["jobId"] == "querybot_a1b2c3"
    config = body["configuration"]
    assert config["query"]["maximumBytesBilled"] == str(1024**3)
    assert config["query"]["useLegacySql"] is False
    assert config["query"]["defaultDataset"] == {"projectId": "proj", "datasetId": "sales"}
    assert config["jobTimeoutMs"] == "20000"
    assert config["labels"] == {
        "app": "querybot",
        "requester": "u012abc",
        "approver": "u034def",
        "channel": "c0abc",
    }
    assert api.runs() == ["querybot_a1b2c3"]


def test_job_timeout_caps_the_requested_timeout(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    api.answer(TOTALS, TOTALS_ANSWER)
    connector.run(TOTALS, max_rows=1, timeout_s=3600, context=RunContext(job_key="t"))
    (body,) = [b for b in api.inserts() if b["configuration"]["query"]["query"] == TOTALS]
    assert body["configuration"]["jobTimeoutMs"] == "60000"


def test_without_a_job_key_each_run_is_a_new_job(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    api.answer(TOTALS, TOTALS_ANSWER)
    connector.run(TOTALS, max_rows=10, timeout_s=5)
    connector.run(TOTALS, max_rows=10, timeout_s=5)
    assert len(api.runs()) == 2
    assert all(j.startswith("querybot_") for j in api.runs())
    assert api.runs()[0] != api.runs()[1]


def test_repeated_approval_reads_the_first_job(api: FakeBigQuery) -> None:
    """A second replica (its own connector) handling the same approval runs nothing."""
    api.answer(TOTALS, TOTALS_ANSWER)
    first = BigQueryConnector("proj", datasets=["sales"], client=api.client())
    second = BigQueryConnector("proj", datasets=["sales"], client=api.client())
    context = RunContext(job_key="approval-7")
    one = first.run(TOTALS, max_rows=10, timeout_s=5, context=context)
    two = second.run(TOTALS, max_rows=10, timeout_s=5, context=context)
    assert api.runs() == ["querybot_approval-7"]
    assert (one.rows, one.total_rows, one.job_url) == (two.rows, two.total_rows, two.job_url)
    assert [b["jobReference"]["jobId"] for b in api.inserts()] == ["querybot_approval-7"] * 2


def test_doubled_approval_at_the_same_moment_runs_once(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    api.answer(TOTALS, TOTALS_ANSWER)
    start = threading.Barrier(4)
    results, errors = [], []

    def approve() -> None:
        start.wait()
        try:
            results.append(
                connector.run(TOTALS, max_rows=10, timeout_s=10, context=RunContext(job_key="dup"))
            )
        except ConnectorError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=approve) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert api.runs() == ["querybot_dup"]
    assert [r.rows for r in results] == [TOTALS_ANSWER.rows] * 4


def test_lost_insert_response_is_retried_without_a_second_run(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    """The client retries jobs.insert after a 503; BigQuery answers 409 for the job it made."""
    api.answer(TOTALS, TOTALS_ANSWER)
    api.drop_next_insert_response = True
    result = connector.run(TOTALS, max_rows=10, timeout_s=30, context=RunContext(job_key="r1"))
    assert result.rows == TOTALS_ANSWER.rows
    assert api.runs() == ["querybot_r1"]
    assert len([b for b in api.inserts() if b["jobReference"]["jobId"] == "querybot_r1"]) == 2


def test_job_key_reused_for_other_sql_is_not_run(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    other = "SELECT region FROM sales.orders WHERE placed_on = '2026-02-01'"
    api.answer(TOTALS, TOTALS_ANSWER)
    api.answer(other, Answer(schema=[("region", "STRING")], rows=[("EU",)]))
    connector.run(TOTALS, max_rows=10, timeout_s=5, context=RunContext(job_key="same"))
    with pytest.raises(ConnectorError, match="already exists for a different statement"):
        connector.run(other, max_rows=10, timeout_s=5, context=RunContext(job_key="same"))
    assert api.runs() == ["querybot_same"]


def test_rows_are_read_page_by_page_up_to_the_cap(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    sql = "SELECT id FROM sales.orders WHERE placed_on > '2020-01-01'"
    api.answer(sql, Answer(schema=[("id", "INTEGER")], rows=[(i,) for i in range(12_000)]))
    result = connector.run(sql, max_rows=10_500, timeout_s=30, context=RunContext(job_key="p"))
    assert len(result.rows) == 10_500
    assert result.rows[-1] == (10_499,)
    assert result.total_rows == 12_000
    assert result.truncated
    pages = [c for c in api.calls if "/queries/" in c.path and c.params.get("maxResults") != "0"]
    assert len(pages) >= 3
    assert all(int(c.params["maxResults"]) <= 5_000 for c in pages)
    assert api.rows_served <= 10_500
    assert not any("COUNT" in q.upper() for q in queries(api))


def test_zero_rows_still_counts_the_total(api: FakeBigQuery, connector: BigQueryConnector) -> None:
    api.answer(TOTALS, TOTALS_ANSWER)
    result = connector.run(TOTALS, max_rows=0, timeout_s=5, context=RunContext(job_key="z"))
    assert (result.rows, result.total_rows) == ([], 2)


def test_negative_max_rows_is_a_bug(connector: BigQueryConnector) -> None:
    with pytest.raises(ValueError):
        connector.run(TOTALS, max_rows=-1, timeout_s=5)


@pytest.mark.parametrize(
    ("reason", "message", "kind"),
    [
        (
            "bytesBilledLimitExceeded",
            "Query exceeded limit for bytes billed: 1073741824.",
            BytesLimitExceeded,
        ),
        ("accessDenied", "Access Denied: Table proj:sales.orders", PermissionDenied),
        ("notFound", "Not found: Table proj:sales.order", QueryFailed),
        (
            "quotaExceeded",
            "Quota exceeded: Your project exceeded quota for free query bytes",
            QuotaExceeded,
        ),
        ("timeout", "Query timed out after 20 s.", QueryTimeout),
        ("invalidQuery", "Division by zero: 1 / 0", QueryFailed),
    ],
)
def test_job_failures_become_clear_errors(
    reason: str,
    message: str,
    kind: type[ConnectorError],
    api: FakeBigQuery,
    connector: BigQueryConnector,
) -> None:
    api.answer(TOTALS, Answer(job_error=(reason, message)))
    with pytest.raises(kind) as caught:
        connector.run(TOTALS, max_rows=10, timeout_s=20, context=RunContext(job_key=reason))
    error = caught.value
    assert error.message and "Job ID" not in error.message
    if kind is not QueryTimeout:
        assert error.engine_message == f"{reason}: {message}"


def test_client_side_timeout_cancels_the_job(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    api.answer(TOTALS, Answer(running=True))
    with pytest.raises(QueryTimeout):
        connector.run(TOTALS, max_rows=10, timeout_s=0.3, context=RunContext(job_key="slow"))
    assert any(c.path.endswith("/jobs/querybot_slow/cancel") for c in api.calls)


def test_cancel_stops_the_running_job(api: FakeBigQuery, connector: BigQueryConnector) -> None:
    api.answer(TOTALS, Answer(running=True))
    with ThreadPoolExecutor(max_workers=1) as pool:
        running = pool.submit(
            connector.run, TOTALS, max_rows=10, timeout_s=600, context=RunContext(job_key="p1")
        )
        while "querybot_p1" not in api.runs():  # the job exists: the run waits for its results
            assert not running.done(), running.result()
        assert connector.cancel("p1")
        with pytest.raises(QueryCancelled) as caught:
            running.result(timeout=60)  # a guard only: the fake job never finishes by itself
    assert not caught.value.retryable_by_repair
    assert [c.path for c in api.calls if c.path.endswith("/cancel")] == [
        "/projects/proj/jobs/querybot_p1/cancel"
    ]
    assert not connector.cancel("p1"), "the run is over"


def test_cancel_of_an_unknown_or_finished_run_stops_nothing(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    assert not connector.cancel("never-started")
    api.answer(TOTALS, TOTALS_ANSWER)
    connector.run(TOTALS, max_rows=10, timeout_s=20, context=RunContext(job_key="done"))
    assert not connector.cancel("done")
    assert not [c for c in api.calls if c.path.endswith("/cancel")]


@pytest.mark.slow
def test_unreachable_api_is_unavailable() -> None:
    from connectors.bigquery.connector import endpoint_client

    connector = BigQueryConnector(
        "proj",
        datasets=["sales"],
        job_timeout_s=1,
        client=endpoint_client("proj", "http://127.0.0.1:9"),
    )
    with pytest.raises(WarehouseUnavailable):
        connector.list_tables()


# -- configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"project": "Bad Project", "datasets": ["sales"]},
        {"project": "proj", "datasets": []},
        {"project": "proj", "datasets": ["sales`; DROP"]},
        {"project": "proj", "datasets": ["sales"], "maximum_bytes_billed": 0},
        {"project": "proj", "datasets": ["sales"], "job_timeout_s": 0},
    ],
)
def test_bad_configuration_is_refused(kwargs: dict, api: FakeBigQuery) -> None:
    with pytest.raises(ValueError):
        BigQueryConnector(**kwargs, client=api.client())


def test_datasets_in_other_projects(api: FakeBigQuery) -> None:
    connector = BigQueryConnector(
        "proj", datasets=["sales", "shared-data.ref"], client=api.client()
    )
    assert connector.datasets == [("proj", "sales"), ("shared-data", "ref")]


def test_missing_key_file_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(WarehouseUnavailable) as caught:
        BigQueryConnector(
            "proj", datasets=["sales"], credentials_path=str(tmp_path / "missing.json")
        )
    assert "GOOGLE_APPLICATION_CREDENTIALS" in caught.value.hint


def test_malformed_key_file_is_unavailable(tmp_path: Path) -> None:
    key = tmp_path / "key.json"
    key.write_text('{"type": "service_account"}')
    with pytest.raises(WarehouseUnavailable, match="credentials"):
        BigQueryConnector("proj", datasets=["sales"], credentials_path=str(key))


def test_no_default_credentials_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(WarehouseUnavailable, match="credentials"):
        BigQueryConnector("proj", datasets=["sales"])
