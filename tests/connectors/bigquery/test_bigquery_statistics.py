"""BigQuery keeps no column statistics, only row counts: they come from each dataset's
`__TABLES__` (metadata, billed nothing), and the value scans that follow read text columns only.
On the scripted API: the emulator has no `__TABLES__`."""

from __future__ import annotations

from agent.catalog.snapshot import Catalog
from connectors.base import TableProfile
from connectors.bigquery.connector import BigQueryConnector
from connectors.bigquery.metadata import row_counts_sql
from tests.support.bigquery_fake_api import Answer, FakeBigQuery

COUNTS = [("table_id", "STRING"), ("row_count", "INTEGER")]


def test_row_counts_come_from_each_datasets_tables_metadata(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    api.answer(row_counts_sql("proj", "sales"), Answer(COUNTS, [("orders", 1200), ("events", 50)]))
    api.answer(row_counts_sql("proj", "archive"), Answer(COUNTS, [("orders", 7)]))
    stats = connector.statistics(connector.list_tables(), values=50)
    assert stats == {
        "proj.sales.orders": TableProfile(1200),
        "proj.sales.events": TableProfile(50),
        "proj.archive.orders": TableProfile(7),
    }


def test_with_the_row_count_known_a_scan_reads_only_the_text_columns(
    api: FakeBigQuery, connector: BigQueryConnector
) -> None:
    api.answer(row_counts_sql("proj", "sales"), Answer(COUNTS, [("orders", 1200)]))
    api.answer(row_counts_sql("proj", "archive"), Answer(COUNTS, []))
    Catalog(connector).refresh()  # the fake answers no scan: each fails and is skipped
    sent = [body["configuration"]["query"]["query"] for body in api.inserts()]
    [orders] = [sql for sql in sent if "COUNT(*)" in sql and "proj.sales.orders " in sql]
    assert "region" in orders and "placed_on" not in orders and "`id`" not in orders
    [archived] = [sql for sql in sent if "COUNT(*)" in sql and "proj.archive.orders " in sql]
    assert "`id`" in archived  # no row count kept: every column counted, as before
