"""The shop's metric queries compiled for PostgreSQL and run there: the shop's tables copied
into a scratch PostgreSQL database (its own login, read-only grants), DuckDB's semantic manifest
with each relation rewritten to the PostgreSQL name (`"database"."main"."fct_orders"`; dbt-postgres
is not installed here), MetricFlow's SQL through the gate and
querybot's read-only PostgreSQL connector; every number equals DuckDB's for the same query."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.catalog.snapshot import Catalog
from agent.gate import check_sql
from agent.semantic.artifacts import Artifacts, ProjectArtifacts
from agent.semantic.compile import MetricCompiler
from agent.semantic.metric_query import MetricQuery
from connectors import open_connector
from connectors.base import Connector
from connectors.duckdb.connector import DuckDBConnector
from tests.agent.semantic.metric_cases import CASES, parsed_against
from tests.support.needs import unavailable
from tests.support.shop_build import BuiltProject
from tests.support.sql_fixtures import bound_temp_files

pytestmark = pytest.mark.slow

SERVER = "127.0.0.1:5432"
TABLES = {
    "dim_customers": "customer_id INTEGER, customer_name TEXT, region TEXT, signup_date DATE",
    "fct_orders": "order_id INTEGER, customer_id INTEGER, ordered_at DATE, status TEXT, "
    "amount NUMERIC(10, 2)",
    "metricflow_time_spine": "date_day DATE",
}


def _admin(dbname: str) -> psycopg.Connection:
    try:
        return psycopg.connect(f"postgresql://postgres@{SERVER}/{dbname}", autocommit=True)
    except psycopg.OperationalError as exc:
        unavailable(f"PostgreSQL at {SERVER} is unreachable: {exc}")


@pytest.fixture(scope="module")
def postgres_shop(
    shop_warehouse: DuckDBConnector, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Connector]]:
    """A scratch database and login named `querybot_test_<hex>` holding the shop's tables in
    schema main; the login may only read them. Dropped afterwards."""
    name = f"querybot_test_{uuid.uuid4().hex[:10]}"
    with _admin("postgres") as server:
        server.execute(f"CREATE DATABASE {name}")
        server.execute(f"CREATE ROLE {name} LOGIN")
        bound_temp_files(server, name)
        try:
            with _admin(name) as admin:
                admin.execute("CREATE SCHEMA main")
                for table, columns in TABLES.items():
                    admin.execute(f"CREATE TABLE main.{table} ({columns})")
                    rows = shop_warehouse.run(
                        f"SELECT * FROM shop.main.{table}", max_rows=10_000, timeout_s=30
                    ).rows
                    marks = ", ".join(["%s"] * len(rows[0]))
                    with admin.cursor() as cursor:
                        cursor.executemany(f"INSERT INTO main.{table} VALUES ({marks})", rows)
                admin.execute(f"GRANT USAGE ON SCHEMA main TO {name}")
                admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA main TO {name}")
            connector = open_connector(
                f"postgresql://{name}@{SERVER}/{name}",
                data_dir=Path(tmp_path_factory.mktemp("pg")),
            )
            try:
                yield name, connector
            finally:
                connector.close()
        finally:
            server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            server.execute(f"DROP ROLE IF EXISTS {name}")


def _plain(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """Numbers rounded to cents, dates and times as their day: PostgreSQL's date_trunc gives a
    timestamp with time zone where DuckDB's gives one without."""
    out: list[Any] = []
    for value in row:
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            value = round(float(value), 2)
        elif isinstance(value, datetime.date):
            value = value.isoformat()[:10]
        out.append(value)
    return tuple(out)


@pytest.mark.parametrize(("fields", "rows"), CASES)
def test_postgres_gives_duckdbs_numbers(
    postgres_shop: tuple[str, Connector],
    shop_project: BuiltProject,
    shop_warehouse: DuckDBConnector,
    fields: dict[str, Any],
    rows: list[tuple[Any, ...]],
) -> None:
    name, postgres = postgres_shop
    artifacts: Artifacts = ProjectArtifacts(shop_project.target).current()
    assert artifacts.semantic is not None
    query = MetricQuery.model_validate(fields)
    results = []
    for connector, semantic in (
        (shop_warehouse, artifacts.semantic_json),
        (postgres, parsed_against(artifacts, f'"{name}"."main"."{{}}"')),
    ):
        catalog = Catalog(connector, profile=False)
        compiler = MetricCompiler(semantic, artifacts.semantic, connector.dialect, catalog.tables)
        verdict = check_sql(compiler.compile(query).sql, catalog.gate_schema)
        assert verdict.ok, (connector.dialect, verdict.reasons)
        result = connector.run(verdict.sql, max_rows=100, timeout_s=30)
        results.append([_plain(r) for r in result.rows])
    duckdb_rows, postgres_rows = results
    assert postgres_rows == duckdb_rows
    assert duckdb_rows == [_plain(r) for r in rows]  # and both are the numbers worked out by hand
