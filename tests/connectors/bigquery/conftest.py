"""BigQuery fixtures: a scripted REST API for unit tests, and the bqemulator for integration.

The emulator starts once per session, only when a test asks for it. When it cannot start, its
tests fail under CI (CI=true) and are skipped elsewhere, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from google.cloud import bigquery

from connectors.bigquery.connector import BigQueryConnector, endpoint_client
from connectors.bigquery.metadata import metadata_sql
from tests.support.bigquery_emulator import Emulator, ensure_venv
from tests.support.bigquery_fake_api import FakeBigQuery, metadata_rows
from tests.support.side_venv import cache_dir, serving

EMULATOR_PROJECT = "demo"


# -- the scripted API ---------------------------------------------------------------------------

#: The `sales` dataset of the scripted API, in the metadata query's order: an ingestion-time
#: partitioned table, a DATE-partitioned clustered table with nested fields and descriptions,
#: and a view.
SALES_METADATA = [
    {
        "table_name": "events",
        "column_name": "_PARTITIONTIME",
        "ordinal_position": None,
        "column_type": "TIMESTAMP",
        "is_partitioning_column": "YES",
    },
    {
        "table_name": "events",
        "column_name": "name",
        "ordinal_position": 1,
        "column_type": "STRING",
        "is_partitioning_column": "NO",
        "field_path": "name",
        "field_type": "STRING",
    },
    {
        "table_name": "orders",
        "table_description": '"One row per order"',
        "column_name": "id",
        "ordinal_position": 1,
        "column_type": "INT64",
        "is_partitioning_column": "NO",
        "field_path": "id",
        "field_type": "INT64",
        "description": "Order id",
    },
    {
        "table_name": "orders",
        "table_description": '"One row per order"',
        "column_name": "placed_on",
        "ordinal_position": 2,
        "column_type": "DATE",
        "is_partitioning_column": "YES",
        "field_path": "placed_on",
        "field_type": "DATE",
    },
    {
        "table_name": "orders",
        "table_description": '"One row per order"',
        "column_name": "region",
        "ordinal_position": 3,
        "column_type": "STRING",
        "is_partitioning_column": "NO",
        "clustering_ordinal_position": 1,
        "field_path": "region",
        "field_type": "STRING",
    },
    *[
        {
            "table_name": "orders",
            "table_description": '"One row per order"',
            "column_name": "customer",
            "ordinal_position": 4,
            "column_type": "STRUCT<name STRING, address STRUCT<city STRING>>",
            "is_partitioning_column": "NO",
            "field_path": path,
            "field_type": type_,
            "description": description,
        }
        for path, type_, description in [
            ("customer", "STRUCT<name STRING, address STRUCT<city STRING>>", "Who ordered"),
            ("customer.address", "STRUCT<city STRING>", None),
            ("customer.address.city", "STRING", "Shipping city"),
            ("customer.name", "STRING", None),
        ]
    ],
    {
        "table_name": "recent_orders",
        "column_name": "id",
        "ordinal_position": 1,
        "column_type": "INT64",
        "is_partitioning_column": "NO",
        "field_path": "id",
        "field_type": "INT64",
    },
]

#: A second dataset, with a table whose short name clashes with `sales.orders`.
ARCHIVE_METADATA = [
    {
        "table_name": "orders",
        "column_name": "id",
        "ordinal_position": 1,
        "column_type": "INT64",
        "is_partitioning_column": "NO",
        "field_path": "id",
        "field_type": "INT64",
    },
]


@pytest.fixture
def api() -> FakeBigQuery:
    """The scripted API, knowing the metadata of `proj.sales` and `proj.archive`."""
    fake = FakeBigQuery(project="proj", location="EU")
    fake.answer(metadata_sql("proj", "sales"), metadata_rows(SALES_METADATA))
    fake.answer(metadata_sql("proj", "archive"), metadata_rows(ARCHIVE_METADATA))
    return fake


@pytest.fixture
def connector(api: FakeBigQuery) -> Iterator[BigQueryConnector]:
    """A connector on the scripted API: datasets sales (default) and archive, a 1 GiB cap."""
    made = BigQueryConnector(
        "proj",
        datasets=["sales", "archive"],
        maximum_bytes_billed=1024**3,
        price_per_tib_usd=5.0,
        job_timeout_s=60,
        client=api.client(),
    )
    yield made
    made.close()


# -- the emulator -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    log = tmp_path_factory.mktemp("bqemulator") / "log"

    def start() -> Emulator:
        return Emulator(ensure_venv(cache_dir() / "bqemulator-venv"), log, EMULATOR_PROJECT)

    with serving(start, "The BigQuery emulator") as running:
        yield running


@pytest.fixture(scope="session")
def emulator_client(emulator: Emulator) -> Iterator[bigquery.Client]:
    client = endpoint_client(emulator.project, emulator.url)
    yield client
    client.close()
