"""The shop dbt project builds, its data tests pass, and it writes the artifacts querybot reads."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from connectors.duckdb.connector import DuckDBConnector
from tests.support.shop_build import BuiltProject

pytestmark = pytest.mark.slow  # dbt build and docs generate: about 12 s, once per session


def test_build_writes_both_manifests(shop_project: BuiltProject) -> None:
    manifest = json.loads((shop_project.target / "manifest.json").read_text())
    semantic = json.loads((shop_project.target / "semantic_manifest.json").read_text())
    models = {n["name"] for n in manifest["nodes"].values() if n["resource_type"] == "model"}
    assert models == {"dim_customers", "fct_orders", "metricflow_time_spine"}
    tests = [n for n in manifest["nodes"].values() if n["resource_type"] == "test"]
    assert {t["test_metadata"]["name"] for t in tests} >= {"accepted_values", "relationships"}
    metrics = {m["name"]: m["type"] for m in semantic["metrics"]}
    assert metrics["average_order_value"] == "ratio"
    assert metrics["net_revenue"] == "derived"
    assert semantic["project_configuration"]["time_spines"]


def test_docs_generate_writes_the_catalog(shop_project: BuiltProject) -> None:
    catalog = json.loads((shop_project.target / "catalog.json").read_text())
    orders = catalog["nodes"]["seed.shop.raw_orders"]
    assert orders["metadata"]["comment"] == "Orders as exported from the till."  # the post-hook's
    assert orders["columns"]["status"]["comment"] == "Order state at export time."


def test_built_tables_hold_the_seeds(shop_warehouse: DuckDBConnector) -> None:
    names = {t.name for t in shop_warehouse.list_tables()}
    assert {"shop.main.fct_orders", "shop.main.dim_customers"} <= names
    result = shop_warehouse.run(
        "SELECT COUNT(*), SUM(amount) FROM shop.main.fct_orders", max_rows=1, timeout_s=10
    )
    assert result.rows == [(12, Decimal("1025.00"))]
