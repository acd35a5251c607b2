"""The query the BigQueryConnector tests send to the scripted REST API (bigquery_fake_api.py),
its answer, and the SQL of the jobs the connector inserted."""

from __future__ import annotations

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
