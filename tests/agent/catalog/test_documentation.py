"""A dbt project's manifest as context: descriptions, value lists and join keys reach the prompt,
grounding and retrieval through the catalog (agent/catalog/documentation.py, agent/semantic/)."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent.catalog.documentation import Documentation
from agent.catalog.grounding import check_values
from agent.catalog.retrieval import TableIndex
from agent.catalog.snapshot import Catalog, CatalogSnapshot
from agent.model.question_context import ContextBuilder
from agent.semantic.artifacts import DbtProjectError, ProjectArtifacts, find_target
from agent.semantic.dbt_catalog import add_catalog
from agent.semantic.dbt_manifest import read_manifest
from bot.config import WarehouseError
from bot.settings import Settings
from bot.wiring import Deployment
from connectors.base import ColumnInfo, TableInfo
from connectors.duckdb.connector import DuckDBConnector
from tests.support.shop_build import BuiltProject


def _test(name: str, model: str, column: str, **kwargs: Any) -> dict[str, Any]:
    return {
        "resource_type": "test",
        "attached_node": f"model.p.{model}",
        "column_name": column,
        "test_metadata": {"name": name, "kwargs": {"column_name": column, **kwargs}},
    }


MANIFEST = {
    "metadata": {"project_name": "p"},
    "nodes": {
        "model.p.orders": {
            "resource_type": "model",
            "name": "orders",
            "relation_name": '"wh"."sales"."orders_v2"',
            "description": "One row per order.",
            "meta": {"owner": "sales"},
            "columns": {
                "status": {"name": "status", "description": "Where it is."},
                "amount": {"name": "amount", "description": "Paid.", "meta": {"unit": "EUR"}},
            },
        },
        "model.p.customers": {
            "resource_type": "model",
            "name": "customers",
            "relation_name": '"wh"."sales"."customers"',
            "description": "",
            "columns": {},
        },
        "test.p.a": _test("accepted_values", "orders", "status", values=["open", "closed"]),
        "test.p.b": _test(
            "relationships", "orders", "customer_id", to="ref('customers')", field="id"
        ),
        "test.p.c": _test(
            "relationships", "orders", "region_code", to="source('erp', 'regions')", field="code"
        ),
        "test.p.d": _test("unique", "orders", "id"),
    },
    "sources": {
        "source.p.erp.regions": {
            "resource_type": "source",
            "source_name": "erp",
            "name": "regions",
            "relation_name": '"wh"."erp"."regions"',
            "description": "Regions from the ERP.",
            "columns": {},
        }
    },
}

ORDERS = TableInfo(
    "wh.sales.orders_v2",
    (
        ColumnInfo("id", "INTEGER"),
        ColumnInfo("status", "VARCHAR", "engine comment"),
        ColumnInfo("amount", "DECIMAL(10,2)"),
        ColumnInfo("customer_id", "INTEGER"),
    ),
)


def test_the_manifest_gives_descriptions_values_meta_and_join_keys() -> None:
    docs = read_manifest(MANIFEST, source="dbt project p")
    orders = docs.table("wh.sales.orders_v2")
    assert orders is not None
    assert orders.model == "orders"  # the model's name, since the relation is named otherwise
    assert orders.columns["status"].values == ("open", "closed")
    assert orders.columns["amount"].meta == (("unit", "EUR"),)
    joins = {(j.table, j.column, j.other, j.other_column) for j in docs.joins}
    assert joins == {
        ('"wh"."sales"."orders_v2"', "customer_id", '"wh"."sales"."customers"', "id"),
        ('"wh"."sales"."orders_v2"', "region_code", '"wh"."erp"."regions"', "code"),
    }


def test_relations_match_the_warehouse_names_with_or_without_the_database() -> None:
    docs = read_manifest(MANIFEST)
    assert docs.key_for("wh.sales.orders_v2") == "wh.sales.orders_v2"
    assert docs.key_for("sales.orders_v2") == "wh.sales.orders_v2"  # a connector without it
    assert docs.key_for("ORDERS_V2") == "wh.sales.orders_v2"
    assert docs.key_for("other.orders") is None


def test_annotate_puts_the_projects_words_on_the_tables() -> None:
    (orders,) = read_manifest(MANIFEST).annotate([ORDERS])
    assert orders.description == "One row per order. (dbt model orders) (owner: sales)"
    columns = {c.name: c.description for c in orders.columns}
    assert columns["status"] == "Where it is."  # the project's words win
    assert columns["amount"] == "Paid. (unit: EUR)"
    assert columns["id"] == ""


def test_a_documented_value_list_answers_for_an_unprofiled_column() -> None:
    docs = read_manifest(MANIFEST)
    snapshot = CatalogSnapshot(docs.annotate([ORDERS]), "duckdb", documentation=docs)
    profile = snapshot.column_profile("wh.sales.orders_v2", "STATUS")
    assert profile is not None and profile.complete and profile.values == ("open", "closed")
    assert snapshot.column_profile("wh.sales.orders_v2", "amount") is None
    assert CatalogSnapshot((ORDERS,), "duckdb").column_profile(ORDERS.name, "status") is None


def test_a_folder_without_a_manifest_says_to_run_dbt_parse(tmp_path: Path) -> None:
    with pytest.raises(DbtProjectError, match="dbt parse"):
        find_target(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(DbtProjectError, match="Cannot read"):
        ProjectArtifacts(tmp_path)


CATALOG = {
    "nodes": {
        "model.p.orders": {
            "metadata": {"database": "wh", "schema": "sales", "name": "orders_v2",
                         "comment": "Engine comment on orders."},
            "columns": {"status": {"name": "status", "comment": "engine says status"},
                        "customer_id": {"name": "customer_id", "comment": "Who ordered."}},
            "stats": {"num_rows": {"id": "num_rows", "value": 1234, "include": True},
                      "has_stats": {"id": "has_stats", "value": True}},
        },
        "seed.p.rates": {
            "metadata": {"database": "wh", "schema": "sales", "name": "rates", "comment": None},
            "columns": {"rate": {"name": "rate", "comment": "EUR per unit."}},
            "stats": {"row_count": {"id": "row_count", "value": "7"}},
        },
    },
    "sources": {},
}  # fmt: skip


def test_the_catalog_adds_engine_comments_and_row_counts_where_the_project_is_silent() -> None:
    """The project's words win; the warehouse's comments fill the gaps; BigQuery's `num_rows`
    and Snowflake's `row_count` give the rows."""
    docs = add_catalog(read_manifest(MANIFEST), CATALOG)
    orders = docs.table("wh.sales.orders_v2")
    assert orders is not None
    assert orders.description == "One row per order."  # the manifest's, not the comment
    assert orders.columns["status"].description == "Where it is."
    assert orders.columns["status"].values == ("open", "closed")  # the tests' lists are kept
    assert orders.columns["customer_id"].description == "Who ordered."
    assert orders.row_count == 1234
    rates = docs.table("wh.sales.rates")  # in the catalog only
    assert rates is not None and rates.row_count == 7
    assert rates.columns["rate"].description == "EUR per unit."
    (annotated,) = docs.annotate([ORDERS])
    assert annotated.row_count == 1234  # the connector gave none
    assert {c.name: c.description for c in annotated.columns}["customer_id"] == "Who ordered."
    counted = replace(ORDERS, row_count=99)
    assert docs.annotate([counted])[0].row_count == 99  # the connector's own count wins


# --- on the shop project, built by dbt -------------------------------------------------------


@pytest.fixture
def shop_catalog(shop_project: BuiltProject, shop_warehouse: DuckDBConnector) -> Catalog:
    """Values not profiled: what the prompt and grounding know of values is the project's."""
    project = ProjectArtifacts(shop_project.target)
    return Catalog(shop_warehouse, profile=False, documentation=project.documentation)


@pytest.mark.slow
def test_the_prompt_shows_descriptions_value_lists_and_join_keys(shop_catalog: Catalog) -> None:
    context = ContextBuilder().build("revenue by customer region", shop_catalog.snapshot())
    text = context.text
    assert "-- One row per order, with its amount and status." in text
    assert "status VARCHAR, -- Where the order is: `placed`" in text  # a docs block, rendered
    assert "(values: 'placed', 'shipped', 'returned')" in text
    assert "(values: 'EU', 'NA', 'APAC')" in text
    assert "customer_id INTEGER, -- The customer who placed the order. (joins dim_customers." in (
        text
    )
    assert "(unit: EUR)" in text  # a column's meta
    assert "-- One row per customer of the shop. (owner: sales-analytics)" in text  # a model's


@pytest.mark.slow
def test_comments_only_the_warehouse_holds_come_from_the_catalog(
    shop_project: BuiltProject, shop_warehouse: DuckDBConnector, tmp_path: Path
) -> None:
    """raw_orders has no description in the project; its COMMENT ON (a post-hook) is in
    catalog.json, so even a connector that cannot read comments shows it."""
    (table,) = [t for t in shop_warehouse.list_tables() if t.short_name == "raw_orders"]
    columns = tuple(replace(c, description="") for c in table.columns)
    bare = replace(table, description="", columns=columns)  # a connector reading no comments
    docs = ProjectArtifacts(shop_project.target).documentation()
    (annotated,) = docs.annotate([bare])
    assert annotated.description == "Orders as exported from the till."
    assert {c.name: c.description for c in annotated.columns}["status"] == (
        "Order state at export time."
    )
    shutil.copytree(shop_project.target, tmp_path / "target", ignore=lambda *_: ["catalog.json"])
    (plain,) = ProjectArtifacts(tmp_path / "target").documentation().annotate([bare])
    assert plain.description == ""  # without catalog.json, nothing says it


@pytest.mark.slow
def test_grounding_suggests_a_documented_value(shop_catalog: Catalog) -> None:
    sql = "SELECT SUM(amount) FROM shop.main.fct_orders WHERE status = 'Returned'"
    (miss,) = check_values(sql, shop_catalog.snapshot())
    assert miss.suggestions == ("returned",)
    assert check_values(sql.replace("Returned", "returned"), shop_catalog.snapshot()) == []


def test_documented_join_keys_make_join_neighbours() -> None:
    """`orders.buyer` -> `people.pid`: nothing in the names says they join; the project does."""
    orders = TableInfo(
        "wh.sales.orders", (ColumnInfo("buyer", "INTEGER"), ColumnInfo("total", "INT"))
    )
    people = TableInfo("wh.crm.people", (ColumnInfo("pid", "INTEGER"), ColumnInfo("town", "TEXT")))
    others = [TableInfo(f"wh.misc.t{i}", (ColumnInfo(f"c{i}", "INT"),)) for i in range(3)]
    tables = (orders, people, *others)
    manifest = {
        "nodes": {
            "model.p.orders": {"resource_type": "model", "name": "orders",
                               "relation_name": "wh.sales.orders", "columns": {}},
            "model.p.people": {"resource_type": "model", "name": "people",
                               "relation_name": "wh.crm.people", "columns": {}},
            "test.p.r": {"resource_type": "test", "attached_node": "model.p.orders",
                         "test_metadata": {"name": "relationships", "kwargs": {
                             "column_name": "buyer", "to": "ref('people')", "field": "pid"}}},
        }
    }  # fmt: skip
    docs = read_manifest(manifest)
    documented = TableIndex(CatalogSnapshot(tables, "duckdb", documentation=docs))
    ranked = documented.rank("order total", top=1, limit=3)
    assert [(r.table.short_name, r.reason) for r in ranked] == [
        ("orders", "match"),
        ("people", "join"),
    ]
    bare = TableIndex(CatalogSnapshot(tables, "duckdb")).rank("order total", top=1, limit=3)
    assert [r.table.short_name for r in bare] == ["orders"]
    # the prompt names the key too
    text = (
        ContextBuilder()
        .build("order total", CatalogSnapshot(tables, "duckdb", documentation=docs))
        .text
    )
    assert "buyer INTEGER, -- (joins people.pid)" in text


@pytest.mark.slow
def test_new_artifacts_are_read_when_the_files_change(
    shop_project: BuiltProject, shop_warehouse: DuckDBConnector, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    shutil.copytree(shop_project.target, target)
    project = ProjectArtifacts(target)
    catalog = Catalog(shop_warehouse, profile=False, documentation=project.documentation)
    first = catalog.snapshot()
    assert catalog.snapshot() is first  # unchanged files: the same snapshot
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["nodes"]["model.shop.fct_orders"]["description"] = "Orders, as of today."
    (target / "manifest.json").write_text(json.dumps(manifest))
    stat = (target / "manifest.json").stat()
    os.utime(target / "manifest.json", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    second = catalog.snapshot()
    assert second is not first
    assert second.by_key["shop.main.fct_orders"].description == "Orders, as of today."
    (target / "manifest.json").write_text("{half written")  # dbt writing it now
    os.utime(target / "manifest.json", ns=(stat.st_atime_ns, stat.st_mtime_ns + 2 * 10**9))
    assert catalog.snapshot().documentation == second.documentation  # the last good one kept


def test_no_documentation_is_empty() -> None:
    assert not Documentation()


@pytest.mark.slow
def test_a_deployment_reads_the_warehouses_dbt_project(
    shop_project: BuiltProject, tmp_path: Path
) -> None:
    """QUERYBOT_DBT_PROJECT reaches the warehouse's catalog; a bad path stops the warehouse."""
    script = tmp_path / "s.jsonl"
    script.write_text('"unused"\n')
    env = {
        "QUERYBOT_MODEL": f"scripted:{script}",
        "QUERYBOT_DATA_DIR": str(tmp_path / "data"),
        "QUERYBOT_PROFILE_VALUES": "off",
        "QUERYBOT_WAREHOUSE": f"duckdb:{shop_project.database}",
        "QUERYBOT_DBT_PROJECT": str(shop_project.target),
    }
    deployment = Deployment(Settings.from_env(env, dotenv=False), env={})
    try:
        agent = deployment.open_warehouse(deployment.config.pick(None))
        snapshot = agent.deps.catalog.snapshot()
        assert snapshot.by_key["shop.main.dim_customers"].description.startswith("One row per")
        assert snapshot.column_profile("shop.main.dim_customers", "region") is not None
    finally:
        deployment.close()
    env["QUERYBOT_DBT_PROJECT"] = str(tmp_path / "nowhere")
    deployment = Deployment(Settings.from_env(env, dotenv=False), env={})
    try:
        with pytest.raises(WarehouseError, match=r"dbt project: No manifest\.json"):
            deployment.open_warehouse(deployment.config.pick(None))
    finally:
        deployment.close()
