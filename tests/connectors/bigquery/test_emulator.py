"""BigQueryConnector against a real BigQuery REST endpoint: the local bqemulator.

What the emulator cannot show (byte counts, conflicts on a reused job id, labels kept on the
job, COLUMN_FIELD_PATHS) is covered over the scripted API in test_connector.py.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from google.cloud import bigquery

from connectors import open_connector
from connectors.base import PermissionDenied, QueryFailed, RunContext
from connectors.bigquery.connector import BigQueryConnector
from tests.support.bigquery_emulator import Emulator

pytestmark = pytest.mark.slow  # every test needs the emulator process

ORDERS = [
    {
        "id": i,
        "placed_at": f"2026-01-{i:02d}T10:00:00Z",
        "region": "EU" if i % 3 else "US",
        "amount": f"{i * 1.5:.2f}",
        "customer": {"name": f"c{i}", "city": "Lyon" if i % 2 else "Oslo"},
        "tags": ["gift"] if i % 4 == 0 else [],
    }
    for i in range(1, 26)
]


@pytest.fixture(scope="module")
def shop(emulator_client: bigquery.Client) -> str:
    """Dataset `shop`: a partitioned, clustered, described table with nested fields, a view."""
    client = emulator_client
    client.create_dataset("shop", exists_ok=True)
    table = bigquery.Table(
        f"{client.project}.shop.orders",
        schema=[
            bigquery.SchemaField("id", "INT64"),
            bigquery.SchemaField("placed_at", "TIMESTAMP"),
            bigquery.SchemaField("region", "STRING"),
            bigquery.SchemaField("amount", "NUMERIC"),
            bigquery.SchemaField(
                "customer",
                "RECORD",
                fields=[
                    bigquery.SchemaField("name", "STRING"),
                    bigquery.SchemaField("city", "STRING"),
                ],
            ),
            bigquery.SchemaField("tags", "STRING", mode="REPEATED"),
        ],
    )
    table.description = "One row per order"
    table.time_partitioning = bigquery.TimePartitioning(field="placed_at")
    table.clustering_fields = ["region"]
    client.create_table(table)
    assert client.insert_rows_json(table, ORDERS) == []
    view = bigquery.Table(f"{client.project}.shop.eu_orders")
    view.view_query = f"SELECT id, amount FROM `{client.project}.shop.orders` WHERE region = 'EU'"
    client.create_table(view)
    return "shop"


@pytest.fixture
def connector(emulator_client: bigquery.Client, shop: str) -> Iterator[BigQueryConnector]:
    made = BigQueryConnector(emulator_client.project, datasets=[shop], client=emulator_client)
    yield made


def test_metadata_from_information_schema(connector: BigQueryConnector) -> None:
    tables = {t.name: t for t in connector.list_tables()}
    assert set(tables) == {"demo.shop.orders", "demo.shop.eu_orders"}
    orders = tables["demo.shop.orders"]
    assert orders.description == (
        "One row per order. Partitioned by placed_at: filter on it to read less. "
        "Clustered by region."
    )
    assert [(c.name, c.type) for c in orders.columns] == [
        ("id", "INT64"),
        ("placed_at", "TIMESTAMP"),
        ("region", "STRING"),
        ("amount", "NUMERIC"),
        ("customer", "STRUCT<name STRING, city STRING>"),
        ("tags", "ARRAY<STRING>"),
    ]
    # The emulator's COLUMNS view has no rows for views (BigQuery's has), so only its name.
    assert connector.describe("eu_orders").name == "demo.shop.eu_orders"


def test_metadata_is_cached_until_the_ttl(
    emulator_client: bigquery.Client, connector: BigQueryConnector
) -> None:
    fresh = BigQueryConnector("demo", datasets=["shop"], metadata_ttl_s=0, client=emulator_client)
    before = len(connector.list_tables())
    assert len(fresh.list_tables()) == before
    emulator_client.create_table(
        bigquery.Table("demo.shop.notes", schema=[bigquery.SchemaField("note", "STRING")])
    )
    try:
        assert len(connector.list_tables()) == before
        assert "demo.shop.notes" in {t.name for t in fresh.list_tables()}
    finally:
        emulator_client.delete_table("demo.shop.notes")


def test_estimate_is_a_dry_run_with_partition_advice(connector: BigQueryConnector) -> None:
    unfiltered = connector.estimate("SELECT region, SUM(amount) FROM shop.orders GROUP BY region")
    assert unfiltered.warnings == (
        "demo.shop.orders is partitioned by placed_at, and this query does not filter on it, "
        "so it reads every partition.",
    )
    assert unfiltered.refusal == ""
    filtered = connector.estimate(
        "SELECT id FROM `demo.shop.orders` WHERE placed_at >= TIMESTAMP '2026-01-20'"
    )
    assert filtered.warnings == ()
    # The emulator's dry runs report 0 bytes; real byte counts are in test_connector.py.
    assert (filtered.bytes_processed, filtered.cost_usd) == (0, 0.0)


def test_run_caps_rows_counts_all_and_keeps_types(
    emulator_client: bigquery.Client, connector: BigQueryConnector
) -> None:
    sql = (
        "SELECT id, placed_at, amount, customer, tags FROM shop.orders "
        "WHERE placed_at >= TIMESTAMP '2026-01-05' ORDER BY id"
    )
    context = RunContext(job_key="emulated1", labels={"requester": "U1", "approver": "U2"})
    result = connector.run(sql, max_rows=4, timeout_s=30, context=context)
    assert result.total_rows == 21
    assert result.truncated
    assert result.columns == ["id", "placed_at", "amount", "customer", "tags"]
    assert result.column_types == ["INT64", "TIMESTAMP", "NUMERIC", "STRUCT", "ARRAY<STRING>"]
    first = result.rows[0]
    assert len(result.rows) == 4
    assert first[0] == 5
    assert first[1] == dt.datetime(2026, 1, 5, 10, tzinfo=dt.UTC)
    assert first[2] == Decimal("7.5")
    assert first[3] == {"name": "c5", "city": "Lyon"}
    assert result.rows[3][4] == ["gift"]
    assert result.job_url is not None and "querybot_emulated1" in result.job_url
    assert emulator_client.get_job("querybot_emulated1").query.endswith("ORDER BY id")


def test_unqualified_names_use_the_default_dataset(connector: BigQueryConnector) -> None:
    result = connector.run("SELECT COUNT(*) FROM eu_orders", max_rows=1, timeout_s=30)
    assert result.rows == [(sum(1 for o in ORDERS if o["region"] == "EU"),)]


def test_engine_errors_reach_repair_with_their_reason(connector: BigQueryConnector) -> None:
    with pytest.raises(QueryFailed) as caught:
        connector.estimate("SELECT nope FROM shop.orders")
    assert caught.value.retryable_by_repair
    assert caught.value.engine_message.startswith("invalidQuery: ")
    with pytest.raises(QueryFailed) as caught:
        connector.run("SELECT * FROM shop.order", max_rows=5, timeout_s=30)
    assert caught.value.engine_message.startswith("notFound: ")
    assert "shop.order" in caught.value.message


def test_datasets_outside_the_allow_list_are_refused(
    emulator_client: bigquery.Client, connector: BigQueryConnector
) -> None:
    emulator_client.create_dataset("hr", exists_ok=True)
    emulator_client.create_table(
        bigquery.Table("demo.hr.salaries", schema=[bigquery.SchemaField("pay", "INT64")]),
        exists_ok=True,
    )
    with pytest.raises(PermissionDenied, match=r"demo\.hr\.salaries"):
        connector.run("SELECT * FROM hr.salaries", max_rows=5, timeout_s=30)


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE shop.written (x INT64)",
        "INSERT INTO shop.orders (id) VALUES (-1)",
        "DROP TABLE shop.orders",
        "DECLARE x INT64 DEFAULT 1",
    ],
)
def test_run_refuses_what_is_not_a_query(
    emulator_client: bigquery.Client, connector: BigQueryConnector, shop: str, sql: str
) -> None:
    # the emulator has no IAM, so only the connector's own check stands between these and it
    before = {
        t.table_id: t.num_rows
        for t in map(emulator_client.get_table, _tables(emulator_client, shop))
    }
    with pytest.raises(PermissionDenied, match="Only a query may run on BigQuery"):
        connector.run(sql, max_rows=5, timeout_s=30)
    after = {
        t.table_id: t.num_rows
        for t in map(emulator_client.get_table, _tables(emulator_client, shop))
    }
    assert after == before


def _tables(client: bigquery.Client, dataset: str) -> list[str]:
    return [f"{t.project}.{t.dataset_id}.{t.table_id}" for t in client.list_tables(dataset)]


def test_factory_reaches_the_emulator(
    emulator: Emulator, shop: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BIGQUERY_API_ENDPOINT", emulator.url)
    connector = open_connector(f"bigquery:{emulator.project}/{shop}", data_dir=tmp_path)
    try:
        assert connector.run("SELECT COUNT(*) FROM orders", max_rows=1, timeout_s=30).rows == [
            (len(ORDERS),)
        ]
    finally:
        connector.close()
