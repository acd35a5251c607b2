"""The BigQuery canary: the canary tables in a dataset on an endpoint without credentials."""

from __future__ import annotations

from connectors.base import Connector
from tests.support.canary_data import COLUMNS, ROWS, checksum

#: BigQuery column types for the canary's SQL types.
_BIGQUERY_TYPES = {"INTEGER": "INT64", "VARCHAR": "STRING", "DECIMAL": "NUMERIC", "DATE": "DATE"}


class BigQueryCanary:
    """Dataset `canary` holding the canary tables on a BigQuery endpoint without credentials
    (the local emulator, whose anonymous login may write anything: BigQuery has no read-only
    session, so only the connector's own checks stand in the way)."""

    def __init__(self, endpoint: str, project: str, dataset: str = "canary") -> None:
        from google.cloud import bigquery

        from connectors.bigquery.connector import endpoint_client

        self.endpoint, self.project, self.dataset = endpoint, project, dataset
        self.client = endpoint_client(project, endpoint)
        self.client.delete_dataset(dataset, delete_contents=True, not_found_ok=True)
        self.client.create_dataset(dataset)
        for table, cols in COLUMNS.items():
            ref = f"{project}.{dataset}.{table}"
            schema = [
                bigquery.SchemaField(name, _BIGQUERY_TYPES[kind.partition("(")[0]])
                for name, kind in cols
            ]
            self.client.create_table(bigquery.Table(ref, schema=schema))
            names = [name for name, _ in cols]
            rows = [dict(zip(names, row, strict=True)) for row in ROWS[table]]
            if errors := self.client.insert_rows_json(ref, rows):
                raise RuntimeError(f"loading {ref} failed: {errors}")

    def connector(self) -> Connector:
        """The connector a deployment configures as `bigquery:PROJECT/canary` with
        BIGQUERY_API_ENDPOINT pointing at the endpoint."""
        from connectors.bigquery.connector import from_spec
        from connectors.settings import BigQuerySettings

        settings = BigQuerySettings(bigquery_api_endpoint=self.endpoint)
        return from_spec(f"{self.project}/{self.dataset}", settings)

    def snapshot(self) -> dict[str, object]:
        """The project's datasets; the canary dataset's tables (kind, schema, rows), routines
        and models; and every table and database the emulator's DuckDB engine holds, since it
        keeps some the REST API never lists (`SELECT * INTO dataset.t ...` makes one)."""
        client = self.client
        tables = {}
        for item in client.list_tables(self.dataset):
            table = client.get_table(item)
            rows = (tuple(row.values()) for row in client.list_rows(table))
            schema = [(f.name, f.field_type) for f in table.schema]
            tables[item.table_id] = (table.table_type, schema, checksum(rows))
        engine = [
            tuple(row.values())
            for sql in (
                "SELECT schema_name, table_name, estimated_size FROM duckdb_tables()",
                "SELECT database_name, path FROM duckdb_databases()",
            )
            for row in client.query(sql).result()
        ]
        return {
            "datasets": sorted(d.dataset_id for d in client.list_datasets()),
            "tables": tables,
            "routines": sorted(r.routine_id for r in client.list_routines(self.dataset)),
            "models": sorted(m.model_id for m in client.list_models(self.dataset)),
            "engine": sorted(engine, key=repr),
        }

    def drop(self) -> None:
        self.client.delete_dataset(self.dataset, delete_contents=True, not_found_ok=True)
        self.client.close()
