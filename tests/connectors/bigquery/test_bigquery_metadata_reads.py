"""BigQueryConnector over a scripted REST API, what the emulator cannot show: tables,
columns and layouts read with one metadata query per dataset, cached for a while, and a
permission error said clearly."""

from __future__ import annotations

import pytest

from connectors.base import (
    PermissionDenied,
    QueryFailed,
)
from connectors.bigquery.connector import BigQueryConnector
from connectors.bigquery.metadata import metadata_sql
from tests.connectors.bigquery.scripted_queries import TOTALS, TOTALS_ANSWER
from tests.support.bigquery_fake_api import Answer, FakeBigQuery


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
