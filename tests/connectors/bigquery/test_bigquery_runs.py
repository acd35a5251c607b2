"""BigQueryConnector over a scripted REST API, what the emulator cannot show: job
options and labels on the wire, job-id idempotency (a repeated, doubled or retried approval
runs once), paging up to the row cap, failures by reason, timeouts and cancels."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from connectors.base import (
    ConnectorError,
    PermissionDenied,
    QueryCancelled,
    QueryFailed,
    QueryTimeout,
    RunContext,
    WarehouseUnavailable,
)
from connectors.bigquery.connector import BigQueryConnector
from connectors.bigquery.errors import BytesLimitExceeded, QuotaExceeded
from tests.connectors.bigquery.scripted_queries import TOTALS, TOTALS_ANSWER, queries
from tests.support.bigquery_fake_api import Answer, FakeBigQuery


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
